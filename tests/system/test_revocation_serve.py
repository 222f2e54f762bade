"""An open websocket or stream ends with its credential, on every worker.

`smriti serve --workers 2` on PostgreSQL; real clients (the `websockets`
package, httpx for graphql-sse). Sockets are opened until each worker holds
some (read from /proc: which process holds the server side of each
connection). Then the token is revoked over plain HTTP — one worker does it,
the other learns it from the database — or the user is disabled with `smriti
users disable` in a process of its own. Every socket is closed with 4401,
every SSE stream ends with UNAUTHENTICATED, and every reply being streamed is
saved as far as it got, marked interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

from api.graphql.core import ids
from tests.support.servers import SmritiServer, add_user
from tests.support.streams import STREAM, sse_events

pytestmark = pytest.mark.postgres_only

PASSWORD = "a long passphrase 7f3c"
CREATE = "mutation { createSession(input: {}) { session { id } } }"
TOKENS = "query { viewer { apiTokens { id name } } }"
REVOKE = "mutation($id: ID!) { revokeApiToken(input: {id: $id}) { errors { code } } }"
# The offline echo streams a word every 2 s: a reply is still streaming when
# it is cut off, however slow this machine is.
SLOW = {"SMRITI_OFFLINE_STREAM_DELAY_MS": "2000"}
# How long a socket may stay open after its credential ended, at most: the
# other worker rechecks every second; this machine is shared and slow.
BOUND = 30.0
ENDED = (
    "Your credentials no longer hold (the token was revoked or has expired, the browser "
    "signed out, or the user was disabled): the stream stopped, and the reply so far is "
    "saved, marked interrupted."
)


def smriti(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A `smriti` command in a process of its own, on the server's database."""
    return subprocess.run(
        [sys.executable, "-m", "api", *args, "--database", database_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )


def new_token(database_url: str, user: str, name: str) -> str:
    created = smriti(database_url, "tokens", "create", "--user", user, "--name", name)
    return created.stdout.strip()


async def post(server: SmritiServer, token: str, query: str, **variables: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.post(
            server.graphql_url,
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
        )
    body = response.json()
    assert response.status_code == 200 and "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def holder(server: SmritiServer, client_port: int) -> int:
    """The worker process holding the server side of the connection from ``client_port``."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, inode = fields[1], fields[2], fields[9]
        if int(local.split(":")[1], 16) == server.port and int(remote.split(":")[1], 16) == (
            client_port
        ):
            inodes.add(f"socket:[{inode}]")
    for pid in server.worker_pids():
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) in inodes:
                    return pid
    raise AssertionError(f"no worker holds the connection from port {client_port}")


@dataclass
class Stream:
    """A messageStream on a connection of its own, and what it has received."""

    sid: str
    worker: int = 0
    received: str = ""  # the deltas, joined
    events: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Socket(Stream):
    ws: ClientConnection | None = None

    @classmethod
    async def open(cls, server: SmritiServer, token: str, sid: str) -> Socket:
        ws = await websockets.connect(
            server.graphql_url.replace("http://", "ws://"),
            subprotocols=[Subprotocol("graphql-transport-ws")],
        )
        await ws.send(
            json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}})
        )
        assert json.loads(await ws.recv()) == {"type": "connection_ack"}
        message = {
            "id": "1",
            "type": "subscribe",
            "payload": {
                "query": STREAM,
                "variables": {"input": {"sessionId": sid, "content": "Tell me."}},
            },
        }
        await ws.send(json.dumps(message))
        opened = cls(sid=sid, worker=holder(server, ws.local_address[1]), ws=ws)
        # The user's turn, then the first piece of the reply.
        for _ in range(2):
            event = json.loads(await ws.recv())["payload"]["data"]["messageStream"]
            opened.received += event.get("delta", "")
        assert opened.received
        return opened

    async def closed(self) -> int:
        """Read until the server closes the socket; its close code."""
        assert self.ws is not None
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                message = json.loads(await self.ws.recv())
                assert message["type"] == "next", message
                self.received += message["payload"]["data"]["messageStream"].get("delta", "")
        assert closed.value.rcvd is not None, "the client, not the server, closed it"
        return closed.value.rcvd.code


@dataclass
class ServerSentEvents(Stream):
    response: httpx.Response | None = None
    lines: AsyncIterator[str] | None = None
    text: str = ""

    @classmethod
    async def open(
        cls, server: SmritiServer, http: httpx.AsyncClient, token: str, sid: str
    ) -> ServerSentEvents:
        body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Tell me."}}}
        request = http.build_request(
            "POST",
            server.graphql_url,
            json=body,
            headers={"Accept": "text/event-stream", "Authorization": f"Bearer {token}"},
        )
        response = await http.send(request, stream=True)
        assert response.status_code == 200
        address = response.extensions["network_stream"].get_extra_info("client_addr")
        opened = cls(sid=sid, worker=holder(server, address[1]), response=response)
        opened.lines = response.aiter_text()
        while len(opened.events) < 2:  # the user's turn, then the first piece
            await opened.read()
        assert opened.received
        return opened

    async def read(self) -> bool:
        """Read what has arrived; False once the response has ended."""
        assert self.lines is not None
        try:
            self.text += await anext(self.lines)
        except StopAsyncIteration:
            return False
        self.events = sse_events(self.text)
        self.received = "".join(
            data["data"]["messageStream"].get("delta", "")
            for name, data in self.events
            if name == "next" and data and data.get("data")
        )
        return True

    async def rest(self) -> list[tuple[str, Any]]:
        """Every event after the first piece, once the response has ended."""
        while await self.read():
            pass
        return [
            (name, data)
            for name, data in self.events
            if not (name == "next" and data and data.get("data"))
        ]


async def open_on_both_workers(
    server: SmritiServer, http: httpx.AsyncClient, token: str, admin: str
) -> tuple[list[Socket], list[ServerSentEvents]]:
    """Sockets and SSE streams, each with a reply streaming, opened until each
    worker holds at least two of each (at most 40 of a kind)."""
    sockets: list[Socket] = []
    streams: list[ServerSentEvents] = []
    for kind in ("socket", "sse"):
        opened: list[Any] = sockets if kind == "socket" else streams
        while not all([o.worker for o in opened].count(pid) >= 2 for pid in server.worker_pids()):
            assert len(opened) < 40, "the kernel sent every connection to one worker"
            sid = (await post(server, admin, CREATE))["createSession"]["session"]["id"]
            if kind == "socket":
                opened.append(await Socket.open(server, token, sid))
            else:
                opened.append(await ServerSentEvents.open(server, http, token, sid))
    return sockets, streams


async def all_ended(sockets: list[Socket], streams: list[ServerSentEvents]) -> list[Any]:
    """Each socket's close code and each SSE stream's last events, within BOUND."""
    async with asyncio.timeout(BOUND):
        return list(
            await asyncio.gather(*(s.closed() for s in sockets), *(s.rest() for s in streams))
        )


async def saved_replies(database_url: str, sids: list[str]) -> list[tuple[str, bool]]:
    """(content, interrupted) of each session's reply, from the database itself."""
    connection = await asyncpg.connect(database_url.replace("postgres://", "postgresql://", 1))
    try:
        found = []
        for sid in sids:
            rows = await connection.fetch(
                "SELECT role, content, interrupted FROM turn WHERE session_id = $1 "
                "ORDER BY sequence_number",
                ids.decode(sid, "Session", field="id"),
            )
            assert [row["role"] for row in rows] == ["USER", "ASSISTANT"], rows
            found.append((rows[1]["content"], rows[1]["interrupted"]))
        return found
    finally:
        await connection.close()


def assert_ended(ended: list[Any], sockets: list[Socket], streams: list[ServerSentEvents]) -> None:
    assert ended[: len(sockets)] == [4401] * len(sockets)
    for events in ended[len(sockets) :]:
        assert [name for name, _ in events] == ["next", "complete"]
        assert events[0][1]["errors"] == [
            {"message": ENDED, "extensions": {"code": "UNAUTHENTICATED"}}
        ]


async def assert_saved_interrupted(
    database_url: str, sockets: list[Socket], streams: list[ServerSentEvents]
) -> None:
    opened: list[Stream] = [*sockets, *streams]
    replies = await saved_replies(database_url, [o.sid for o in opened])
    for stream, (content, interrupted) in zip(opened, replies, strict=True):
        # What the client saw, and at most the piece that was on its way.
        assert interrupted is True
        assert content.startswith(stream.received), (content, stream.received)
        assert len(content.split()) <= len(stream.received.split()) + 1


async def test_revoking_a_token_over_http_ends_its_sockets_and_streams_on_both_workers(
    database_url: str,
) -> None:
    add_user(database_url, "ada", PASSWORD, admin=True)
    doomed = new_token(database_url, "ada", "doomed")
    admin = new_token(database_url, "ada", "admin")
    with SmritiServer(database_url, workers=2, env=SLOW) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sockets, streams = await open_on_both_workers(server, http, doomed, admin)
            tokens = (await post(server, admin, TOKENS))["viewer"]["apiTokens"]
            doomed_id = next(t["id"] for t in tokens if t["name"] == "doomed")

            revoked = await post(server, admin, REVOKE, id=doomed_id)
            ended = await all_ended(sockets, streams)

            # The other token of the same user still works, on either worker.
            still = [await post(server, admin, TOKENS) for _ in range(4)]
    assert revoked == {"revokeApiToken": {"errors": []}}
    assert_ended(ended, sockets, streams)
    assert all(len(s["viewer"]["apiTokens"]) == 2 for s in still)
    await assert_saved_interrupted(database_url, sockets, streams)


async def test_disabling_a_user_from_the_command_line_ends_their_sockets_and_streams(
    database_url: str,
) -> None:
    add_user(database_url, "ada", PASSWORD, admin=True)
    add_user(database_url, "bob", PASSWORD)
    bobs = new_token(database_url, "bob", "laptop")
    with SmritiServer(database_url, workers=2, env=SLOW) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sockets, streams = await open_on_both_workers(server, http, bobs, bobs)

            smriti(database_url, "users", "disable", "bob")  # another process
            ended = await all_ended(sockets, streams)
    assert_ended(ended, sockets, streams)
    await assert_saved_interrupted(database_url, sockets, streams)
