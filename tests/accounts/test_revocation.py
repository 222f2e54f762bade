"""Rights are checked when used: an open websocket or a running stream never
outlives the credential it rests on (docs/architecture.md#errors-and-rights, issue 16).

In process, through the real app. ``RECHECK_SECONDS`` decides how the end
is noticed: an hour, so that only the operation's own check (or the sweep of
the worker that revoked) can be the cause; the default second where the
revocation happens elsewhere (straight in the database, as `smriti users
disable` in another process does it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from httpx_ws import WebSocketDisconnect, aconnect_ws
from starlette.applications import Starlette

from api.app import create_app
from api.domain.accounts import secret_hash
from api.services import accounts
from api.settings import Settings
from api.store import accounts as account_store
from api.store import models
from tests.accounts.world import BASE_URL, PASSWORD
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import without_cost
from tests.support.ops import TURN
from tests.support.streams import STREAM, GraphQLWS, event_of, sse_events, ws_client

WHO = "query { viewer { name } }"
MINT = 'mutation { createApiToken(input: {name: "minted"}) { secret errors { code } } }'
REVOKE = "mutation($id: ID!) { revokeApiToken(input: {id: $id}) { errors { code } } }"
TOKENS = "query { viewer { apiTokens { id name } } }"
NEW_SESSION = """mutation { createSession(input: {model: "lab/my-model", title: "t"}) {
  session { id } errors { code } } }"""
TURNS = f"query($id: ID!) {{ session(id: $id) {{ turns(first: 10) {{ edges {{ node {{ {TURN} }} }} }} }} }}"
ORIGIN = {"Origin": BASE_URL}
HOUR = 3600.0
CLOSED = 4401
ENDED_MESSAGE = (
    "Your credentials no longer hold (the token was revoked or has expired, the browser "
    "signed out, or the user was disabled): the stream stopped, and the reply so far is "
    "saved, marked interrupted."
)


@dataclass
class Ada:
    """A user with two tokens (``socket`` for the sockets, ``spare`` to act
    elsewhere) and a signed-in browser (``cookie``)."""

    app: Starlette
    user_id: int
    socket: str
    spare: str
    cookie: str

    def http(self, headers: dict[str, str]) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=self.app)
        return httpx.AsyncClient(transport=transport, base_url=BASE_URL, headers=headers)

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        """Over plain HTTP with the spare token."""
        async with self.http({"Authorization": f"Bearer {self.spare}"}) as http:
            response = await http.post("/graphql", json={"query": query, "variables": variables})
        body = response.json()
        assert response.status_code == 200 and "errors" not in body, body
        found: dict[str, Any] = body["data"]
        return found

    async def new_session(self) -> str:
        sid: str = (await self.data(NEW_SESSION))["createSession"]["session"]["id"]
        return sid

    async def turns(self, sid: str) -> list[tuple[str, str, bool]]:
        """(role, content, interrupted) of each saved turn, read with the spare token."""
        edges = (await self.data(TURNS, id=sid))["session"]["turns"]["edges"]
        return [(e["node"]["role"], e["node"]["content"], e["node"]["interrupted"]) for e in edges]

    async def token_id(self, name: str) -> str:
        tokens = (await self.data(TOKENS))["viewer"]["apiTokens"]
        found: str = next(t["id"] for t in tokens if t["name"] == name)
        return found


@asynccontextmanager
async def signed_in(settings: Settings, recheck: float) -> AsyncIterator[Ada]:
    app = create_app(dataclasses.replace(settings, auth="accounts"))
    async with app.router.lifespan_context(app):
        app.state.services.connections.interval = recheck
        # The last enabled admin cannot be disabled: ada is not it.
        await accounts.add_user("root", PASSWORD, is_admin=True)
        account, _ = await accounts.add_user("ada", PASSWORD, is_admin=False)
        _, socket = await accounts.create_token(
            account.id, name="socket", read_only=False, expires_in_days=None
        )
        _, spare = await accounts.create_token(
            account.id, name="spare", read_only=False, expires_in_days=None
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            signed = await http.post(
                "/auth/login", json={"name": "ada", "password": PASSWORD}, headers=ORIGIN
            )
            cookie = signed.cookies["smriti_session"]
        yield Ada(app, account.id, socket, spare, cookie)


@asynccontextmanager
async def socket(
    ada: Ada, *, token: str | None = None, cookie: str | None = None
) -> AsyncIterator[GraphQLWS]:
    """graphql-transport-ws with a token in connection_init, or the cookie on
    the handshake (as a browser opens it)."""
    headers = {**ORIGIN, "Cookie": f"smriti_session={cookie}"} if cookie else {}
    payload = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with (
            ws_client(ada.app) as http,
            aconnect_ws(
                "/graphql", http, subprotocols=["graphql-transport-ws"], headers=headers
            ) as ws,
        ):
            client = GraphQLWS(ws)
            await client.send({"type": "connection_init", "payload": payload})
            assert await client.receive() == {"type": "connection_ack"}
            yield client
    except BaseExceptionGroup as group:
        # httpx-ws raises the server's close again when the socket is left;
        # the tests check each close where it happens (closed_with).
        if not _only_disconnects(group):
            raise


async def run(ws: GraphQLWS, op_id: str, query: str) -> dict[str, Any]:
    """A query or mutation on the socket: its `next` payload (then `complete`),
    without the query cost."""
    await ws.send({"id": op_id, "type": "subscribe", "payload": {"query": query}})
    answer = await ws.receive()
    assert answer["type"] == "next", answer
    assert await ws.receive() == {"id": op_id, "type": "complete"}
    return without_cost(answer["payload"])


async def closed_with(ws: GraphQLWS) -> int:
    """The close code of a socket the server is closing (nothing else arrives first)."""
    with pytest.raises(WebSocketDisconnect) as closed:
        message = await ws.receive()
        raise AssertionError(f"received {message} instead of a close")
    return closed.value.code


async def streaming(ws: GraphQLWS, op_id: str, sid: str, text: str) -> None:
    """Start messageStream; read the user turn and the deltas until their text is
    ``text`` (pieces waiting together arrive as one delta)."""
    await ws.subscribe(op_id, {"sessionId": sid, "content": "Go on."})
    first = await ws.next_event(op_id)
    assert first["__typename"] == "StreamUserTurn", first
    await ws.deltas_until(op_id, text)


async def token_count(user_id: int) -> int:
    return await models.ApiToken.filter(user_id=user_id).count()


# --- every operation on a socket asks again ------------------------------------


async def _revoke_in_the_database(ada: Ada) -> None:
    listed = {t.name: t for t in await account_store.tokens(ada.user_id)}
    await account_store.revoke_token(ada.user_id, listed["socket"].id)


async def _disable_in_the_database(ada: Ada) -> None:
    await account_store.disable("ada")


async def _sign_out_in_the_database(ada: Ada) -> None:
    await account_store.end_web_session(secret_hash(ada.cookie))


ENDINGS = {
    "token revoked": (_revoke_in_the_database, "token"),
    "user disabled": (_disable_in_the_database, "token"),
    "browser signed out": (_sign_out_in_the_database, "cookie"),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("operation", ["query", "mutation"])
async def test_the_next_operation_on_a_socket_is_refused_once_its_credential_ends(
    settings: Settings, ending: str, operation: str
) -> None:
    end, by = ENDINGS[ending]
    async with signed_in(settings, recheck=HOUR) as ada:
        before = await token_count(ada.user_id)
        credential = {"token": ada.socket} if by == "token" else {"cookie": ada.cookie}
        async with socket(ada, **credential) as ws:
            assert await run(ws, "1", WHO) == {"data": {"viewer": {"name": "ada"}}}
            # Ended where this worker does not see it: no sweep closes the socket.
            await end(ada)
            await ws.send(
                {
                    "id": "2",
                    "type": "subscribe",
                    "payload": {"query": WHO if operation == "query" else MINT},
                }
            )
            assert await closed_with(ws) == CLOSED
        # Nothing was minted on the closed socket.
        assert await token_count(ada.user_id) == before
        assert not await models.ApiToken.filter(name="minted").exists()


# --- the worker that ends a credential ends what rests on it, at once --------


async def test_revoking_a_token_closes_its_sockets_and_ends_its_streams_at_once(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with signed_in(settings, recheck=HOUR) as ada, AsyncExitStack() as stack:
        sids = [await ada.new_session() for _ in range(2)]
        # Two pieces, then the provider holds the answer open: a reply mid-way.
        for _ in range(2):
            fake_openai.stream_chunks(["The answer", " is", " forty", "-two."], hold_after=2)
        busy = await stack.enter_async_context(socket(ada, token=ada.socket))
        idle = await stack.enter_async_context(socket(ada, token=ada.socket))
        other = await stack.enter_async_context(socket(ada, token=ada.spare))
        await streaming(busy, "1", sids[0], "The answer is")
        sse = await SSE.start(ada.app, {"Authorization": f"Bearer {ada.socket}"}, sids[1])
        stack.push_async_callback(sse.stop)
        assert await sse.deltas("The answer is") == "The answer is"

        revoked = await ada.data(REVOKE, id=await ada.token_id("socket"))

        assert revoked == {"revokeApiToken": {"errors": []}}
        assert [await closed_with(busy), await closed_with(idle)] == [CLOSED, CLOSED]
        assert await sse.rest() == [("next", unauthenticated()), ("complete", None)]
        # A socket on another token of the same user is not touched.
        assert await run(other, "1", WHO) == {"data": {"viewer": {"name": "ada"}}}
        # Saved before the client was told.
        for sid in sids:
            assert await ada.turns(sid) == [
                ("USER", "Go on.", False),
                ("ASSISTANT", "The answer is", True),
            ]


async def test_signing_out_closes_the_browsers_sockets_and_ends_its_streams_at_once(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with signed_in(settings, recheck=HOUR) as ada, AsyncExitStack() as stack:
        sids = [await ada.new_session() for _ in range(2)]
        for _ in range(2):
            fake_openai.stream_chunks(["Half", " a", " thought"], hold_after=1)
        browser = {**ORIGIN, "Cookie": f"smriti_session={ada.cookie}"}
        busy = await stack.enter_async_context(socket(ada, cookie=ada.cookie))
        token_socket = await stack.enter_async_context(socket(ada, token=ada.socket))
        await streaming(busy, "1", sids[0], "Half")
        sse = await SSE.start(ada.app, browser, sids[1])
        stack.push_async_callback(sse.stop)
        assert await sse.deltas("Half") == "Half"

        async with ada.http(browser) as http:
            assert (await http.post("/auth/logout")).status_code == 200

        assert await closed_with(busy) == CLOSED
        assert await sse.rest() == [("next", unauthenticated()), ("complete", None)]
        # The same user's token still works on its socket.
        assert await run(token_socket, "1", WHO) == {"data": {"viewer": {"name": "ada"}}}
        # Saved before the client was told.
        for sid in sids:
            assert await ada.turns(sid) == [
                ("USER", "Go on.", False),
                ("ASSISTANT", "Half", True),
            ]


async def test_a_socket_that_revokes_its_own_token_gets_the_answer_then_is_closed(
    settings: Settings,
) -> None:
    async with signed_in(settings, recheck=HOUR) as ada:
        token_id = await ada.token_id("socket")
        async with socket(ada, token=ada.socket) as ws:
            await ws.send(
                {
                    "id": "1",
                    "type": "subscribe",
                    "payload": {"query": REVOKE, "variables": {"id": token_id}},
                }
            )
            answer = await ws.receive()
            assert without_cost(answer["payload"]) == {"data": {"revokeApiToken": {"errors": []}}}
            assert await ws.receive() == {"id": "1", "type": "complete"}
            assert await closed_with(ws) == CLOSED
        assert len(ada.app.state.services.connections) == 0


ADMIN_ACTS = {
    "revokes the token": (REVOKE, "token"),
    "disables the user": (
        'mutation { setUserDisabled(input: {name: "ada", disabled: true}) { errors { code } } }',
        None,
    ),
    "deletes the user": ('mutation { deleteUser(input: {name: "ada"}) { errors { code } } }', None),
}


@pytest.mark.parametrize("act", sorted(ADMIN_ACTS))
async def test_an_admin_who_ends_someones_credentials_closes_their_sockets_at_once(
    settings: Settings, act: str
) -> None:
    query, variable = ADMIN_ACTS[act]
    async with signed_in(settings, recheck=HOUR) as ada:
        root = await models.User.get(name="root")
        _, root_token = await accounts.create_token(
            int(root.id), name="admin", read_only=False, expires_in_days=None
        )
        variables = {"id": await ada.token_id("socket")} if variable else {}
        async with (
            socket(ada, token=ada.socket) as by_token,
            socket(ada, cookie=ada.cookie) as by_cookie,
        ):
            async with ada.http({"Authorization": f"Bearer {root_token}"}) as http:
                done = await http.post("/graphql", json={"query": query, "variables": variables})
            assert [e for e in without_cost(done.json())["data"].values()] == [{"errors": []}]
            closed = [await closed_with(by_token)]
            if variable is None:  # the user's browser goes too
                closed.append(await closed_with(by_cookie))
            else:  # the browser's session still holds
                assert await run(by_cookie, "1", WHO) == {"data": {"viewer": {"name": "ada"}}}
            assert closed == [CLOSED] * len(closed)


# --- ended elsewhere: every worker rechecks what it holds ---------------------


async def test_a_user_disabled_by_another_process_loses_sockets_and_streams(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with signed_in(settings, recheck=0.2) as ada, AsyncExitStack() as stack:
        sids = [await ada.new_session() for _ in range(3)]
        for _ in range(3):
            fake_openai.stream_chunks(["One", " two", " three"], hold_after=2)
        by_token = await stack.enter_async_context(socket(ada, token=ada.socket))
        by_cookie = await stack.enter_async_context(socket(ada, cookie=ada.cookie))
        await streaming(by_token, "1", sids[0], "One two")
        await streaming(by_cookie, "1", sids[1], "One two")
        sse = await SSE.start(ada.app, {"Authorization": f"Bearer {ada.spare}"}, sids[2])
        stack.push_async_callback(sse.stop)
        assert await sse.deltas("One two") == "One two"

        # As `smriti users disable ada` does it, from another process: only the
        # database knows.
        await account_store.disable("ada")

        assert [await closed_with(by_token), await closed_with(by_cookie)] == [CLOSED, CLOSED]
        assert await sse.rest() == [("next", unauthenticated()), ("complete", None)]
        assert len(ada.app.state.services.connections) == 0
        # Saved before the client was told.
        await models.User.filter(id=ada.user_id).update(disabled=False)  # to read them
        for sid in sids:
            assert await ada.turns(sid) == [
                ("USER", "Go on.", False),
                ("ASSISTANT", "One two", True),
            ]


# --- without accounts nothing changes -----------------------------------------


async def test_without_accounts_nothing_is_registered_or_rechecked(
    app: Starlette, fake_openai: FakeOpenAI
) -> None:
    fake_openai.stream_chunks(["Local", " only"], hold_after=1)
    async with ws_client(app) as http:
        created = await http.post("/graphql", json={"query": NEW_SESSION})
        sid = created.json()["data"]["createSession"]["session"]["id"]
        async with aconnect_ws("/graphql", http, subprotocols=["graphql-transport-ws"]) as raw:
            ws = GraphQLWS(raw)
            await ws.send({"type": "connection_init"})
            assert await ws.receive() == {"type": "connection_ack"}
            await streaming(ws, "1", sid, "Local")
            assert len(app.state.services.connections) == 0
            await ws.complete("1")


async def test_the_recheck_stops_with_the_app(settings: Settings) -> None:
    async with signed_in(settings, recheck=0.01):
        assert [t.get_name() for t in asyncio.all_tasks()].count("recheck-credentials") == 1
    assert [t.get_name() for t in asyncio.all_tasks()].count("recheck-credentials") == 0


# --- helpers ------------------------------------------------------------------


def unauthenticated() -> dict[str, Any]:
    """The last event of a stream whose credential ended (no cost: a
    subscription's is on its first answer only)."""
    return {
        "data": None,
        "errors": [{"message": ENDED_MESSAGE, "extensions": {"code": "UNAUTHENTICATED"}}],
    }


def _only_disconnects(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_disconnects(e) for e in exc.exceptions)
    return isinstance(exc, WebSocketDisconnect)


class SSE:
    """messageStream over graphql-sse, driven as the ASGI app sees it, so that
    each event can be read as it is sent (httpx's ASGITransport buffers)."""

    def __init__(self, task: asyncio.Task[None], chunks: asyncio.Queue[bytes | None]) -> None:
        self.task = task
        self.chunks = chunks
        self.text = ""
        self.read = 0  # events already returned

    @classmethod
    async def start(cls, app: Starlette, headers: dict[str, str], sid: str) -> SSE:
        body = json.dumps(
            {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Go on."}}}
        ).encode()
        sent = {
            "host": "smriti.test",
            "accept": "text/event-stream",
            "content-type": "application/json",
            "content-length": str(len(body)),
            **{k.lower(): v for k, v in headers.items()},
        }
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/graphql",
            "raw_path": b"/graphql",
            "root_path": "",
            "query_string": b"",
            "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("smriti.test", 80),
        }
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        requested = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if not requested.is_set():
                requested.set()
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never leaves on its own
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                assert message["status"] == 200, message
            elif message["type"] == "http.response.body":
                chunks.put_nowait(message.get("body", b""))
                if not message.get("more_body", False):
                    chunks.put_nowait(None)

        task = asyncio.create_task(app(scope, receive, send))
        stream = cls(task, chunks)
        first = await stream.events(1)
        assert first[0][1]["data"]["messageStream"]["__typename"] == "StreamUserTurn", first
        return stream

    async def stop(self) -> None:
        """The client leaves (a test that failed must not leave the request running)."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def events(self, count: int) -> list[tuple[str, Any]]:
        """The next ``count`` events (None ends the list early when the body ends)."""
        while len(sse_events(self.text)) < self.read + count:
            chunk = await asyncio.wait_for(self.chunks.get(), 30)
            if chunk is None:
                break
            self.text += chunk.decode()
        found = sse_events(self.text)[self.read : self.read + count]
        self.read += len(found)
        return found

    async def deltas(self, text: str) -> str:
        """The deltas' text, read until it is ``text`` (pieces waiting together
        arrive as one delta)."""
        seen = ""
        while seen != text:
            ((_, data),) = await self.events(1)
            seen += event_of(data)["delta"]
            assert text.startswith(seen), (seen, text)
        return seen

    async def rest(self) -> list[tuple[str, Any]]:
        """Every event until the response ends."""
        while (chunk := await asyncio.wait_for(self.chunks.get(), 30)) is not None:
            self.text += chunk.decode()
        await self.task
        found = sse_events(self.text)[self.read :]
        self.read += len(found)
        return found
