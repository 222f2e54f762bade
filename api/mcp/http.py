"""/mcp: the reading tools over streamable HTTP, authenticated as /graphql is.

Accounts mode: every POST carries `Authorization: Bearer smr_…`, resolved to
its actor by the same middleware as GraphQL's (``Authenticate`` in
api/http/auth.py, which here counts no cookie), again at every request: each
tool call is its own POST, so a token revoked since is refused (401) at its
next call. Local mode: the local user, behind the same
Host check (api/http/hosts.py); a browser's request must come from this
server's own pages (its Origin must match its Host).

Stateless and JSON-answered: `smriti serve` runs several worker processes, and
a call may land on any of them. The SDK is imported at the first request, off
the event loop, not at start (about half a second and 31 MB per worker).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.requests import HTTPConnection

from ..domain.accounts import Actor
from ..http.auth import caller_of, forbidden_origin, same_origin, unauthenticated
from ..services.base import Services


class McpEndpoint:
    """The /mcp endpoint, behind ``Authenticate(…, cookies=False)``."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._handle: Any = None
        # The SDK's session manager, in a task of its own: a task group held
        # across the lifespan would have to end in the task that began it,
        # which a host (or a test) need not do.
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan: the session manager, if started, stops with it."""
        try:
            yield
        finally:
            if self._runner is not None:
                self._stop.set()
                await asyncio.gather(self._runner, return_exceptions=True)
                self._runner = None
                self._handle = None

    async def _started(self) -> Any:
        async with self._lock:
            if self._handle is None:
                ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                self._stop.clear()
                self._runner = asyncio.create_task(self._run(ready), name="mcp-sessions")
                # Shielded: a first caller that goes away does not cancel the start.
                self._handle = await asyncio.shield(ready)
        return self._handle

    async def _run(self, ready: asyncio.Future[Any]) -> None:
        try:
            # Half a second of imports, off the event loop: other requests go on.
            await asyncio.to_thread(importlib.import_module, "mcp.server.streamable_http_manager")
            await asyncio.to_thread(importlib.import_module, f"{__package__}.server")
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from .server import build_server

            async def caller(ctx: Any) -> Actor | None:
                request = ctx.request
                return caller_of(request.scope).actor if request is not None else None

            manager = StreamableHTTPSessionManager(
                build_server(caller, self.services), stateless=True, json_response=True
            )
            async with manager.run():
                ready.set_result(manager.handle_request)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        connection = HTTPConnection(scope)
        if "origin" in connection.headers and not same_origin(connection):
            await forbidden_origin()(scope, receive, send)
            return
        if caller_of(scope).actor is None:
            await unauthenticated("Send `Authorization: Bearer smr_…`.")(scope, receive, send)
            return
        handle = await self._started()
        await handle(scope, receive, send)
