"""Stopping `smriti serve`: at once, and mid-reply keeping the partial reply.

SIGTERM (Ctrl-C, `docker stop`) while the provider is still answering: the
pieces received so far are saved, marked interrupted, before the database
closes (issue 7, finding 2). A second server on the same database then reads
them back. And the stop takes at most STOP_WITHIN seconds at any moment, with
the LiteLLM preload on as in production, even while it is still importing
(issue 17: a stop right after start waited 15 to 18 s for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.databases import module_database
from tests.support.fake_openai import FakeOpenAI
from tests.support.served_sessions import (
    new_session,
    read_turns,
    reply_summary,
    write_providers_file,
)
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, graphql_ws

# One worker: uvicorn shuts down gracefully, then re-raises the signal it caught.
# Several: the parent passes SIGTERM on to each worker, waits for them, exits 0.
STOPPED_BY_SIGTERM = {1: -15, 2: 0}
# Seconds from SIGTERM to the process's end (`docker stop` sends SIGKILL after 10).
STOP_WITHIN = 2
# What production runs with: LiteLLM loaded in the background at start.
PRELOAD = {"SMRITI_PRELOAD_PROVIDERS": "1"}


async def stopped(server: SmritiServer) -> int:
    """SIGTERM, then the exit status (TimeoutExpired if it takes over STOP_WITHIN s)."""
    assert server.process is not None
    server.process.terminate()
    return await asyncio.to_thread(server.process.wait, STOP_WITHIN)


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
            with SmritiServer(url, providers=providers, workers=workers, env=PRELOAD) as server:
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


# An import of LiteLLM that never ends, holding the interpreter as a real one does.
STALLED_IMPORT = """import sys, time
print("litellm: import started", file=sys.stderr, flush=True)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    pass
"""


@pytest.mark.parametrize("workers", [1, 2])
async def test_sigterm_while_litellm_is_still_loading_stops_at_once(
    tmp_path: Path, workers: int
) -> None:
    stalled = tmp_path / "stalled" / "litellm"
    stalled.mkdir(parents=True)
    (stalled / "__init__.py").write_text(STALLED_IMPORT)
    providers = tmp_path / "providers.yaml"
    providers.write_text(
        "providers:\n  lab:\n    litellm_provider: openai\n"
        '    api_base: "http://127.0.0.1:9/v1"\n    models: [my-model]\n'
    )
    env = {
        **PRELOAD,
        "PYTHONPATH": os.pathsep.join([str(stalled.parent), os.environ.get("PYTHONPATH", "")]),
    }
    async with module_database(tmp_path) as url:
        with SmritiServer(url, providers=providers, workers=workers, env=env) as server:
            # Every worker is importing (the preload started with its lifespan).
            async with asyncio.timeout(30):
                while server.printed().count("litellm: import started") < workers:
                    await asyncio.sleep(0.05)
            try:
                status = await stopped(server)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {STOP_WITHIN} s after SIGTERM")
    assert status == STOPPED_BY_SIGTERM[workers]
    assert server.output.count("Application shutdown complete.") == workers


# A worker's import of the app that never ends (the parent never imports it
# with several workers: api/serve.py): loaded at every interpreter start.
STALLED_WORKER_START = """import importlib.abc, multiprocessing, sys, time

class StallTheAppInWorkers(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "api.app" and multiprocessing.parent_process() is not None:
            print("worker: importing the app", file=sys.stderr, flush=True)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                pass
        return None

sys.meta_path.insert(0, StallTheAppInWorkers())
"""


async def test_sigterm_while_the_workers_are_still_starting_stops_at_once(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(STALLED_WORKER_START)
    env = {**PRELOAD, "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "server.log"
    async with module_database(tmp_path) as url:
        server = SmritiServer(url, workers=2, env=env)
        with log.open("wb") as out:
            # A session of its own: the workers too are killed if the test fails.
            process = subprocess.Popen(
                server.command(),
                env=server.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                async with asyncio.timeout(60):
                    while log.read_text().count("worker: importing the app") < 2:
                        await asyncio.sleep(0.05)
                process.terminate()
                status = await asyncio.to_thread(process.wait, STOP_WITHIN)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {STOP_WITHIN} s after SIGTERM")
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    assert status == 0
    assert "Application startup complete." not in log.read_text()
