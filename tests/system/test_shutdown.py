"""Stopping `smriti serve` mid-reply keeps the partial reply (issue 7, finding 2).

SIGTERM (Ctrl-C, `docker stop`) while the provider is still answering: the
pieces received so far are saved, marked interrupted, before the database
closes. A second server on the same database then reads them back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, graphql_ws
from tests.system.test_streaming_serve import (
    module_database,
    new_session,
    read_turns,
    reply_summary,
    write_providers_file,
)

# One worker: uvicorn shuts down gracefully, then re-raises the signal it caught.
# Several: the parent passes SIGTERM on to each worker, waits for them, exits 0.
STOPPED_BY_SIGTERM = {1: -15, 2: 0}


async def stopped(server: SmritiServer) -> int:
    assert server.process is not None
    server.process.terminate()
    return await asyncio.to_thread(server.process.wait, 30)


async def sse_until_two_pieces(http: httpx.AsyncClient, server: SmritiServer, sid: str) -> Any:
    body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Long one?"}}}
    response = await http.send(
        http.build_request(
            "POST", server.graphql_url, json=body, headers={"Accept": "text/event-stream"}
        ),
        stream=True,
    )
    pieces = 0
    async for line in response.aiter_lines():
        if line.startswith("data: ") and "StreamDelta" in line:
            pieces += 1
            if pieces == 2:
                return response  # still open: the provider holds its third piece
    raise AssertionError("the stream ended early")


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("transport", ["sse", "websocket"])
async def test_sigterm_mid_reply_saves_the_partial_reply_as_interrupted(
    tmp_path: Path, transport: str, workers: int
) -> None:
    with FakeOpenAI() as fake:
        # The parent of several workers looks at its signals every 0.5 s before
        # passing SIGTERM on: the provider's pieces come slower than that there.
        interval = 0.3 if workers == 1 else 1.5
        fake.stream_chunks(["Part", " one", *[" more"] * 40], interval=interval)
        providers = write_providers_file(tmp_path, fake)
        async with module_database(tmp_path) as url:
            with SmritiServer(url, providers=providers, workers=workers) as server:
                async with httpx.AsyncClient(timeout=60) as http:
                    sid = await new_session(http, server, "lab/my-model")
                    if transport == "sse":
                        response = await sse_until_two_pieces(http, server, sid)
                        assert await stopped(server) == STOPPED_BY_SIGTERM[workers]
                        await response.aclose()
                    else:
                        async with graphql_ws(http, server.graphql_url) as ws:
                            await ws.subscribe("1", {"sessionId": sid, "content": "Long one?"})
                            events = [await ws.next_event("1") for _ in range(3)]
                            assert [e["__typename"] for e in events] == [
                                "StreamUserTurn",
                                "StreamDelta",
                                "StreamDelta",
                            ]
                            assert await stopped(server) == STOPPED_BY_SIGTERM[workers]
            assert "Cannot operate on a closed database" not in server.output
            assert server.output.count("Application shutdown complete.") == workers
            with SmritiServer(url, providers=providers) as again:
                async with httpx.AsyncClient(timeout=60) as http:
                    last, turns = await read_turns(http, again, sid)

    assert last == 2
    assert [reply_summary(t) for t in turns] == [
        (1, "USER", "Long one?", None, False),
        (2, "ASSISTANT", "Part one", 1, True),
    ]
