"""Does memory come back? RSS of `smriti serve` over streams and sends (issue 19, target 3).

    python -m bench.memory                      # SQLite: 1,000 streams + 10,000 sends
    python -m bench.memory --db postgres
    python -m bench.memory --quick              # 200 streams + 2,000 sends
    python -m bench.memory --in-process         # the app in this process: what grows, by type

``smriti serve --workers 1`` runs as a real process on a throw-away database
(a SQLite file, or a new PostgreSQL database dropped at the end) with
``lab/my-model``: an OpenAI-compatible stub (``PacedProvider``, below, in a
process of its own) reached through LiteLLM over loopback, answering in
``PIECES`` pieces ``INTERVAL_S`` apart. ``CLIENTS`` clients, each with a session
of its own, speak HTTP/1.1 over raw asyncio streams (a full HTTP client would
take the CPU the server needs):

1. 100 sends (``sendMessage``), then VmRSS (/proc) -> the baseline;
2. ``messageStream`` over Server-Sent Events as the web UI runs it (POST with
   ``Accept: text/event-stream``, read to ``event: complete``); one stream in
   ``STOP_EVERY`` is stopped after its first piece by closing the connection, as
   the web UI's Stop does; then the sends. VmRSS is printed every 1,000 requests.

Target: RSS at the end within 10 % of the baseline. Exit status 0 when it is, 1
when not.

``--in-process`` runs the same load against the app served by uvicorn in this
process, and prints the live objects (``gc.get_objects()``, by type) and the
tracemalloc allocation sites that grew between the baseline and the end (both
after ``gc.collect()``), and Python's allocated bytes against RSS, which tells a
leak of objects from memory the C allocator keeps. ``tests/system/test_memory.py``
runs it briefly, as a test.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import collections
import gc
import json
import multiprocessing
import socket
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.databases import temporary_database
from bench.workers import CREATE, Connection, providers_file
from tests.support.fake_provider import KEEP_ALIVE_S
from tests.support.servers import SmritiServer, free_port

PIECES = 8
INTERVAL_S = 0.002
CLIENTS = 12
STOP_EVERY = 5  # one stream in five is stopped after its first piece
BASELINE_SENDS = 100
LIMIT = 1.10  # end RSS / baseline RSS
REPORT_EVERY = 1000
EXIT_OK, EXIT_TARGET_FAILED = 0, 1
MB = 1024 * 1024

SEND = (
    "mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) "
    "{ assistantTurn { sequenceNumber } errors { code message } } }"
)
LAST = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"
STREAM = (
    "subscription($input: SendMessageInput!) { messageStream(input: $input) { __typename "
    "... on StreamDelta { delta } ... on StreamFailed { errors { code message } } } }"
)


# --- the provider ---------------------------------------------------------------------


class PacedProvider:
    """OpenAI-style chat completions that remembers nothing: its memory is not ours to watch."""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        text = " ".join(f"piece{n}" for n in range(PIECES))
        usage = {"prompt_tokens": 10, "completion_tokens": PIECES, "total_tokens": 10 + PIECES}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            return JSONResponse(
                {
                    "id": "memory", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": usage,
                }
            )  # fmt: skip
        return StreamingResponse(self.pieces(body, usage), media_type="text/event-stream")

    async def pieces(self, body: dict[str, Any], usage: dict[str, int]) -> AsyncIterator[str]:
        yield _chunk(body, [{"index": 0, "delta": {"role": "assistant", "content": ""}}])
        for n in range(PIECES):
            await asyncio.sleep(INTERVAL_S)
            yield _chunk(body, [{"index": 0, "delta": {"content": f" piece{n}"}}])
        yield _chunk(body, [{"index": 0, "delta": {}, "finish_reason": "stop"}])
        if (body.get("stream_options") or {}).get("include_usage"):
            yield _chunk(body, [], usage=usage)
        yield "data: [DONE]\n\n"


def _chunk(body: dict[str, Any], choices: list[dict[str, Any]], **extra: Any) -> str:
    chunk = {
        "id": "memory", "object": "chat.completion.chunk", "created": 0,
        "model": body.get("model", "m"), "choices": choices, **extra,
    }  # fmt: skip
    return f"data: {json.dumps(chunk)}\n\n"


def provider_config(port: int) -> uvicorn.Config:
    """The stub's server: it keeps idle connections open longer than LiteLLM's pool
    reuses them (``KEEP_ALIVE_S``), as a provider does; with uvicorn's 5 s a send now
    and then took a connection the stub was closing and failed ("could not connect")."""
    return uvicorn.Config(
        PacedProvider().app(),
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_keep_alive=KEEP_ALIVE_S,
    )


def _serve_provider(port: int, sock: socket.socket | None = None) -> None:
    uvicorn.Server(provider_config(port)).run(sockets=[sock] if sock else None)


def listening_socket() -> socket.socket:
    """A socket on 127.0.0.1 and a port of the kernel's choosing, already listening: a
    port picked free and bound later may be taken meanwhile by another process."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    return sock


@contextmanager
def provider_process() -> Iterator[str]:
    """The provider in a process of its own; its base URL."""
    port = free_port()
    process = multiprocessing.get_context("spawn").Process(
        target=_serve_provider, args=(port,), daemon=True
    )
    process.start()
    try:
        _wait_for_port(port)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.join(10)


def _wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


# --- the clients ----------------------------------------------------------------------


async def new_session(port: int) -> str:
    connection = Connection(port)
    try:
        answer = await connection.post(CREATE, {})
    finally:
        connection.close()
    return str(answer["data"]["createSession"]["session"]["id"])


async def turns_written(port: int, sessions: list[str]) -> int:
    """Every turn of these sessions (their lastSequenceNumber, summed)."""
    connection = Connection(port)
    try:
        total = 0
        for sid in sessions:
            answer = await connection.post(LAST, {"s": sid})
            total += answer["data"]["session"]["lastSequenceNumber"]
        return total
    finally:
        connection.close()


async def settle(port: int, sessions: list[str], turns: int, quiet: float = 2.0) -> int:
    """Wait until the sessions hold ``turns`` turns, or their count has not moved for
    ``quiet`` seconds; the count. A stopped stream saves its reply after its client has
    gone, so work may still be running when the last client is done."""
    written, since = -1, time.monotonic()
    while True:
        now = await turns_written(port, sessions)
        if now == turns:
            return now
        if now != written:
            written, since = now, time.monotonic()
        elif time.monotonic() - since > quiet:
            return now
        await asyncio.sleep(0.05)


async def stream(port: int, sid: str, content: str, *, stop: bool) -> str:
    """One messageStream over SSE; "stopped" when closed after the first piece, else the
    last event's type. Its own connection, closed at the end as a browser's fetch may."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        body = json.dumps(
            {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": content}}}
        ).encode()
        writer.write(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"the stream was refused: {head!r}")
        last = ""
        buffer = b""
        while True:
            data = await reader.read(65536)
            if not data:
                raise RuntimeError(f"the stream ended before it was complete (last {last})")
            buffer += data
            if b"event: complete" in buffer:
                break
            for typename in (b"StreamFailed", b"StreamAssistantTurn", b"StreamDelta"):
                if b'"__typename":"%s"' % typename in buffer.replace(b": ", b":"):
                    last = typename.decode()
                    break
            if stop and last == "StreamDelta":
                return "stopped"
        if last == "StreamFailed":
            raise RuntimeError(f"a stream failed: {buffer[-500:]!r}")
        return last
    finally:
        writer.close()


async def send(connection: Connection, sid: str, content: str) -> None:
    answer = await connection.post(SEND, {"s": sid, "c": content})
    result = (answer.get("data") or {}).get("sendMessage")
    if not result or result["errors"]:
        raise RuntimeError(f"a send failed: {answer}")


async def sends(port: int, sessions: list[str], count: int, progress: Progress) -> None:
    """``count`` sends spread over the clients, one session each."""

    async def client(sid: str, share: int) -> None:
        connection = Connection(port)
        try:
            for n in range(share):
                await send(connection, sid, f"send {n}")
                progress.done()
        finally:
            connection.close()

    await asyncio.gather(
        *(client(s, n) for s, n in zip(sessions, shares(count, sessions), strict=True))
    )


async def streams(
    port: int, sessions: list[str], count: int, progress: Progress, stop_every: int = STOP_EVERY
) -> int:
    """``count`` streams spread over the clients, one in ``stop_every`` stopped after its
    first piece; how many were stopped."""
    stopped = 0

    async def client(sid: str, share: int, first: int) -> None:
        nonlocal stopped
        for n in range(first, first + share):
            stop = n % stop_every == stop_every - 1
            outcome = await stream(port, sid, f"stream {n}", stop=stop)
            stopped += outcome == "stopped"
            progress.done()

    counts = shares(count, sessions)
    firsts = [sum(counts[:i]) for i in range(len(counts))]
    await asyncio.gather(
        *(client(s, n, f) for s, n, f in zip(sessions, counts, firsts, strict=True))
    )
    return stopped


def shares(count: int, sessions: list[str]) -> list[int]:
    clients = len(sessions)
    return [count // clients + (i < count % clients) for i in range(clients)]


class Progress:
    """Calls ``report`` every ``every`` finished requests."""

    def __init__(self, report: Any, every: int = REPORT_EVERY) -> None:
        self.count = 0
        self.every = every
        self.report = report

    def done(self) -> None:
        self.count += 1
        if self.every and self.count % self.every == 0:
            self.report(self.count)


# --- measuring ----------------------------------------------------------------------------


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def live_objects() -> collections.Counter[str]:
    """Live objects the collector tracks, by type name, after a full collection."""
    gc.collect()
    return collections.Counter(type(o).__qualname__ for o in gc.get_objects())


def growth(
    before: collections.Counter[str], after: collections.Counter[str], top: int = 15
) -> list[tuple[str, int]]:
    grown = [(name, after[name] - before.get(name, 0)) for name in after]
    return sorted((g for g in grown if g[1] > 0), key=lambda g: -g[1])[:top]


@dataclass
class Load:
    streams: int
    sends: int


FULL = Load(streams=1_000, sends=10_000)
QUICK = Load(streams=200, sends=2_000)


async def run_load(port: int, load: Load, pid: int) -> tuple[float, float, int]:
    """Baseline sends, then the load; RSS (MB) after each, and the streams stopped."""
    sessions = [await new_session(port) for _ in range(CLIENTS)]
    await sends(port, sessions, BASELINE_SENDS, Progress(None, every=0))
    baseline = vm_rss_mb(pid)
    print(f"after {BASELINE_SENDS} sends: RSS {baseline:.1f} MB", flush=True)
    started = time.perf_counter()

    def report(kind: str) -> Any:
        return lambda n: print(
            f"  {n:>6} {kind}: RSS {vm_rss_mb(pid):.1f} MB ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )

    stopped = await streams(port, sessions, load.streams, Progress(report("streams")))
    await sends(port, sessions, load.sends, Progress(report("sends")))
    return baseline, vm_rss_mb(pid), stopped


async def out_of_process(args: argparse.Namespace, load: Load) -> int:
    with (
        tempfile.TemporaryDirectory(prefix="smriti-bench-memory-") as folder,
        provider_process() as base_url,
    ):
        providers = providers_file(Path(folder), base_url)
        async with temporary_database(args.db) as url:
            server = SmritiServer(
                url,
                providers=providers,
                workers=1,
                args=("--log-level", "info"),
                env={"SMRITI_PRELOAD_PROVIDERS": "1"},
            )
            with server:
                (pid,) = server.worker_pids() or [server.process.pid]  # type: ignore[union-attr]
                baseline, end, stopped = await run_load(server.port, load, pid)
    ratio = end / baseline
    ok = ratio <= LIMIT
    print(
        f"{'PASS' if ok else 'FAIL'} {args.db}: {load.streams} streams ({stopped} stopped) and "
        f"{load.sends} sends: RSS {baseline:.1f} -> {end:.1f} MB ({ratio:.3f}x, limit {LIMIT:g}x)"
    )
    return EXIT_OK if ok else EXIT_TARGET_FAILED


# --- in process -------------------------------------------------------------------------------


@contextmanager
def app_in_process(database_url: str, providers: Path) -> Iterator[int]:
    """The real app under uvicorn in a thread of this process, with an event loop of its
    own as in `smriti serve` (lifespan and migrations included); its port."""
    from api.app import create_app
    from api.settings import Settings

    settings = Settings.from_environment(database_url=database_url, providers_file=providers)
    sock = listening_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), port=port, log_level="warning", ws="websockets-sansio"
    )
    server = uvicorn.Server(config)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except Exception as exc:  # reported by the caller, after its own checks
            failures.append(exc)

    thread = threading.Thread(target=run, name="smriti-in-process", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"the app did not start: {failures}")
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(30)
        for failure in failures:
            print(f"the in-process server's loop ended with {failure!r}", file=sys.stderr)


@contextmanager
def provider_thread() -> Iterator[str]:
    sock = listening_socket()
    port = sock.getsockname()[1]
    thread = threading.Thread(target=_serve_provider, args=(port, sock), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/v1"  # a daemon thread: it ends with the process


@dataclass
class Snapshot:
    objects: collections.Counter[str]
    traced: tracemalloc.Snapshot | None
    rss_mb: float


def snapshot(trace: bool) -> Snapshot:
    objects = live_objects()
    return Snapshot(objects, tracemalloc.take_snapshot() if trace else None, vm_rss_mb(os.getpid()))


async def in_process(args: argparse.Namespace, load: Load) -> int:
    if args.trace:
        tracemalloc.start(1)
    nothing = Progress(None, every=0)
    with (
        tempfile.TemporaryDirectory(prefix="smriti-bench-memory-") as folder,
        provider_thread() as base_url,
    ):
        providers = providers_file(Path(folder), base_url)
        async with temporary_database(args.db) as url:
            with app_in_process(url, providers) as port:
                sessions = [await new_session(port) for _ in range(CLIENTS)]
                await sends(port, sessions, BASELINE_SENDS, nothing)
                await streams(port, sessions, BASELINE_SENDS, nothing)
                await settle(port, sessions, -1, quiet=1.0)  # no target: until quiet
                before = snapshot(args.trace)
                await streams(port, sessions, load.streams, nothing)
                await sends(port, sessions, load.sends, nothing)
                await settle(port, sessions, -1, quiet=1.0)
                after = snapshot(args.trace)
    print(f"{load.streams} streams and {load.sends} sends after a warm-up, in process:")
    print(f"RSS {before.rss_mb:.1f} -> {after.rss_mb:.1f} MB")
    print("live objects that grew (type: count):")
    for name, grew in growth(before.objects, after.objects):
        print(f"  {name}: +{grew}")
    if before.traced is not None and after.traced is not None:
        traced = tracemalloc.get_traced_memory()[0] / MB
        tracemalloc.stop()
        print(f"traced by Python at the end: {traced:.1f} MB; allocation sites that grew:")
        for stat in after.traced.compare_to(before.traced, "lineno")[:15]:
            print(f"  {stat}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--trace", action="store_true", help="with --in-process: tracemalloc too")
    args = parser.parse_args(argv)
    load = QUICK if args.quick else FULL
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()}; {args.db}", flush=True)
    run = in_process if args.in_process else out_of_process
    return asyncio.run(run(args, load))


if __name__ == "__main__":
    sys.exit(main())
