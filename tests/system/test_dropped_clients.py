"""Clients that go away at any moment must never freeze the server (issue 7, finding 1).

A cancellation landing inside a write used to leave SQLite's connection lock
held, after which every query waited forever. These tests drop streams at
0 to 20 ms, over SSE and over a websocket, then require a read and a send to be
answered promptly by the same `smriti serve` process.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.support.databases import module_database
from tests.support.fake_openai import FakeOpenAI
from tests.support.served_sessions import new_session, read_turns, write_providers_file
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, graphql_ws

SEND = """mutation($id: ID!) { sendMessage(input: {sessionId: $id, content: "still there?"}) {
  userTurn { sequenceNumber } assistantTurn { sequenceNumber } errors { code } } }"""
DROPS = 30
# Generous against a loaded machine, tiny against "forever".
PROMPT = 15.0


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SmritiServer]:
    folder: Path = tmp_path_factory.mktemp("dropped")
    with FakeOpenAI() as fake:
        fake.stream_chunks(["one", " two", " three"], interval=0.005)
        providers = write_providers_file(folder, fake)
        async with module_database(folder) as url:
            with SmritiServer(url, providers=providers) as server:
                yield server


async def drop_sse(server: SmritiServer, sid: str, after: float) -> None:
    body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "hi"}}}
    async with httpx.AsyncClient(timeout=5) as http:
        try:
            async with asyncio.timeout(after):
                async with http.stream(
                    "POST", server.graphql_url, json=body, headers={"Accept": "text/event-stream"}
                ) as response:
                    async for _ in response.aiter_bytes():
                        pass
        except TimeoutError:
            pass  # the drop: the connection closes with the client


async def drop_ws(server: SmritiServer, sid: str, after: float) -> None:
    async with httpx.AsyncClient(timeout=5) as http, graphql_ws(http, server.graphql_url) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "hi"})
        await asyncio.sleep(after)
        await ws.complete("1")


async def still_answers(server: SmritiServer, sid: str) -> None:
    async with httpx.AsyncClient(timeout=PROMPT) as http:
        async with asyncio.timeout(PROMPT):
            last, turns = await read_turns(http, server, sid)
            sent = await http.post(
                server.graphql_url, json={"query": SEND, "variables": {"id": sid}}
            )
        # Every dropped stream left a gap-free history: 1..N, whatever was cut.
        assert [t["sequenceNumber"] for t in turns] == list(range(1, last + 1))
        payload = sent.json()["data"]["sendMessage"]
        assert payload["errors"] == []
        assert payload["userTurn"]["sequenceNumber"] == last + 1


@pytest.mark.parametrize("drop", [drop_sse, drop_ws], ids=["sse", "websocket"])
async def test_streams_dropped_at_0_to_20_ms_leave_the_server_answering(
    served: SmritiServer, drop: object
) -> None:
    rng = random.Random(7)
    async with httpx.AsyncClient(timeout=PROMPT) as http:
        sid = await new_session(http, served, "lab/my-model")
    for _ in range(DROPS):
        await drop(served, sid, rng.uniform(0, 0.02))  # type: ignore[operator]
    await still_answers(served, sid)
