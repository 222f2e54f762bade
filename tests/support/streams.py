"""messageStream clients for tests: graphql-transport-ws over a websocket, and SSE.

In process::

    async with ws_client(app) as http, graphql_ws(http) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hi"})
        events = await ws.events("1")      # every event until `complete`

Against ``smriti serve``, pass an ``httpx.AsyncClient`` and the server's URL.
Events are the ``messageStream`` objects selected by ``STREAM`` (each with its
``__typename``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport
from starlette.applications import Starlette

from tests.support.ops import ERRORS, PLAN, TURN

STREAM = f"""
subscription($input: SendMessageInput!) {{
  messageStream(input: $input) {{
    __typename
    ... on StreamUserTurn {{ userTurn {{ {TURN} }} context {{ {PLAN} }} }}
    ... on StreamDelta {{ delta }}
    ... on StreamAssistantTurn {{ assistantTurn {{ {TURN} }} }}
    ... on StreamFailed {{ {ERRORS} partialReply {{ {TURN} }} }}
  }}
}}
"""
BASE_URL = "http://smriti.test"
# Generous: the first model call of a process waits for LiteLLM to load (seconds).
TIMEOUT = 30.0


@asynccontextmanager
async def ws_client(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client that reaches ``app`` in process, websockets included."""
    transport = ASGIWebSocketTransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
        yield http


class GraphQLWS:
    """The client side of graphql-transport-ws, one message at a time."""

    def __init__(self, ws: AsyncWebSocketSession) -> None:
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_json(message)

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message: dict[str, Any] = await self.ws.receive_json(timeout=timeout)
        return message

    async def subscribe(self, op_id: str, input: dict[str, Any], query: str = STREAM) -> None:
        await self.send(
            {
                "id": op_id,
                "type": "subscribe",
                "payload": {"query": query, "variables": {"input": input}},
            }
        )

    async def complete(self, op_id: str) -> None:
        await self.send({"id": op_id, "type": "complete"})

    async def next_event(self, op_id: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next event of ``op_id`` (the only operation running)."""
        message = await self.receive(timeout)
        assert message["id"] == op_id and message["type"] == "next", message
        return event_of(message["payload"])

    async def deltas_until(self, op_id: str, text: str, timeout: float = TIMEOUT) -> None:
        """Read StreamDelta events until their texts joined are ``text``.

        Pieces waiting together go out as one StreamDelta (the worker was
        behind, or they arrived in one read): a test of what the client saw
        reads the text, not a count of events."""
        seen = ""
        while seen != text:
            event = await self.next_event(op_id, timeout)
            assert event.get("__typename") == "StreamDelta" and event["delta"], event
            seen += event["delta"]
            assert text.startswith(seen), (seen, text)

    async def events(self, *op_ids: str, timeout: float = TIMEOUT) -> dict[str, list[Any]]:
        """Every event of each operation until its ``complete``, interleaving allowed."""
        found: dict[str, list[Any]] = {op_id: [] for op_id in op_ids}
        running = set(op_ids)
        while running:
            message = await self.receive(timeout)
            op_id = message["id"]
            assert op_id in running, message
            if message["type"] == "complete":
                running.discard(op_id)
            else:
                assert message["type"] == "next", message
                found[op_id].append(event_of(message["payload"]))
        return found


def event_of(payload: dict[str, Any]) -> dict[str, Any]:
    """The event of a ``next`` payload: messageStream's, or another subscription's."""
    assert "errors" not in payload, payload
    [event] = payload["data"].values()
    assert isinstance(event, dict), payload
    return event


@asynccontextmanager
async def graphql_ws(
    http: httpx.AsyncClient, url: str = "/graphql", headers: dict[str, str] | None = None
) -> AsyncIterator[GraphQLWS]:
    """A graphql-transport-ws connection, initialised and acknowledged."""
    async with aconnect_ws(
        url, http, subprotocols=["graphql-transport-ws"], headers=headers or {}
    ) as ws:
        assert ws.subprotocol == "graphql-transport-ws"
        client = GraphQLWS(ws)
        await client.send({"type": "connection_init"})
        assert await client.receive() == {"type": "connection_ack"}
        yield client


@asynccontextmanager
async def stream_ws(
    app: Starlette, headers: dict[str, str] | None = None
) -> AsyncIterator[GraphQLWS]:
    """A graphql-transport-ws connection to ``app`` in process.

    Open it inside the test, not in a fixture: httpx-ws's task group must be
    entered and exited by the same task.
    """
    async with ws_client(app) as http, graphql_ws(http, headers=headers) as ws:
        yield ws


def merged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with each run of StreamDelta events as one, their texts joined
    (how many pieces went out together depends on timing); no delta is empty."""
    result: list[dict[str, Any]] = []
    for event in events:
        if event.get("__typename") == "StreamDelta":
            assert event["delta"], event
            if result and result[-1].get("__typename") == "StreamDelta":
                result[-1] = {**result[-1], "delta": result[-1]["delta"] + event["delta"]}
                continue
        result.append(event)
    return result


def sse_events(text: str) -> list[tuple[str, Any]]:
    """(event, data) pairs of a graphql-sse body; data parsed as JSON when present."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            data = fields.get("data", "")
            found.append((fields["event"], json.loads(data) if data else None))
    return found


async def wait_until(
    check: Callable[[], Any], *, timeout: float = TIMEOUT, interval: float = 0.02
) -> Any:
    """Call ``check`` (awaiting what it returns, if awaitable) until the result is truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not true within {timeout} s: last result {result!r}")
        await asyncio.sleep(interval)
