"""Who is asking: the local user, or (accounts mode) a token or a signed-in browser.

Accounts mode is on when the settings ask for it (``--auth accounts``), when
the server is not bound to loopback, or as soon as one account exists. In it,
every GraphQL request carries ``Authorization: Bearer smr_…`` or the session
cookie set by ``POST /auth/login``. A browser's POST also has to come from a
page of this server (its Origin is the Host it asks): no CORS is granted.

``Authenticate`` is the one place a request's caller is found: the middleware
in front of /graphql, /mcp and /auth/me resolves it once, before the
endpoint runs, and leaves it in the request's state (``caller_of``); each
endpoint then answers a caller it refuses in its own words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..domain.accounts import TOKEN_PREFIX, Actor, Credential, bearer_secret
from ..errors import InputError, RateLimited
from ..services import accounts
from ..services.connections import Connections
from ..settings import Settings

COOKIE = "smriti_session"
MAX_LOGIN_BODY = 4096
# Where the middleware leaves the caller, in the request scope's state.
CALLER = "caller"


@dataclass(frozen=True)
class Caller:
    """Who is asking, as the middleware found it before the endpoint ran."""

    # Whether requests must authenticate (accounts mode).
    accounts: bool
    # Local mode: the local user. Accounts mode: whom the credential stands
    # for now, or None (no credential, or one that no longer holds).
    actor: Actor | None
    # What ``actor`` was found from; None in local mode or without an actor.
    credential: Credential | None

    @property
    def by_cookie(self) -> bool:
        return self.credential is not None and self.credential.kind == "cookie"


class Authenticator:
    def __init__(self, settings: Settings, connections: Connections) -> None:
        self.settings = settings
        # What this worker has open: a sign-out here ends it at once.
        self.connections = connections
        self.idle = timedelta(seconds=settings.session_idle_seconds)
        self.limits = settings.sign_in_limits
        # Once on, accounts mode stays on: accounts are disabled, never deleted.
        self._accounts = settings.auth == "accounts" or not settings.bound_to_loopback
        self._known = False  # whether the database has been asked yet
        self._local: Actor | None = None

    async def accounts_mode(
        self, connection: HTTPConnection | None = None, *, look: bool = False
    ) -> bool:
        """Whether requests must authenticate.

        The database is asked once at the first request, and again whenever a
        request carries credentials (a bearer token or a session cookie) or is a
        sign-in: an account made with `smriti users add` while a loopback server
        runs turns accounts on at its first use, or at the next start. A request
        without credentials costs no query in local mode (the statement budgets of
        tests/api hold), and a server bound beyond loopback is always in accounts mode.
        """
        if self._accounts:
            return True
        credentials = connection is not None and _carries_credentials(connection)
        if self._known and not look and not credentials:
            return False
        self._accounts = await accounts.any_account()
        self._known = True
        return self._accounts

    async def local_actor(self) -> Actor:
        if self._local is None:
            self._local = await accounts.local_actor()
        return self._local

    def credential(self, connection: HTTPConnection) -> Credential | None:
        """The Authorization header's token, else the session cookie; None when
        there is neither, or the header is no bearer token."""
        header = connection.headers.get("authorization")
        if header is not None:
            return _token(bearer_secret(header))
        cookie = connection.cookies.get(COOKIE)
        return Credential.cookie(cookie) if cookie else None

    def payload_credential(self, payload: dict[str, Any]) -> Credential | None:
        """A websocket's connection_init payload: {"Authorization": "Bearer smr_…"}."""
        for key, value in payload.items():
            if key.lower() == "authorization" and isinstance(value, str):
                return _token(bearer_secret(value))
        return None

    async def actor_for(self, credential: Credential) -> Actor | None:
        """Who ``credential`` stands for now (asked again for every operation)."""
        return await accounts.actor_for(credential, self.idle)

    async def caller(
        self, connection: HTTPConnection, *, cookies: bool = True, look: bool = False
    ) -> Caller:
        """Who sends ``connection``: the local user, or in accounts mode whom its
        token (or, with ``cookies``, its session cookie) stands for. ``look``:
        ask the database again whether it has accounts (``accounts_mode``)."""
        if not await self.accounts_mode(connection, look=look):
            return Caller(accounts=False, actor=await self.local_actor(), credential=None)
        credential = self.credential(connection)
        if credential is not None and credential.kind == "cookie" and not cookies:
            # Not looked up at all: asking would keep the browser's session alive.
            credential = None
        actor = await self.actor_for(credential) if credential else None
        return Caller(accounts=True, actor=actor, credential=credential if actor else None)


class Authenticate:
    """ASGI middleware: the caller of an HTTP request or a websocket handshake,
    resolved once and left in its state for the endpoint (``caller_of``).

    It refuses nothing itself: /graphql, /mcp and /auth/me each answer a
    caller without an actor as they always have (a 401, a redirect to the
    sign-in page, a websocket that may still sign in at connection_init).
    ``cookies=False``: only a bearer token counts (/mcp is for agents, and a
    page of another site could make a browser send its cookie). ``look``: the
    database is asked again whether it has accounts (the notebook's first request).
    """

    def __init__(
        self, app: ASGIApp, auth: Authenticator, *, cookies: bool = True, look: bool = False
    ) -> None:
        self.app = app
        self.auth = auth
        self.cookies = cookies
        self.look = look

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            caller = await self.auth.caller(
                HTTPConnection(scope), cookies=self.cookies, look=self.look
            )
            scope.setdefault("state", {})[CALLER] = caller
        await self.app(scope, receive, send)


def caller_of(scope: Scope) -> Caller:
    """The caller ``Authenticate`` found for this request (KeyError if it did not run)."""
    caller: Caller = scope["state"][CALLER]
    return caller


def _token(secret: str | None) -> Credential | None:
    return Credential.token(secret) if secret and secret.startswith(TOKEN_PREFIX) else None


def _carries_credentials(connection: HTTPConnection) -> bool:
    return "authorization" in connection.headers or COOKIE in connection.cookies


def same_origin(connection: HTTPConnection) -> bool:
    """Whether the request's Origin names the host it was sent to."""
    origin = connection.headers.get("origin")
    host = connection.headers.get("host")
    if not origin or not host or origin == "null":
        return False
    return urlsplit(origin).netloc.lower() == host.lower()


def unauthenticated(message: str = "Sign in, or send `Authorization: Bearer smr_…`.") -> Response:
    """HTTP 401 with a top-level GraphQL error."""
    return JSONResponse(
        {"data": None, "errors": [{"message": message, "extensions": {"code": "UNAUTHENTICATED"}}]},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="smriti"'},
    )


def forbidden_origin() -> Response:
    return JSONResponse(
        {
            "data": None,
            "errors": [
                {
                    "message": "A browser request must come from this server's own pages "
                    "(its Origin must match its Host).",
                    "extensions": {"code": "FORBIDDEN"},
                }
            ],
        },
        status_code=403,
    )


def _client_address(request: Request) -> str:
    """The address the sign-in limits count: the peer's, or what a proxy named
    by --forwarded-allow-ips said it forwarded for (uvicorn sets it)."""
    return request.client.host if request.client else "unknown"


def auth_routes(auth: Authenticator) -> list[Route]:
    """POST /auth/login, POST /auth/logout, GET /auth/me."""

    async def login(request: Request) -> Response:
        await auth.accounts_mode(look=True)
        if not same_origin(request):
            return JSONResponse({"error": "Sign in from this server's sign-in page."}, 403)
        body = await request.body()
        if len(body) > MAX_LOGIN_BODY:
            return JSONResponse({"error": "The request is too large."}, 413)
        try:
            fields = json.loads(body)
            name, password = fields["name"], fields["password"]
            if not isinstance(name, str) or not isinstance(password, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'Send {"name": …, "password": …} as JSON.'}, 400)
        try:
            actor, secret = await accounts.sign_in(
                name, password, _client_address(request), auth.limits
            )
        except RateLimited as exc:
            return JSONResponse(
                {"error": exc.message, "retryAfterSeconds": exc.retry_after},
                429,
                headers={"Retry-After": str(exc.retry_after)},
            )
        except InputError as exc:
            return JSONResponse({"error": exc.message}, 401)
        response = JSONResponse({"name": actor.name, "isAdmin": actor.is_admin})
        response.set_cookie(
            COOKIE,
            secret,
            max_age=auth.settings.session_idle_seconds,
            path="/",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(request: Request) -> Response:
        if not same_origin(request):
            return JSONResponse({"error": "Sign out from this server's pages."}, 403)
        cookie = request.cookies.get(COOKIE)
        if cookie:
            # Its websockets and streams on this worker end now (the others
            # within a second: api/services/connections.py).
            await accounts.sign_out(cookie, auth.connections)
        response = JSONResponse({"signedOut": True})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax")
        return response

    async def me(request: Request) -> Response:
        caller = caller_of(request.scope)
        if not caller.accounts:
            return JSONResponse({"mode": "local", "name": None, "isAdmin": True})
        actor = caller.actor
        if actor is None:
            return JSONResponse({"mode": "accounts", "name": None}, 401)
        return JSONResponse({"mode": "accounts", "name": actor.name, "isAdmin": actor.is_admin})

    return [
        Route("/auth/login", login, methods=["POST"]),
        Route("/auth/logout", logout, methods=["POST"]),
        # The notebook asks this first on every page load: the database is
        # asked again whether it has accounts.
        Route(
            "/auth/me", me, methods=["GET"], middleware=[Middleware(Authenticate, auth, look=True)]
        ),
    ]
