"""Smriti installed as the README installs it: `requirements.lock` alone.

The dev lock carries more than the runtime needs (httpx-ws brings wsproto), so a
server started from the dev environment can work where `make serve` and the
Docker image do not: without a websocket library uvicorn answered every upgrade
with "Unsupported upgrade request". This module builds a venv from
`requirements.lock` only (plus Smriti itself, `--no-deps`), cached in
`.cache/runtime-venv-<hash of the lock>`, and drives `smriti serve` from it over a
websocket and over SSE; the clients run here, in the dev environment.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from api.store.database import sqlite_url
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, graphql_ws, sse_events

LOCK = REPOSITORY_ROOT / "requirements.lock"
CREATE = 'mutation { createSession(input: {title: "runtime"}) { session { id } } }'

pytestmark = pytest.mark.database_neutral


def runtime_venv_dir() -> Path:
    key = hashlib.sha256()
    for source in (LOCK, REPOSITORY_ROOT / "pyproject.toml"):
        key.update(source.read_bytes())
    key.update(sys.version.encode())
    return REPOSITORY_ROOT / ".cache" / f"runtime-venv-{key.hexdigest()[:16]}"


def build_runtime_venv(target: Path) -> None:
    """As the Makefile's `serve` target and the Dockerfile install: the lock, hash-checked,
    then Smriti with no dependencies of its own."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(partial)], check=True)
    pip = [str(partial / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--require-hashes", "-r", str(LOCK)], check=True)
    subprocess.run(
        [*pip, "--no-deps", "--no-build-isolation", "-e", str(REPOSITORY_ROOT)], check=True
    )
    partial.rename(target)
    for stale in target.parent.glob("runtime-venv-*"):
        if stale != target:  # built from a lock that has changed since
            shutil.rmtree(stale, ignore_errors=True)


@pytest.fixture(scope="session")
def runtime_python() -> Path:
    target = runtime_venv_dir()
    if not (target / "bin" / "python").exists():
        build_runtime_venv(target)
    return target / "bin" / "python"


@pytest.fixture(scope="module")
def runtime_server(
    runtime_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SmritiServer]:
    database = tmp_path_factory.mktemp("runtime") / "smriti.sqlite3"
    with SmritiServer(sqlite_url(database), python=str(runtime_python)) as server:
        yield server


@pytest.fixture
async def http(runtime_server: SmritiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=runtime_server.base_url, timeout=30) as client:
        yield client


def lock_names() -> set[str]:
    return {
        canonical(match) for match in re.findall(r"^([A-Za-z0-9_.-]+)==", LOCK.read_text(), re.M)
    }


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_runtime_venv_holds_the_runtime_lock_and_smriti_only(runtime_python: Path) -> None:
    listed = subprocess.run(
        [str(runtime_python), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    installed = {canonical(p["name"]) for p in json.loads(listed.stdout)}
    # pip comes with every venv; everything else is the lock's or Smriti (the lock is
    # universal: a few of its entries are for other platforms only, e.g. colorama).
    assert installed - {"pip"} <= lock_names() | {"smriti"}
    assert {"smriti", "uvicorn", "websockets"} <= installed
    assert "wsproto" not in installed  # the dev lock's websocket library is not here


async def new_session(http: httpx.AsyncClient) -> str:
    created = (await http.post("/graphql", json={"query": CREATE})).json()
    sid: str = created["data"]["createSession"]["session"]["id"]
    return sid


async def test_a_websocket_subscription_streams_from_the_runtime_install(
    http: httpx.AsyncClient,
) -> None:
    sid = await new_session(http)
    async with graphql_ws(http) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hello over a websocket"})
        events = (await ws.events("1"))["1"]
    kinds = [e["__typename"] for e in events]
    assert kinds[0] == "StreamUserTurn"
    assert kinds[-1] == "StreamAssistantTurn"
    assert set(kinds[1:-1]) == {"StreamDelta"}
    assert events[0]["userTurn"]["sequenceNumber"] == 1
    assert events[-1]["assistantTurn"]["sequenceNumber"] == 2
    streamed = "".join(e["delta"] for e in events[1:-1])
    assert streamed == events[-1]["assistantTurn"]["content"]


async def test_an_sse_subscription_streams_from_the_runtime_install(
    http: httpx.AsyncClient,
) -> None:
    sid = await new_session(http)
    body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Hello, SSE"}}}
    response = await http.post("/graphql", json=body, headers={"Accept": "text/event-stream"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert [kind for kind, _ in events][-1] == "complete"
    streamed = [data["data"]["messageStream"] for kind, data in events if kind == "next"]
    assert streamed[0]["__typename"] == "StreamUserTurn"
    assert streamed[0]["userTurn"]["sequenceNumber"] == 1
    assert streamed[-1]["__typename"] == "StreamAssistantTurn"
    assert streamed[-1]["assistantTurn"]["sequenceNumber"] == 2
