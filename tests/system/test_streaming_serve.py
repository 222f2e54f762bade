"""messageStream against `smriti serve`: a real process, real sockets, LiteLLM to the fake."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import WebSocketUpgradeError

from tests.support.databases import module_database
from tests.support.fake_openai import FakeOpenAI
from tests.support.served_sessions import (
    new_session,
    read_turns,
    reply_summary,
    write_providers_file,
)
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, GraphQLWS, graphql_ws, merged


@pytest.fixture(scope="module", params=[1, 2], ids=["1-worker", "2-workers"])
async def served(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[Served]:
    """One server for the module: each new process spends seconds loading LiteLLM.
    Every test runs on one worker and on two (a stream and its Stop stay on the
    worker its connection reached; the turns are read back through either)."""
    folder = tmp_path_factory.mktemp("streaming")
    with FakeOpenAI() as fake:
        providers = write_providers_file(folder, fake)
        async with module_database(folder) as url:
            with SmritiServer(url, providers=providers, workers=request.param) as server:
                yield Served(server, fake)


@pytest.fixture
def server(served: Served) -> SmritiServer:
    return served.server


@pytest.fixture
def fake_openai(served: Served) -> Iterator[FakeOpenAI]:
    yield served.fake
    served.fake.delay(0)


@dataclass(frozen=True)
class Served:
    server: SmritiServer
    fake: FakeOpenAI


@asynccontextmanager
async def connected(
    server: SmritiServer, headers: dict[str, str] | None = None
) -> AsyncIterator[tuple[httpx.AsyncClient, GraphQLWS]]:
    async with (
        httpx.AsyncClient(timeout=60) as http,
        graphql_ws(http, server.graphql_url, headers=headers) as ws,
    ):
        yield http, ws


async def saved(http: httpx.AsyncClient, server: SmritiServer, sid: str) -> list[dict[str, Any]]:
    last, turns = await read_turns(http, server, sid)
    assert last == len(turns)
    return turns


async def saved_when(
    http: httpx.AsyncClient, server: SmritiServer, sid: str, count: int
) -> list[dict[str, Any]]:
    """The turns once ``count`` are saved (a stopped stream saves its reply just after)."""
    for _ in range(500):
        last, turns = await read_turns(http, server, sid)
        if last == len(turns) == count:
            return turns
        await asyncio.sleep(0.02)
    raise AssertionError(f"{count} turns were never saved: {turns}")


async def test_a_websocket_stream_delivers_pieces_as_the_provider_sends_them(
    server: SmritiServer, fake_openai: FakeOpenAI
) -> None:
    fake_openai.stream_chunks(["Pack", " light", " layers."], interval=0.05)
    async with connected(server) as (http, ws):
        sid = await new_session(http, server, "lab/my-model")
        await ws.subscribe("1", {"sessionId": sid, "content": "What to pack?"})
        events = (await ws.events("1"))["1"]
        turns = await saved(http, server, sid)

    assert [reply_summary(t) for t in turns] == [
        (1, "USER", "What to pack?", None, False),
        (2, "ASSISTANT", "Pack light layers.", 1, False),
    ]
    # the pieces joined where they went out together
    assert merged(events) == [
        {"__typename": "StreamUserTurn", "userTurn": turns[0], "context": events[0]["context"]},
        {"__typename": "StreamDelta", "delta": "Pack light layers."},
        {"__typename": "StreamAssistantTurn", "assistantTurn": turns[1]},
    ]
    assert events[0]["context"]["messages"] == fake_openai.requests[-1]["messages"]


async def test_stop_over_a_websocket_closes_the_provider_request_and_keeps_the_pieces(
    server: SmritiServer, fake_openai: FakeOpenAI
) -> None:
    fake_openai.stream_chunks(["Sydney", ", then", " Perth."], hold_after=2)
    async with connected(server) as (http, ws):
        sid = await new_session(http, server, "lab/my-model")
        await ws.subscribe("1", {"sessionId": sid, "content": "Route?"})
        await ws.next_event("1")
        await ws.deltas_until("1", "Sydney, then")
        await ws.complete("1")

        outcome = await asyncio.to_thread(
            fake_openai.wait_for_stream_end, len(fake_openai.requests), 2.0
        )
        turns = await saved_when(http, server, sid, 2)

    assert outcome == "client-closed"
    assert [reply_summary(t) for t in turns] == [
        (1, "USER", "Route?", None, False),
        (2, "ASSISTANT", "Sydney, then", 1, True),
    ]


async def test_a_provider_failure_mid_answer_over_a_websocket(
    server: SmritiServer, fake_openai: FakeOpenAI
) -> None:
    fake_openai.stream_chunks(["Half", " an", " answer"], fail_after=2)
    async with connected(server) as (http, ws):
        sid = await new_session(http, server, "lab/my-model")
        await ws.subscribe("1", {"sessionId": sid, "content": "Go"})
        events = (await ws.events("1"))["1"]
        turns = await saved(http, server, sid)

    assert [reply_summary(t) for t in turns] == [
        (1, "USER", "Go", None, False),
        (2, "ASSISTANT", "Half an", 1, True),
    ]
    assert merged(events)[1:] == [
        {"__typename": "StreamDelta", "delta": "Half an"},
        {
            "__typename": "StreamFailed",
            "errors": [
                {
                    "code": "PROVIDER_UNREACHABLE",
                    "message": "lab/my-model: the connection to the provider was lost mid-answer",
                    "field": None,
                }
            ],
            "partialReply": turns[1],
        },
    ]


async def test_two_streams_on_two_connections_number_turns_1_to_4(
    server: SmritiServer, fake_openai: FakeOpenAI
) -> None:
    fake_openai.delay(0.3)  # both user turns are written before either reply
    async with connected(server) as (http, first), connected(server) as (_, second):
        sid = await new_session(http, server, "lab/my-model")
        await first.subscribe("1", {"sessionId": sid, "content": "Question A"})
        await second.subscribe("1", {"sessionId": sid, "content": "Question B"})
        a, b = await asyncio.gather(first.events("1"), second.events("1"))
        turns = await saved(http, server, sid)

    assert [t["sequenceNumber"] for t in turns] == [1, 2, 3, 4]
    users = {t["content"]: t["sequenceNumber"] for t in turns if t["role"] == "USER"}
    assert sorted(users) == ["Question A", "Question B"]
    for events, question in ((a["1"], "Question A"), (b["1"], "Question B")):
        assert events[0]["userTurn"]["sequenceNumber"] == users[question]
        reply = events[-1]["assistantTurn"]
        assert reply in turns[2:]
        assert reply["replyToSequence"] == users[question]


async def test_a_cross_origin_websocket_is_refused_with_403(server: SmritiServer) -> None:
    with pytest.raises(WebSocketUpgradeError) as refused:
        async with connected(server, headers={"Origin": "http://evil.example"}):
            pass
    assert refused.value.response.status_code == 403
    # The page the server itself served may connect.
    async with connected(server, headers={"Origin": server.base_url}):
        pass


# On one worker and on two, as the module's other tests (it ran twice before, by
# accident: providers_file depended on this module's fake_openai, so on `served`).
@pytest.mark.parametrize("workers", [1, 2], ids=["1-worker", "2-workers"])
async def test_allowed_origins_come_from_the_environment(
    database_url: str, providers_file: Path, workers: int
) -> None:
    env = {"SMRITI_ALLOWED_ORIGINS": "https://notebook.example, http://localhost:5173"}
    with SmritiServer(database_url, providers=providers_file, env=env, workers=workers) as server:
        async with connected(server, headers={"Origin": "http://localhost:5173"}):
            pass
        with pytest.raises(WebSocketUpgradeError):
            async with connected(server, headers={"Origin": "http://localhost:5174"}):
                pass


async def test_sse_streams_incrementally_and_stops_when_the_connection_closes(
    server: SmritiServer, fake_openai: FakeOpenAI
) -> None:
    fake_openai.stream_chunks(["Over", " server-sent", " events"], hold_after=2)
    async with httpx.AsyncClient(timeout=60) as http:
        sid = await new_session(http, server, "lab/my-model")
        body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "SSE?"}}}
        received: list[dict[str, Any]] = []
        text = ""
        async with http.stream(
            "POST", server.graphql_url, json=body, headers={"Accept": "text/event-stream"}
        ) as response:
            assert response.headers["content-type"] == "text/event-stream"
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    received.append(json.loads(line.removeprefix("data: ")))
                    text += received[-1]["data"]["messageStream"].get("delta", "")
                if text == "Over server-sent":
                    break  # the provider holds its third piece: leave mid-stream
        outcome = await asyncio.to_thread(
            fake_openai.wait_for_stream_end, len(fake_openai.requests), 2.0
        )
        turns = await saved_when(http, server, sid, 2)

    # Two pieces arrived while the provider was still answering: not buffered.
    assert [e["data"]["messageStream"]["__typename"] for e in received][:2] == [
        "StreamUserTurn",
        "StreamDelta",
    ]
    assert outcome == "client-closed"
    assert [reply_summary(t) for t in turns] == [
        (1, "USER", "SSE?", None, False),
        (2, "ASSISTANT", "Over server-sent", 1, True),
    ]


async def test_the_offline_provider_streams_through_serve(server: SmritiServer) -> None:
    async with connected(server) as (http, ws):
        sid = await new_session(http, server, None)
        await ws.subscribe("1", {"sessionId": sid, "content": "Hello"})
        events = (await ws.events("1"))["1"]

    pieces = [e["delta"] for e in events if e["__typename"] == "StreamDelta"]
    assert pieces and all(pieces)  # its words, joined where they went out together
    assert "".join(pieces) == events[-1]["assistantTurn"]["content"]
    assert events[-1]["assistantTurn"]["content"].endswith("\nYou asked: Hello")
    assert (events[-1]["assistantTurn"]["provider"], events[-1]["assistantTurn"]["model"]) == (
        "offline",
        "echo",
    )
