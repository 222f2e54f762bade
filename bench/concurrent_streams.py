"""How many streamed replies one ``smriti serve`` worker keeps up with (issue 19, target 1).

    python -m bench.concurrent_streams                      # SQLite, 100..600 streams, 20 s each
    python -m bench.concurrent_streams --db both --streams 100,200,300
    python -m bench.concurrent_streams --drip 0.2 --pieces 100
    python -m bench.concurrent_streams --quick              # 50,100,200 streams, 5 s each
    python -m bench.concurrent_streams --quick --profile /tmp/s.prof   # cProfile Smriti's runs
    python -m bench.concurrent_streams --gc /tmp/gc.jsonl     # its garbage collections

What runs (see docs/benchmarks.md, "Concurrent streams"):

* a dripping OpenAI-compatible provider (``bench/drip.py``) in its own process:
  every streamed answer is ``--pieces`` word pieces, one every ``--drip`` seconds;
* the floor: ``bench/floor.py --litellm-stream``, a bare Starlette app under
  uvicorn that makes the streamed LiteLLM call Smriti makes and forwards each
  piece to its client as an SSE event; the issue's floor, the basis of PASS/FAIL;
* the raw floor: ``bench/floor.py --litellm-raw``, the same app reading the
  same stream as Smriti's transport does for an OpenAI-compatible route,
  beneath LiteLLM's wrapper (the OpenAI SDK's chunks): printed beside, as
  information, to say what Smriti costs over a bare app reading what it reads;
* ``smriti serve`` (one worker) on a throw-away SQLite file or PostgreSQL
  database, with a providers.yaml whose model is the dripping provider through
  LiteLLM; its clients run ``messageStream`` over SSE (graphql-sse, distinct
  connections mode, ``Accept: text/event-stream``), as the web UI does.

The servers run on core 0; this client, the provider and the probe on core 1.
For each rung N of the ladder, floor, raw floor and Smriti in turn: N clients (raw asyncio
HTTP/1.1, one connection each) start a stream at once. A stream is on time when
it ends within 1.3x pieces x drip of its start with every piece, in order (its
deltas joined are the expected text: Smriti sends pieces that were waiting
together as one StreamDelta; CPU per piece counts the provider's pieces). For
Smriti the replies are then read back through GraphQL: a reply counts only when
it is stored whole (content equal to the expected text, finishReason STOP).
Meanwhile a probe sends a trivial query (``{ viewer { name } }``) every 100 ms:
its percentiles over the run (none excluded), by phase (the start burst, the
steady pieces, the end burst: ``probe_phases``) and its slowest answers with
their send times. ``--gc FILE``: the server's garbage collections too, by
generation, the longest with their times (``bench/profiled_serve.py``).
The server's CPU time (/proc/PID/stat utime + stime) and RSS are read before
and after each run.

Exit status: 0 when every target passes, 1 when one fails, 2 when the run fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import json
import signal
import statistics
import sys
import tempfile
import time
import traceback
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.databases import temporary_database
from bench.drip import WARM, expected_text
from bench.profiled_serve import GC_VARIABLE, PROFILE_VARIABLE
from bench.side_by_side import (
    CLIENT_CORE,
    SERVER_CORE,
    BenchmarkError,
    can_pin,
    database_version,
    environment,
    output,
    provider_process,
    rss_mb,
    spawn,
    stop,
    wait_until_up,
    write_providers,
)
from bench.workers import Connection
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
EXIT_OK, EXIT_TARGET_FAILED, EXIT_ERROR = 0, 1, 2
MS = 1000.0
FLOOR, FLOOR_RAW, SMRITI = "floor", "floor-raw", "smriti"
PROVIDER, MODEL = "drip", "model"
# Targets of issue 19, target 1.
ON_TIME = 1.3  # a stream ends within 1.3x the drip time
FLOOR_SHARE = 0.8  # Smriti keeps up with at least 0.8x the streams the floor does
CPU_RATIO_LIMIT = 1.3  # Smriti's CPU per piece at most 1.3x the floor's
PROBE_P99_LIMIT_MS = 100.0
PROBE_EVERY = 0.1  # seconds
# A run is cut off this long after the on-time limit: later streams are late anyway.
GRACE_SECONDS = 10.0
LADDER = (100, 200, 300, 400, 600)
QUICK_LADDER = (50, 100, 200)
QUICK_PIECES, QUICK_DRIP = 25, 0.2
CREATORS = 8  # connections creating sessions before a run
READERS = 8  # connections reading the stored replies after a run

SUBSCRIPTION = (
    "subscription($input: SendMessageInput!) { messageStream(input: $input) { __typename "
    "... on StreamDelta { delta } ... on StreamAssistantTurn { assistantTurn { sequenceNumber } } "
    "... on StreamFailed { errors { code message } } } }"
)
CREATE = (
    "mutation($m: String!) { createSession(input: {model: $m}) { session { id } errors { code } } }"
)
STORED = (
    "query($s: ID!) { session(id: $s) { turns(last: 2) { edges { node { role content "
    "finishReason interrupted } } } } }"
)
PROBE = "{ viewer { name } }"


# --- one stream ---------------------------------------------------------------------------


@dataclass
class Stream:
    started: float = 0.0
    ended: float | None = None  # the stream completed (event: complete)
    first_piece: float | None = None  # the first delta arrived
    last_piece: float | None = None  # the last delta arrived
    pieces: list[str] = field(default_factory=list)  # the deltas, as received
    failure: str | None = None


async def read_events(reader: asyncio.StreamReader, stream: Stream) -> None:
    """Read a chunked SSE response: one ``event/data`` block per GraphQL result."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lowered = head.lower()
    if status != 200 or b"text/event-stream" not in lowered:
        stream.failure = f"HTTP {status}: {head[:200]!r}"
        return
    chunked = b"transfer-encoding: chunked" in lowered
    buffer = b""
    while True:
        if chunked:
            size = int(await reader.readline(), 16)
            if size == 0:
                break
            # Smriti's events end their lines with CRLF, the floor's with LF.
            buffer += (await reader.readexactly(size + 2))[:-2].replace(b"\r\n", b"\n")
        else:
            data = await reader.read(65536)
            if not data:
                break
            buffer += data.replace(b"\r\n", b"\n")
        while (end := buffer.find(b"\n\n")) != -1:
            block, buffer = buffer[:end], buffer[end + 2 :]
            if block.startswith(b"event: complete"):
                stream.ended = time.perf_counter()
                return
            start = block.find(b"data: ")
            if start == -1 or not block.startswith(b"event: next"):
                continue  # a comment or a keep-alive
            result = json.loads(block[start + 6 :])
            event = (result.get("data") or {}).get("messageStream")
            if event is None:
                stream.failure = f"no event: {result}"
                return
            if "delta" in event:
                stream.pieces.append(event["delta"])
                stream.last_piece = time.perf_counter()
                if stream.first_piece is None:
                    stream.first_piece = stream.last_piece
            elif event.get("__typename") == "StreamFailed":
                stream.failure = f"StreamFailed: {event.get('errors')}"
    stream.failure = stream.failure or "the stream ended before it was complete"


async def one_stream(port: int, session_id: str, content: str, stream: Stream) -> None:
    body = json.dumps(
        {
            "query": SUBSCRIPTION,
            "variables": {"input": {"sessionId": session_id, "content": content}},
        }
    ).encode()
    stream.started = time.perf_counter()
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        writer.write(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        await read_events(reader, stream)
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        stream.failure = f"{type(exc).__name__}: {exc}"
    finally:
        if writer is not None:
            writer.close()


# --- the probe --------------------------------------------------------------------------


async def probe(port: int, samples: list[tuple[float, float]], errors: list[str]) -> None:
    """``{ viewer { name } }`` every PROBE_EVERY seconds until cancelled; ``samples``
    gets each one's send time (perf_counter) and latency (ms)."""
    connection = Connection(port)
    try:
        next_at = time.perf_counter()
        while True:
            started = time.perf_counter()
            try:
                answer = await connection.post(PROBE, {})
                if not (answer.get("data") or {}).get("viewer"):
                    errors.append(str(answer)[:200])
            except (OSError, RuntimeError, asyncio.IncompleteReadError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                connection.close()
                connection = Connection(port)
            samples.append((started, (time.perf_counter() - started) * MS))
            next_at += PROBE_EVERY
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    finally:
        connection.close()


# --- a run ------------------------------------------------------------------------------


@dataclass
class Run:
    system: str
    streams: int
    load: tuple[float, float]  # 1-minute load average before and after
    on_time: int = 0
    complete: int = 0  # every piece, in order (whenever it ended)
    stored: int | None = None  # Smriti: replies stored whole with finishReason STOP
    pieces_delivered: int = 0  # the provider's pieces in the text received
    events_delivered: int = 0  # the StreamDelta events carrying them (Smriti joins
    # the pieces waiting together into one)
    cpu_seconds: float = 0.0
    rss_mb_before: float = 0.0
    rss_mb_after: float = 0.0
    wall_seconds: float = 0.0  # the first start to the last end (or the cut-off)
    slowest_seconds: float | None = None  # the longest complete stream
    # Start -> last piece, the slowest stream that received every piece (ended or not).
    last_piece_seconds: float | None = None
    probe_ms: dict[str, float] = field(default_factory=dict)  # every probe, none excluded
    # The same by phase of the run (see ``probe_phases``): the start burst (until
    # the last stream's first piece), the end burst (from the first stream's
    # last piece) and the steady state between.
    probe_by_phase: dict[str, dict[str, float]] = field(default_factory=dict)
    # The slowest probes: (seconds from the run's start to the probe's send, ms).
    probe_worst: list[tuple[float, float]] = field(default_factory=list)
    probe_errors: int = 0
    # --gc: the server's collections in the run, by generation ({count, ms, max_ms}),
    # and its longest pauses (seconds from the run's start, ms, generation).
    # "heap": the objects a full pass walked at the run's end ("tracked"), and
    # those frozen out of it ("frozen").
    gc: dict[str, dict[str, float]] = field(default_factory=dict)
    gc_longest: list[tuple[float, float, int]] = field(default_factory=list)
    began: float = 0.0  # the run's start, on perf_counter's clock
    # The other side's CPU in the run, on the client's core: is it the bottleneck?
    client_cpu_seconds: float = 0.0
    provider_cpu_seconds: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)  # first words of each failure

    @property
    def kept_up(self) -> bool:
        whole = self.on_time == self.streams
        return whole and (self.stored is None or self.stored == self.streams)

    @property
    def cpu_ms_per_piece(self) -> float:
        return self.cpu_seconds * MS / self.pieces_delivered if self.pieces_delivered else 0.0


def percentiles(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {}
    ordered = sorted(samples)
    cut = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else None

    def at(point: int) -> float:
        return cut[point - 1] if cut else ordered[0]

    return {"p50": at(50), "p95": at(95), "p99": at(99), "max": ordered[-1], "n": len(ordered)}


START, STEADY, END = "start", "steady", "end"
WORST_PROBES = 10


def probe_phases(
    samples: list[tuple[float, float]], streams: list[Stream], began: float
) -> tuple[dict[str, dict[str, float]], list[tuple[float, float]]]:
    """The probe's latencies by phase of the run, and the slowest probes with
    their send times (seconds from the run's start).

    Start: sent until the last stream's first piece (every start's work is
    done); end: answered after the first stream's last piece (the saves
    begin); steady: the others.
    """
    firsts = [s.first_piece for s in streams if s.first_piece is not None]
    lasts = [s.last_piece for s in streams if s.last_piece is not None]
    start_until = max(firsts) if firsts else float("inf")
    end_from = min(lasts) if lasts else float("inf")
    phases: dict[str, list[float]] = {START: [], STEADY: [], END: []}
    for sent, ms in samples:
        answered = sent + ms / MS
        phase = START if sent <= start_until else END if answered >= end_from else STEADY
        phases[phase].append(ms)
    worst = sorted(samples, key=lambda sample: sample[1], reverse=True)[:WORST_PROBES]
    return (
        {phase: percentiles(values) for phase, values in phases.items() if values},
        [(round(sent - began, 2), round(ms, 1)) for sent, ms in worst],
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` alone (not its children: this process's
    children are the servers), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rss(pid: int) -> float:
    return sum(rss_mb(pid).values())


async def create_sessions(port: int, count: int) -> list[str]:
    """``count`` new sessions on the dripping model (untimed)."""
    found: list[str] = []

    async def creator(share: int) -> None:
        connection = Connection(port)
        try:
            for _ in range(share):
                answer = await connection.post(CREATE, {"m": f"{PROVIDER}/{MODEL}"})
                created = answer["data"]["createSession"]
                if created["errors"]:
                    raise BenchmarkError(f"createSession: {created['errors']}")
                found.append(created["session"]["id"])
        finally:
            connection.close()

    shares = [count // CREATORS + (1 if n < count % CREATORS else 0) for n in range(CREATORS)]
    await asyncio.gather(*(creator(s) for s in shares if s))
    return found


async def count_stored(port: int, sessions: list[str], expected: str) -> tuple[int, list[str]]:
    """Replies stored whole: the last turn is the assistant's, text exact, finish STOP."""
    stored = 0
    wrong: list[str] = []
    pending = list(sessions)

    async def reader() -> None:
        nonlocal stored
        connection = Connection(port)
        try:
            while pending:
                sid = pending.pop()
                answer = await connection.post(STORED, {"s": sid})
                edges = answer["data"]["session"]["turns"]["edges"]
                turn = edges[-1]["node"] if edges else None
                if (
                    turn is not None
                    and str(turn["role"]).upper() == "ASSISTANT"
                    and turn["content"] == expected
                    and turn["finishReason"] == "STOP"
                    and not turn["interrupted"]
                ):
                    stored += 1
                elif len(wrong) < 3:
                    wrong.append(json.dumps(turn)[:200])
        finally:
            connection.close()

    await asyncio.gather(*(reader() for _ in range(READERS)))
    return stored, wrong


def pieces_in(text: str) -> int:
    """The dripping provider's pieces in ``text``: each piece (``w<i>.``) has one dot."""
    return text.count(".")


async def one_run(
    system: str, port: int, pid: int, provider_pid: int, count: int, pieces: int, drip: float
) -> Run:
    expected = expected_text(pieces)
    sessions = await create_sessions(port, count) if system == SMRITI else [system] * count
    await asyncio.sleep(1.0)  # let the creations' after-work settle
    run = Run(system, count, (os.getloadavg()[0], 0.0))
    limit = ON_TIME * pieces * drip
    rss_before, cpu_before = server_rss(pid), cpu_seconds(pid)
    client_before, provider_before = cpu_seconds(os.getpid()), cpu_seconds(provider_pid)
    samples: list[tuple[float, float]] = []
    probe_errors: list[str] = []
    prober = asyncio.create_task(probe(port, samples, probe_errors))
    streams = [Stream() for _ in range(count)]
    began = run.began = time.perf_counter()
    tasks = [
        asyncio.create_task(one_stream(port, sid, f"message {n}", stream))
        for n, (sid, stream) in enumerate(zip(sessions, streams, strict=True))
    ]
    _, late = await asyncio.wait(tasks, timeout=limit + GRACE_SECONDS)
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)
    run.wall_seconds = time.perf_counter() - began
    prober.cancel()
    await asyncio.gather(prober, return_exceptions=True)
    if system == SMRITI:
        # A cancelled stream is saved (interrupted) once the server notices the
        # closed connection; the CPU it spends on that belongs to the run.
        await asyncio.sleep(2.0 if late else 0.5)
    run.cpu_seconds = cpu_seconds(pid) - cpu_before
    run.client_cpu_seconds = cpu_seconds(os.getpid()) - client_before
    run.provider_cpu_seconds = cpu_seconds(provider_pid) - provider_before
    run.rss_mb_before, run.rss_mb_after = rss_before, server_rss(pid)
    run.probe_ms = percentiles([ms for _, ms in samples])
    run.probe_by_phase, run.probe_worst = probe_phases(samples, streams, began)
    run.probe_errors = len(probe_errors)
    durations = []
    for stream in streams:
        text = "".join(stream.pieces)
        run.pieces_delivered += pieces_in(text)
        run.events_delivered += len(stream.pieces)
        whole = text == expected
        if stream.ended is not None and whole:
            run.complete += 1
            duration = stream.ended - stream.started
            durations.append(duration)
            if duration <= limit:
                run.on_time += 1
        else:
            reason = stream.failure or ("cut off" if stream.ended is None else "pieces differ")
            key = reason[:60]
            run.failures[key] = run.failures.get(key, 0) + 1
    run.slowest_seconds = max(durations) if durations else None
    last = [
        s.last_piece - s.started
        for s in streams
        if s.last_piece and pieces_in("".join(s.pieces)) == pieces
    ]
    run.last_piece_seconds = max(last) if last else None
    if system == SMRITI:
        run.stored, wrong = await count_stored(port, sessions, expected)
        for text in wrong:
            run.failures[f"stored: {text[:60]}"] = run.failures.get(f"stored: {text[:60]}", 0) + 1
    run.load = (run.load[0], os.getloadavg()[0])
    return run


def describe(run: Run, pieces: int, drip: float) -> str:
    stored = "" if run.stored is None else f", stored {run.stored}"
    slowest = f"{run.slowest_seconds:.1f} s" if run.slowest_seconds is not None else "-"
    if run.last_piece_seconds is not None:
        slowest += f", every piece by {run.last_piece_seconds:.1f} s"
    probe = run.probe_ms
    probe_text = (
        f"probe p50/p95/p99/max {probe['p50']:.0f}/{probe['p95']:.0f}/{probe['p99']:.0f}/"
        f"{probe['max']:.0f} ms"
        if probe
        else "no probe"
    )
    errors = f" ({run.probe_errors} probe errors)" if run.probe_errors else ""
    phases = "; ".join(
        f"{phase} p99 {values['p99']:.0f} ms (n {values['n']:.0f})"
        for phase, values in run.probe_by_phase.items()
    )
    worst = ", ".join(f"{ms:.0f} ms at {sent:.1f} s" for sent, ms in run.probe_worst[:5])
    collections = ", ".join(
        f"gen {gen} {c['count']:.0f}x {c['ms']:.0f} ms (max {c['max_ms']:.0f})"
        if gen != "heap"
        else f"heap {c['tracked']:.0f} objects tracked, {c['frozen']:.0f} frozen"
        for gen, c in run.gc.items()
    )
    longest = ", ".join(f"{ms:.0f} ms (gen {gen}) at {at:.1f} s" for at, ms, gen in run.gc_longest)
    failures = "; ".join(f"{n}x {k}" for k, n in run.failures.items())
    return (
        f"{run.system:9}{run.streams:5} streams: on time {run.on_time}, whole {run.complete}"
        f"{stored}; slowest {slowest} (limit {ON_TIME * pieces * drip:.1f} s); "
        f"CPU {run.cpu_ms_per_piece:.2f} ms/piece ({run.cpu_seconds:.1f} s for "
        f"{run.pieces_delivered} pieces in {run.events_delivered} events); "
        f"RSS {run.rss_mb_before:.0f} -> {run.rss_mb_after:.0f} MB;"
        f" {probe_text}{errors}; load {run.load[0]:.2f} -> {run.load[1]:.2f}; client + provider"
        f" CPU {run.client_cpu_seconds:.1f} + {run.provider_cpu_seconds:.1f} s"
        f" in {run.wall_seconds:.1f} s"
        + (f"\n             probe by phase: {phases}; slowest: {worst}" if phases else "")
        + (f"\n             GC: {collections}; longest: {longest}" if run.gc else "")
        + (f"\n             failures: {failures}" if failures else "")
    )


# --- the servers ------------------------------------------------------------------------


def dripping_provider(
    pieces: int, drip: float, core: set[int] | None
) -> AbstractAsyncContextManager[tuple[str, int]]:
    """``bench/drip.py`` in its own process; yields its base URL and process id."""
    return provider_process("bench.drip", "--pieces", str(pieces), "--drip", str(drip), core=core)


@dataclass
class Args:
    databases: list[str]
    ladder: list[int]
    pieces: int
    drip: float
    profile: Path | None = None
    gc: Path | None = None


@dataclass
class Result:
    database: str
    version: str
    runs: list[Run]


async def warm(port: int, system: str, sessions: int = 3) -> None:
    """A few short streams before the ladder: LiteLLM's first-call work is not the ladder's."""
    sids = await create_sessions(port, sessions) if system == SMRITI else [system] * sessions
    streams = [Stream() for _ in sids]
    pairs = zip(sids, streams, strict=True)
    await asyncio.gather(*(one_stream(port, sid, WARM, stream) for sid, stream in pairs))
    failed = [s.failure for s in streams if s.failure]
    if failed:
        raise BenchmarkError(f"{system}: a warm-up stream failed: {failed[0]}")


async def run_database(kind: str, args: Args, pinned: bool) -> Result:
    server_core = {SERVER_CORE} if pinned else None
    client_core = {CLIENT_CORE} if pinned else None
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="smriti-streams-")))
        drip_url, drip_pid = await stack.enter_async_context(
            dripping_provider(args.pieces, args.drip, client_core)
        )
        database_url = await stack.enter_async_context(temporary_database(kind))
        version = await database_version(database_url)
        providers = write_providers(folder, drip_url, PROVIDER, MODEL)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=10))
        floor_port, raw_port, smriti_port = free_port(), free_port(), free_port()
        floor, floor_log = spawn(
            [sys.executable, "-m", "bench.floor", str(floor_port), "--litellm-stream", drip_url],
            cwd=ROOT,
            cores=server_core,
        )
        stack.callback(floor_log.close)
        stack.callback(stop, floor)
        raw_floor, raw_log = spawn(
            [sys.executable, "-m", "bench.floor", str(raw_port), "--litellm-raw", drip_url],
            cwd=ROOT,
            cores=server_core,
        )
        stack.callback(raw_log.close)
        stack.callback(stop, raw_floor)
        # --profile: cProfile (CPU time) over Smriti's runs only, not its start or warm-up;
        # --gc: its garbage collections, the same way.
        recorded = args.profile is not None or args.gc is not None
        module = "bench.profiled_serve" if recorded else "api"
        command = [sys.executable, "-m", module, "serve", "--port", str(smriti_port)]
        command += ["--database", database_url, "--providers", str(providers)]
        command += ["--log-level", "warning", "--workers", "1"]
        env = None
        if recorded:
            env = environment()
            if args.profile:
                env[PROFILE_VARIABLE] = str(args.profile)
            if args.gc:
                args.gc.unlink(missing_ok=True)
                env[GC_VARIABLE] = str(args.gc)
        smriti, smriti_log = spawn(command, cwd=ROOT, cores=server_core, env=env)
        stack.callback(smriti_log.close)
        stack.callback(stop, smriti)
        runs: list[Run] = []
        try:
            await wait_until_up(http, f"http://127.0.0.1:{floor_port}/", floor)
            await wait_until_up(http, f"http://127.0.0.1:{raw_port}/", raw_floor)
            await wait_until_up(http, f"http://127.0.0.1:{smriti_port}/healthz", smriti)
            await warm(floor_port, FLOOR)
            await warm(raw_port, FLOOR_RAW)
            await warm(smriti_port, SMRITI)
            print(f"{version}: {args.pieces} pieces x {args.drip:g} s", file=sys.stderr)
            for count in args.ladder:
                for system, port, pid in (
                    (FLOOR, floor_port, floor.pid),
                    (FLOOR_RAW, raw_port, raw_floor.pid),
                    (SMRITI, smriti_port, smriti.pid),
                ):
                    profiled = recorded and system == SMRITI
                    if profiled:
                        smriti.send_signal(signal.SIGUSR1)
                    run = await one_run(system, port, pid, drip_pid, count, args.pieces, args.drip)
                    if profiled:
                        smriti.send_signal(signal.SIGUSR2)  # written after every run: cumulative
                    if profiled and args.gc:
                        await read_collections(args.gc, run)
                    runs.append(run)
                    print(describe(run, args.pieces, args.drip), flush=True)
        except Exception:
            print(f"--- smriti serve output ---\n{output(smriti_log)}", file=sys.stderr)
            print(f"--- floor output ---\n{output(floor_log)}", file=sys.stderr)
            print(f"--- raw floor output ---\n{output(raw_log)}", file=sys.stderr)
            raise
    return Result(kind, version, runs)


async def read_collections(path: Path, run: Run, wait: float = 30.0) -> None:
    """The collections recorded during ``run`` (the file's lines since the last
    run's, which this empties), summed by generation, the longest kept. The
    server writes them on SIGUSR2, its heap's line last: waited for."""
    deadline = time.perf_counter() + wait
    text = ""
    while time.perf_counter() < deadline:
        text = path.read_text() if path.exists() else ""
        if '"tracked"' in text and text.endswith("\n"):
            break
        await asyncio.sleep(0.2)
    lines = text.splitlines()
    path.write_text("")
    records = [json.loads(line) for line in lines]
    pauses = [r for r in records if "generation" in r]
    for heap in (r for r in records if "tracked" in r):
        run.gc["heap"] = {"tracked": heap["tracked"], "frozen": heap["frozen"]}
    for gen in sorted({p["generation"] for p in pauses}):
        mine = [p["ms"] for p in pauses if p["generation"] == gen]
        run.gc[str(gen)] = {"count": len(mine), "ms": sum(mine), "max_ms": max(mine)}
    longest = sorted(pauses, key=lambda p: p["ms"], reverse=True)[:5]
    run.gc_longest = [
        (round(p["at"] - run.began, 2), round(p["ms"], 1), p["generation"]) for p in longest
    ]


# --- the verdict --------------------------------------------------------------------------


def largest_kept_up(runs: list[Run], system: str) -> Run | None:
    """The run of ``system`` with the most streams, every one on time (and stored)."""
    kept = [r for r in runs if r.system == system and r.kept_up]
    return max(kept, key=lambda r: r.streams) if kept else None


def median_cpu(runs: list[Run], system: str) -> float:
    values = [r.cpu_ms_per_piece for r in runs if r.system == system and r.pieces_delivered]
    return statistics.median(values) if values else 0.0


def verdict(result: Result, args: Args) -> tuple[list[tuple[bool, str]], list[str], dict[str, Any]]:
    runs = result.runs
    floor_best, smriti_best = largest_kept_up(runs, FLOOR), largest_kept_up(runs, SMRITI)
    floor_n = floor_best.streams if floor_best else 0
    smriti_n = smriti_best.streams if smriti_best else 0
    top = max(args.ladder)
    ratio = smriti_n / floor_n if floor_n else 0.0

    # CPU per piece over the rungs both kept up with (the same work on each), else
    # those where both delivered every piece (a stream cut off early has paid its
    # start for few pieces), else every rung.
    def rungs(test: Any, floor: str = FLOOR) -> set[int]:
        kept = [{r.streams for r in runs if r.system == s and test(r)} for s in (floor, SMRITI)]
        return kept[0] & kept[1]

    shared = rungs(lambda r: r.kept_up) or rungs(
        lambda r: r.pieces_delivered == r.streams * args.pieces
    )
    compared = [r for r in runs if r.streams in shared] or runs
    floor_cpu, smriti_cpu = median_cpu(compared, FLOOR), median_cpu(compared, SMRITI)
    cpu_ratio = smriti_cpu / floor_cpu if floor_cpu else float("inf")
    probe = smriti_best.probe_ms if smriti_best else {}
    p99 = probe.get("p99", float("inf"))
    floor_text = str(floor_n)
    if floor_n == top:
        floor_text += " (the ladder's top: it may keep up with more)"
    checks = [
        (
            floor_n > 0 and ratio >= FLOOR_SHARE,
            f"streams kept up with (on time, whole and stored): Smriti {smriti_n}, "
            f"floor {floor_text}; ratio {ratio:.2f} >= {FLOOR_SHARE:g}",
        ),
        (
            cpu_ratio <= CPU_RATIO_LIMIT,
            f"CPU per piece: Smriti {smriti_cpu:.2f} ms, floor {floor_cpu:.2f} ms; ratio "
            f"{cpu_ratio:.2f} <= {CPU_RATIO_LIMIT:g} (median over rungs {sorted(shared) or 'all'})",
        ),
        (
            p99 < PROBE_P99_LIMIT_MS,
            f"trivial query p99 < {PROBE_P99_LIMIT_MS:g} ms meanwhile, at Smriti's largest "
            f"kept-up rung ({smriti_n} streams): {p99:.0f} ms",
        ),
    ]
    # Beside it, not judged: the floor reading the stream as Smriti does.
    raw_best = largest_kept_up(runs, FLOOR_RAW)
    raw_n = raw_best.streams if raw_best else 0
    raw_shared = rungs(lambda r: r.kept_up, FLOOR_RAW) or rungs(
        lambda r: r.pieces_delivered == r.streams * args.pieces, FLOOR_RAW
    )
    raw_compared = [r for r in runs if r.streams in raw_shared] or runs
    raw_cpu = median_cpu(raw_compared, FLOOR_RAW)
    raw_smriti_cpu = median_cpu(raw_compared, SMRITI)
    raw_ratio = smriti_n / raw_n if raw_n else 0.0
    raw_cpu_ratio = raw_smriti_cpu / raw_cpu if raw_cpu else float("inf")
    raw_text = str(raw_n) + (" (the ladder's top)" if raw_n == top else "")
    beside = [
        f"beside the raw floor (the same stream read beneath LiteLLM's wrapper, as Smriti "
        f"reads it): kept up with {raw_text}; Smriti's ratio {raw_ratio:.2f}",
        f"beside the raw floor: CPU per piece Smriti {raw_smriti_cpu:.2f} ms, raw floor "
        f"{raw_cpu:.2f} ms; ratio {raw_cpu_ratio:.2f} (median over rungs "
        f"{sorted(raw_shared) or 'all'})",
    ]
    summary = {
        "raw_floor_kept_up": raw_n,
        "raw_ratio": raw_ratio,
        "raw_floor_cpu_ms_per_piece": raw_cpu,
        "raw_cpu_ratio": raw_cpu_ratio,
        "floor_kept_up": floor_n,
        "smriti_kept_up": smriti_n,
        "ratio": ratio,
        "floor_cpu_ms_per_piece": floor_cpu,
        "smriti_cpu_ms_per_piece": smriti_cpu,
        "cpu_ratio": cpu_ratio,
        "probe_at_largest": probe,
    }
    return checks, beside, summary


def report(results: list[Result], args: Args, pinned: bool) -> int:
    where = "servers on core 0, client + provider on core 1" if pinned else "not pinned"
    documents = []
    passed_all = True
    for result in results:
        print(
            f"\nconcurrent streams: {result.version}, {args.pieces} pieces x {args.drip:g} s "
            f"(on time: within {ON_TIME * args.pieces * args.drip:.1f} s), {where}"
        )
        for run in result.runs:
            print(describe(run, args.pieces, args.drip))
        checks, beside, summary = verdict(result, args)
        print()
        for passed, text in checks:
            print(f"{'PASS' if passed else 'FAIL'}  {text}")
        for text in beside:
            print(f"INFO  {text}")
        passed_all = passed_all and all(p for p, _ in checks)
        documents.append(
            {
                "database": result.version,
                "pieces": args.pieces,
                "drip_seconds": args.drip,
                "ladder": args.ladder,
                "pinned": pinned,
                "runs": [
                    {**asdict(r), "cpu_ms_per_piece": r.cpu_ms_per_piece, "kept_up": r.kept_up}
                    for r in result.runs
                ],
                "summary": summary,
                "passed": [{"passed": p, "check": t} for p, t in checks],
            }
        )
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"concurrent-streams-{result.database}.json"
        path.write_text(json.dumps(documents[-1], indent=2) + "\n")
        print(f"written: {path}")
    return EXIT_OK if passed_all else EXIT_TARGET_FAILED


async def run(args: Args) -> int:
    pinned = can_pin()
    if pinned:
        os.sched_setaffinity(0, {CLIENT_CORE})
    results = [await run_database(kind, args, pinned) for kind in args.databases]
    return report(results, args, pinned)


def parse(argv: list[str] | None) -> Args:
    parser = argparse.ArgumentParser(
        prog="python -m bench.concurrent_streams", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--streams", help="the ladder, e.g. 100,200,300 (default 100..600)")
    parser.add_argument("--pieces", type=int, help="pieces per reply (default 100)")
    parser.add_argument("--drip", type=float, help="seconds between pieces (default 0.2)")
    parser.add_argument(
        "--quick", action="store_true", help="50,100,200 streams of 25 pieces (5 s each)"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="cProfile Smriti's worker over its runs (pstats file; its CPU figures inflate)",
    )
    parser.add_argument(
        "--gc",
        type=Path,
        help="record Smriti's garbage collections over its runs (a JSON-lines file, "
        "emptied each run): by generation, and the longest pauses with their offsets",
    )
    parsed = parser.parse_args(argv)
    ladder = list(QUICK_LADDER if parsed.quick else LADDER)
    if parsed.streams:
        ladder = [int(n) for n in parsed.streams.split(",")]
    pieces = parsed.pieces or (QUICK_PIECES if parsed.quick else 100)
    drip = parsed.drip or (QUICK_DRIP if parsed.quick else 0.2)
    databases = ["sqlite", "postgres"] if parsed.db == "both" else [parsed.db]
    return Args(databases, ladder, pieces, drip, parsed.profile, parsed.gc)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        return asyncio.run(run(args))
    except Exception:
        traceback.print_exc()
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
