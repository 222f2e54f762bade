"""``python -m bench.streaming [--db sqlite|postgres] [--quick]``

What ``smriti serve`` adds to a streamed reply, over the provider's own timing.

A fake OpenAI-compatible provider runs in this process and timestamps what it
does: when the request arrives and when it writes each piece. ``smriti serve``
runs as a real process (uvicorn, the database, LiteLLM) with that provider
configured, and a graphql-transport-ws client, also in this process, runs
``messageStream`` and timestamps each event it receives. Provider and client
read the same clock (``time.perf_counter``), so:

* added latency to the first piece = client's time to first piece - provider's
  own time to first piece = (request reaches the provider - subscribe sent)
  + (first piece received - first piece written);
* per piece = piece received - piece written, for every piece after the first.

The same two figures are measured for LiteLLM alone first (``registry.stream``
called in this process against the same provider), to show how much of the
server's figure is LiteLLM's own work.

Exit status: 0 when both targets pass, 1 when one fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from api.domain.types import ChatMessage
from api.providers import ProviderRegistry, load_config
from bench.databases import temporary_database
from bench.report import RESULTS_DIR

PIECES = 20  # pieces per reply
THINK_SECONDS = 0.020  # the provider's own time to its first piece
INTERVAL_SECONDS = 0.005  # between pieces
FIRST_PIECE_LIMIT_MS = 5.0
PER_PIECE_LIMIT_MS = 1.0
EXIT_OK, EXIT_TARGET_FAILED = 0, 1
MS = 1000.0

SUBSCRIPTION = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
  __typename ... on StreamDelta { delta } ... on StreamFailed { errors { code message } } } }"""
CREATE_SESSION = """mutation { createSession(input: {title: "bench", model: "timed/model"}) {
  session { id } } }"""


# --- the provider -------------------------------------------------------------


@dataclass
class ProviderTiming:
    received: float  # the request arrived
    written: list[float] = field(default_factory=list)  # each piece was written


class TimedProvider:
    """OpenAI-style streaming chat completions with a known, recorded timing."""

    def __init__(self) -> None:
        self.timings: list[ProviderTiming] = []

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> Response:
        timing = ProviderTiming(received=time.perf_counter())
        self.timings.append(timing)
        await request.body()
        return StreamingResponse(self.pieces(timing), media_type="text/event-stream")

    async def pieces(self, timing: ProviderTiming) -> AsyncIterator[str]:
        yield _event({"role": "assistant", "content": ""})
        await asyncio.sleep(THINK_SECONDS)
        for index in range(PIECES):
            if index:
                await asyncio.sleep(INTERVAL_SECONDS)
            timing.written.append(time.perf_counter())
            yield _event({"content": f" piece{index}"})
        yield _event({}, finish="stop")
        usage = {"prompt_tokens": 1, "completion_tokens": PIECES, "total_tokens": PIECES + 1}
        yield _chunk([], usage=usage)
        yield "data: [DONE]\n\n"


def _event(delta: dict[str, Any], finish: str | None = None) -> str:
    return _chunk([{"index": 0, "delta": delta, "finish_reason": finish}])


def _chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
    chunk = {
        "id": "bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "model",
        "choices": choices,
        **extra,
    }
    return f"data: {json.dumps(chunk)}\n\n"


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[int]:
    """Run ``app`` with uvicorn in this event loop; yield its port."""
    port = _free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        await task


# --- smriti serve ---------------------------------------------------------------


@asynccontextmanager
async def smriti_serve(database_url: str, providers: Path) -> AsyncIterator[str]:
    """``smriti serve`` in a subprocess; yield its base URL."""
    port = _free_port()
    command = [sys.executable, "-m", "api", "serve", "--port", str(port)]
    command += ["--database", database_url, "--providers", str(providers)]
    command += ["--log-level", "warning"]
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient() as http:
                for _ in range(600):
                    if process.poll() is not None:
                        output.seek(0)
                        raise RuntimeError(f"smriti serve exited: {output.read().decode()}")
                    try:
                        if (await http.get(f"{base}/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        await asyncio.sleep(0.1)
                else:
                    raise TimeoutError("smriti serve did not start in 60 s")
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the client -----------------------------------------------------------------


@dataclass
class ClientTiming:
    sent: float
    received: list[float] = field(default_factory=list)  # each StreamDelta
    ended: float = 0.0  # the StreamAssistantTurn


async def stream_once(
    ws: AsyncWebSocketSession, http: httpx.AsyncClient, base: str, number: int
) -> ClientTiming:
    created = await http.post(f"{base}/graphql", json={"query": CREATE_SESSION})
    sid = created.json()["data"]["createSession"]["session"]["id"]
    message = {
        "id": str(number),
        "type": "subscribe",
        "payload": {
            "query": SUBSCRIPTION,
            "variables": {"input": {"sessionId": sid, "content": f"Message {number}"}},
        },
    }
    timing = ClientTiming(sent=time.perf_counter())
    await ws.send_json(message)
    while True:
        reply = await ws.receive_json(timeout=60)
        now = time.perf_counter()
        if reply["type"] == "complete":
            return timing
        event = reply["payload"]["data"]["messageStream"]
        kind = event["__typename"]
        if kind == "StreamDelta":
            timing.received.append(now)
        elif kind == "StreamAssistantTurn":
            timing.ended = now
        elif kind == "StreamFailed":
            raise RuntimeError(f"the stream failed: {event['errors']}")


async def litellm_once(registry: ProviderRegistry) -> ClientTiming:
    """One reply through ``registry.stream`` alone: LiteLLM's share of the figures."""
    timing = ClientTiming(sent=time.perf_counter())
    async for chunk in registry.stream([ChatMessage("user", "Message")], "timed/model"):
        now = time.perf_counter()
        if chunk.delta:
            timing.received.append(now)
        else:
            timing.ended = now
    return timing


# --- figures ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    p50_ms: float
    p95_ms: float
    max_ms: float
    n: int


def row(label: str, seconds: list[float]) -> Row:
    values = sorted(s * MS for s in seconds)
    p95 = statistics.quantiles(values, n=100)[94] if len(values) > 1 else values[0]
    return Row(label, statistics.median(values), p95, values[-1], len(values))


def added_first(pairs: list[tuple[ProviderTiming, ClientTiming]]) -> list[float]:
    return [(c.received[0] - c.sent) - (p.written[0] - p.received) for p, c in pairs]


def per_piece(pairs: list[tuple[ProviderTiming, ClientTiming]]) -> list[float]:
    return [
        received - written
        for p, c in pairs
        for written, received in zip(p.written[1:], c.received[1:], strict=True)
    ]


def figures(
    served: list[tuple[ProviderTiming, ClientTiming]],
    alone: list[tuple[ProviderTiming, ClientTiming]],
) -> list[Row]:
    return [
        row("added latency to first piece", added_first(served)),
        row("  subscribe -> provider request", [p.received - c.sent for p, c in served]),
        row("  first piece written -> received", [c.received[0] - p.written[0] for p, c in served]),
        row("  LiteLLM alone, in process", added_first(alone)),
        row("per piece: written -> received", per_piece(served)),
        row("  LiteLLM alone, in process", per_piece(alone)),
        row("last piece -> saved reply event", [c.ended - c.received[-1] for _, c in served]),
        row("  LiteLLM alone: last piece -> usage", [c.ended - c.received[-1] for _, c in alone]),
    ]


def print_report(rows: list[Row], database: str, runs: int) -> bool:
    print(
        f"\nmessageStream through smriti serve ({database}), {runs} streams x {PIECES} pieces; "
        f"provider: {THINK_SECONDS * MS:g} ms to first piece, {INTERVAL_SECONDS * MS:g} ms apart"
    )
    print(f"{'':36}{'p50':>9}{'p95':>9}{'max':>9}{'n':>7}")
    for r in rows:
        print(f"{r.label:36}{r.p50_ms:9.2f}{r.p95_ms:9.2f}{r.max_ms:9.2f}{r.n:7d}")
    first, first_alone, piece, piece_alone = rows[0], rows[3], rows[4], rows[5]
    print(
        f"\nSmriti's own share (p50 minus LiteLLM alone): first piece "
        f"{first.p50_ms - first_alone.p50_ms:.2f} ms, per piece "
        f"{piece.p50_ms - piece_alone.p50_ms:.2f} ms"
    )
    checks = [
        (first.p50_ms < FIRST_PIECE_LIMIT_MS, "added latency to first piece", first.p50_ms,
         FIRST_PIECE_LIMIT_MS),
        (piece.p50_ms < PER_PIECE_LIMIT_MS, "added latency per piece", piece.p50_ms,
         PER_PIECE_LIMIT_MS),
    ]  # fmt: skip
    for passed, label, value, limit in checks:
        print(f"{'PASS' if passed else 'FAIL'}  {label}: p50 {value:.2f} ms < {limit:g} ms")
    return all(passed for passed, *_ in checks)


# --- the run ----------------------------------------------------------------------


async def run(database: str, runs: int, warmup: int) -> int:
    provider = TimedProvider()
    async with serving(provider.app()) as port, temporary_database(database) as url:
        with tempfile.TemporaryDirectory(prefix="smriti-bench-") as folder:
            providers = Path(folder) / "providers.yaml"
            providers.write_text(
                "providers:\n  timed:\n    litellm_provider: openai\n"
                f'    api_base: "http://127.0.0.1:{port}/v1"\n    models: [model]\n'
            )
            registry = ProviderRegistry(load_config(providers))
            alone_clients = [await litellm_once(registry) for _ in range(warmup + runs)]
            alone = list(zip(provider.timings, alone_clients, strict=True))[warmup:]
            provider.timings.clear()
            async with (
                smriti_serve(url, providers) as base,
                httpx.AsyncClient(timeout=60) as http,
                aconnect_ws(f"{base}/graphql", http, subprotocols=["graphql-transport-ws"]) as ws,
            ):
                await ws.send_json({"type": "connection_init"})
                assert (await ws.receive_json(timeout=60))["type"] == "connection_ack"
                clients = [await stream_once(ws, http, base, n) for n in range(warmup + runs)]
    served = list(zip(provider.timings, clients, strict=True))[warmup:]
    rows = figures(served, alone)
    load = os.getloadavg()[0]
    passed = print_report(rows, database, runs)
    print(f"(load average {load:.2f}; results in {RESULTS_DIR.name}/streaming-{database}.json)")
    RESULTS_DIR.mkdir(exist_ok=True)
    document = {
        "database": database,
        "runs": runs,
        "pieces": PIECES,
        "think_ms": THINK_SECONDS * MS,
        "interval_ms": INTERVAL_SECONDS * MS,
        "load": load,
        "rows": [asdict(r) for r in rows],
        "passed": passed,
    }
    (RESULTS_DIR / f"streaming-{database}.json").write_text(json.dumps(document, indent=2) + "\n")
    return EXIT_OK if passed else EXIT_TARGET_FAILED


# --- against the floor (issue 19, target 2) ------------------------------------------

# The web UI's messageStream (webui/api.js: MESSAGE_STREAM and TURN_FRAGMENT), sent with
# a new idempotencyKey per message as the web UI sends it.
WEB_UI_SUBSCRIPTION = """subscription($input: SendMessageInput!) {
  messageStream(input: $input) { __typename
    ... on StreamUserTurn { userTurn { ...TurnFields } }
    ... on StreamDelta { delta }
    ... on StreamAssistantTurn { assistantTurn { ...TurnFields } }
    ... on StreamFailed { errors { code message field } partialReply { ...TurnFields } } } }
fragment TurnFields on Turn {
  id role content contentHtml provider model sequenceNumber interrupted finishReason
  providerFinishReason replyToSequence continuesSequence exchangeNumber author { name viaToken }
  settings { instructions temperature topP maxOutputTokens stop } }"""
FLOOR_MARGIN_MS = 5.0  # target 2: Smriti's first piece within the floor's + 5 ms
FLOOR_SERIES = "floor (SSE)"
WAYS = ("SSE", "websocket")


@dataclass
class Timed:
    """One stream in the floor comparison: client and provider clocks, server CPU."""

    sent: float
    provider_asked: float = 0.0  # the provider received the request
    first_written: float = 0.0  # the provider wrote the first piece
    first_received: float = 0.0  # the client received the first piece
    pieces: int = 0
    cpu: float = 0.0  # the server's CPU time (every thread) during the stream, seconds

    @property
    def first_piece(self) -> float:
        return self.first_received - self.sent


def pieces_in(delta: str) -> int:
    """How many of the provider's pieces a ``StreamDelta`` holds: pieces that
    arrive while the server is busy go out joined, as one."""
    return delta.count(" piece")


def thread_cpu(pid: int) -> float:
    """CPU time of every thread of ``pid`` so far, in seconds (``schedstat``: ns)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue
    return total / 1e9


async def sse_stream(port: int, session_id: str, content: str, timing: Timed) -> None:
    """``messageStream`` over graphql-sse as the web UI sends it (a POST asking for
    ``text/event-stream``), on a raw socket; records when the first piece arrives."""
    body = json.dumps(
        {
            "query": WEB_UI_SUBSCRIPTION,
            "variables": {
                "input": {
                    "sessionId": session_id,
                    "content": content,
                    "idempotencyKey": uuid.uuid4().hex,
                }
            },
        }
    ).encode()
    timing.sent = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"HTTP: {head[:200]!r}")
        buffer = b""
        while True:
            data = await asyncio.wait_for(reader.read(65536), 60)
            if not data:
                raise RuntimeError("the stream ended before it was complete")
            buffer += data.replace(b"\r\n", b"\n")
            while (end := buffer.find(b"\n\n")) != -1:
                block, buffer = buffer[:end], buffer[end + 2 :]
                if b"event: complete" in block:
                    return
                start = block.find(b"data: ")
                if start == -1 or b"event: next" not in block:
                    continue
                event = json.loads(block[start + 6 :])["data"]["messageStream"]
                if "delta" in event:
                    if not timing.pieces:
                        timing.first_received = time.perf_counter()
                    timing.pieces += pieces_in(event["delta"])
                elif event.get("__typename") == "StreamFailed":
                    raise RuntimeError(f"StreamFailed: {event['errors']}")
    finally:
        writer.close()


async def ws_stream(ws: AsyncWebSocketSession, session_id: str, content: str, number: int,
                    timing: Timed) -> None:  # fmt: skip
    message = {
        "id": f"f{number}",
        "type": "subscribe",
        "payload": {
            "query": WEB_UI_SUBSCRIPTION,
            "variables": {
                "input": {
                    "sessionId": session_id,
                    "content": content,
                    "idempotencyKey": uuid.uuid4().hex,
                }
            },
        },
    }
    timing.sent = time.perf_counter()
    await ws.send_json(message)
    while True:
        reply = await ws.receive_json(timeout=60)
        if reply["type"] == "complete":
            return
        event = reply["payload"]["data"]["messageStream"]
        if event["__typename"] == "StreamDelta":
            if not timing.pieces:
                timing.first_received = time.perf_counter()
            timing.pieces += pieces_in(event["delta"])
        elif event["__typename"] == "StreamFailed":
            raise RuntimeError(f"the stream failed: {event['errors']}")


def paired(provider: TimedProvider, timing: Timed) -> Timed:
    """Fill in the provider's side of the stream just run (streams run one at a time)."""
    if len(provider.timings) != 1:
        raise RuntimeError(f"{len(provider.timings)} provider requests for one stream")
    own = provider.timings.pop()
    timing.provider_asked, timing.first_written = own.received, own.written[0]
    if timing.pieces != PIECES:
        raise RuntimeError(f"{timing.pieces} pieces received of {PIECES}")
    return timing


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(v * MS for v in values)
    p95 = statistics.quantiles(ordered, n=100)[94] if len(ordered) > 1 else ordered[0]
    return {"p50": statistics.median(ordered), "p95": p95, "min": ordered[0]}


@dataclass
class Served:
    """A server under test in the floor comparison: the floor, or a ``smriti serve``."""

    label: str
    port: int
    process: subprocess.Popen[bytes]
    log: Any
    sessions: list[str] = field(default_factory=list)
    ws: AsyncWebSocketSession | None = None


async def run_against_floor(
    database: str, rounds: int, warmup: int, compare: Path | None = None
) -> int:
    from bench.side_by_side import CLIENT_CORE, SERVER_CORE, can_pin, spawn, stop, wait_until_up

    pinned = can_pin()
    if pinned:
        os.sched_setaffinity(0, {CLIENT_CORE})
    cores = {SERVER_CORE} if pinned else None
    provider = TimedProvider()
    loads = [os.getloadavg()[0]]
    trees = [("smriti", Path.cwd())] + ([(f"{compare.name}", compare)] if compare else [])
    series = [FLOOR_SERIES] + [f"{label} {way}" for label, _ in trees for way in WAYS]
    results: dict[str, list[Timed]] = {name: [] for name in series}
    async with (
        serving(provider.app()) as port,
        temporary_database(database) as url,
        AsyncExitStack() as stack,
    ):
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="smriti-bench-")))
        base_url = f"http://127.0.0.1:{port}/v1"
        providers = folder / "providers.yaml"
        providers.write_text(
            "providers:\n  timed:\n    litellm_provider: openai\n"
            f'    api_base: "{base_url}"\n    models: [model]\n'
        )
        servers: list[Served] = []

        def started(label: str, port: int, command: list[str], cwd: Path) -> Served:
            env = {**os.environ, "PYTHONPATH": str(cwd)}
            process, log = spawn([sys.executable, *command], cwd=cwd, cores=cores, env=env)
            served = Served(label, port, process, log)
            stack.callback(log.close)
            stack.callback(stop, process)
            servers.append(served)
            return served

        floor_port = _free_port()
        floor = started(
            FLOOR_SERIES,
            floor_port,
            ["-m", "bench.floor", str(floor_port), "--litellm-stream", base_url],
            Path.cwd(),
        )
        for label, tree in trees:
            serve_port = _free_port()
            command = ["-m", "api", "serve", "--port", str(serve_port), "--database", url]
            command += ["--providers", str(providers), "--log-level", "warning", "--workers", "1"]
            started(label, serve_port, command, tree)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=60))
        try:
            await wait_until_up(http, f"http://127.0.0.1:{floor.port}/", floor.process)
            for served in servers[1:]:
                base = f"http://127.0.0.1:{served.port}"
                await wait_until_up(http, f"{base}/healthz", served.process)
                for _ in range(2 * (warmup + rounds)):
                    created = await http.post(f"{base}/graphql", json={"query": CREATE_SESSION})
                    served.sessions.append(created.json()["data"]["createSession"]["session"]["id"])
                ws: AsyncWebSocketSession = await stack.enter_async_context(
                    aconnect_ws(f"{base}/graphql", http, subprotocols=["graphql-transport-ws"])
                )
                await ws.send_json({"type": "connection_init"})
                assert (await ws.receive_json(timeout=60))["type"] == "connection_ack"
                served.ws = ws
            for number in range(warmup + rounds):
                content = f"Message {number}"
                for served in servers:
                    for way in WAYS if served is not floor else ("SSE",):
                        timing = Timed(sent=0.0)
                        cpu = thread_cpu(served.process.pid)
                        if served is floor:
                            await sse_stream(floor.port, "floor", content, timing)
                        elif way == "SSE":
                            await sse_stream(served.port, served.sessions.pop(), content, timing)
                        else:
                            assert served.ws is not None
                            sid = served.sessions.pop()
                            await ws_stream(served.ws, sid, content, number, timing)
                        await asyncio.sleep(0.01)  # the server ends its request
                        timing.cpu = thread_cpu(served.process.pid) - cpu
                        name = FLOOR_SERIES if served is floor else f"{served.label} {way}"
                        if number >= warmup:
                            results[name].append(paired(provider, timing))
                        else:
                            provider.timings.clear()
                if number == warmup + rounds // 2:
                    loads.append(os.getloadavg()[0])
        except Exception:
            for served in servers:
                served.log.seek(0)
                print(served.log.read().decode(errors="replace")[-3000:], file=sys.stderr)
            raise
    loads.append(os.getloadavg()[0])
    return report_against_floor(results, database, rounds, loads, pinned)


def report_against_floor(
    results: dict[str, list[Timed]], database: str, rounds: int, loads: list[float],
    pinned: bool,
) -> int:  # fmt: skip
    floor = results[FLOOR_SERIES]
    print(
        f"\nTime to the first piece, messageStream against the LiteLLM streaming floor "
        f"({database}), {rounds} interleaved rounds; provider: {THINK_SECONDS * MS:g} ms "
        f"to its first piece; {'servers on core 0, client on core 1' if pinned else 'unpinned'}"
    )
    print(f"{'':34}{'p50':>8}{'p95':>8}{'min':>8}   (ms)")
    document: dict[str, Any] = {"database": database, "rounds": rounds, "loads": loads}
    passed = True
    for name, series in results.items():
        first = stats([t.first_piece for t in series])
        asked = stats([t.provider_asked - t.sent for t in series])
        back = stats([t.first_received - t.first_written for t in series])
        cpu = stats([t.cpu for t in series])
        diff = stats([t.first_piece - f.first_piece for t, f in zip(series, floor, strict=True)])
        print(f"{name}")
        print(f"{'  first piece':34}{first['p50']:8.2f}{first['p95']:8.2f}{first['min']:8.2f}")
        print(f"{'  request -> provider asked':34}{asked['p50']:8.2f}{asked['p95']:8.2f}"
              f"{asked['min']:8.2f}")  # fmt: skip
        print(f"{'  first piece written -> received':34}{back['p50']:8.2f}{back['p95']:8.2f}"
              f"{back['min']:8.2f}")  # fmt: skip
        print(f"{'  server CPU a stream':34}{cpu['p50']:8.2f}{cpu['p95']:8.2f}{cpu['min']:8.2f}")
        entry: dict[str, Any] = {
            "first_piece": first,
            "provider_asked": asked,
            "first_back": back,
            "cpu": cpu,
        }
        if name != FLOOR_SERIES:
            margin = first["p50"] - stats([f.first_piece for f in floor])["p50"]
            print(f"{'  - floor, same round':34}{diff['p50']:8.2f}{diff['p95']:8.2f}"
                  f"{diff['min']:8.2f}")  # fmt: skip
            ok = margin <= FLOOR_MARGIN_MS
            passed = passed and ok
            print(f"{'PASS' if ok else 'FAIL'}  {name}: first piece p50 {margin:+.2f} ms over "
                  f"the floor's (target <= +{FLOOR_MARGIN_MS:g} ms)")  # fmt: skip
            entry["over_floor_p50_ms"], entry["round_difference"] = margin, diff
        document[name] = entry
    print(f"(load average {' -> '.join(f'{x:.2f}' for x in loads)}; results in "
          f"{RESULTS_DIR.name}/streaming-floor-{database}.json)")  # fmt: skip
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"streaming-floor-{database}.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return EXIT_OK if passed else EXIT_TARGET_FAILED


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.streaming", description=__doc__)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quick", action="store_true", help="20 streams instead of 100")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="time to the first piece against bench/floor.py --litellm-stream (issue 19, 2)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="with --floor: also a smriti serve from the checkout in DIR, in the same rounds",
    )
    parser.add_argument("--rounds", type=int, help="streams per series (default 100, 20 quick)")
    args = parser.parse_args(argv)
    runs = args.rounds or (20 if args.quick else 100)
    if args.floor:
        return asyncio.run(run_against_floor(args.db, runs, warmup=5, compare=args.compare))
    return asyncio.run(run(args.db, runs, warmup=5))


if __name__ == "__main__":
    raise SystemExit(main())
