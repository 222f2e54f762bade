"""``smriti serve`` side by side with a bare Starlette app (the floor), over real HTTP.

    python -m bench.side_by_side                       # PostgreSQL, 200 rounds
    python -m bench.side_by_side --db sqlite --quick
    python -m bench.side_by_side --profile             # plus a cProfile summary by layer
    python -m bench.side_by_side --compare ../main     # and a second checkout, interleaved
    python -m bench.side_by_side --workers 2           # passes --workers 2 to smriti serve
    python -m bench.side_by_side --serve-arg=--log-level --serve-arg=warning

What runs (see docs/benchmarks.md, "Side by side"):

* the floor: ``bench/floor.py`` under uvicorn, answering a JSON POST;
* ``smriti serve`` as a real subprocess (``python -m api serve``) on a throw-away
  database (a new PostgreSQL database dropped at the end, or a SQLite file), with
  a ``providers.yaml`` in a temporary directory whose ``stub/model`` is an
  OpenAI-compatible stub (``bench/stub.py``: ``tests/support/fake_openai.py`` in
  its own process) reached through LiteLLM over loopback HTTP;
* one client (this process) pinned to the second core, the servers pinned to the
  first (``os.sched_setaffinity``; the stub inherits the client's core). With
  ``--workers`` above 1 the server may use every core.

Every figure is printed with its p50/p95 and as a ratio to the floor measured in
the same run. Exit status: 0 when every target passes, 1 when one fails, 2 when
the run itself fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import gc
import json
import pstats
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

import asyncpg  # type: ignore[import-untyped]
import httpx

from api.graphql.core import ids
from api.store.database import sqlite_path
from bench.databases import temporary_database
from bench.profiled_serve import PROFILE_VARIABLE
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
EXIT_OK, EXIT_TARGET_FAILED, EXIT_ERROR = 0, 1, 2
MS = 1000.0
MB = 1024 * 1024
SERVER_CORE, CLIENT_CORE = 0, 1
STUB_PROVIDER, STUB_MODEL = "stub", "model"
OFFLINE_MODEL = "offline/echo"
SIZES = (0, 1_000, 10_000)
HEAD_CHECKPOINTS = 50
CROWD_CLIENTS, CROWD_SENDS = 32, 4
# Targets of issue 10.
FLOOR_RATIO_LIMIT = 5.0  # sendMessage p50 within 5x the floor
# Issue 19, target 7: the send path within 2x the LiteLLM floor (p50 and CPU a request).
LITELLM_RATIO_LIMIT = 2.0
FLOOR, LITELLM_FLOOR = "floor", "floor + one LiteLLM call"
FLAT_LIMIT = 1.2  # p50 at 10,000 turns within 20 % of p50 at 0
FIRST_SEND_LIMIT_S = 2.0  # process start -> first successful sendMessage
RSS_LIMIT_MB = 250.0  # per worker, after the run
START_DEADLINE_S = 90.0
STATEMENT_SAMPLES = 3

SEND = """
mutation($input: SendMessageInput!) {
  sendMessage(input: $input) {
    userTurn { sequenceNumber }
    assistantTurn { sequenceNumber content }
    errors { code message }
  }
}
"""
# The floor gets a body of the same shape and size as a send.
FLOOR_BODY = {"query": SEND, "variables": {"input": {"sessionId": "U2Vzc2lvbjox", "content": "x"}}}


class BenchmarkError(RuntimeError):
    """A request failed or answered something other than what was asked."""


@dataclass(frozen=True)
class Plan:
    rounds: int  # timed requests per series (interleaved)
    warmup: int  # untimed sends per server before the timed rounds
    crowd_runs: int  # 32 clients x 4 sends, each in a new session
    starts: int  # process starts per provider
    profile_sends: int

    def empty_sessions(self) -> int:
        """Sends at 0 turns go to a new session each, so the history stays empty."""
        return self.warmup + self.rounds + 1


FULL = Plan(rounds=200, warmup=20, crowd_runs=3, starts=3, profile_sends=200)
QUICK = Plan(rounds=40, warmup=10, crowd_runs=1, starts=1, profile_sends=50)


# --- the servers under test -------------------------------------------------------------


@dataclass
class Target:
    """One `smriti serve` under test: this checkout, or another one (--compare)."""

    label: str
    python: str
    cwd: Path
    sessions: dict[int, list[int]] = field(default_factory=dict)  # by earlier turns
    crowd: list[int] = field(default_factory=list)
    cold: dict[str, list[int]] = field(default_factory=dict)  # by model
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None


def pin(cores: set[int]) -> Callable[[], None]:
    def apply() -> None:
        os.sched_setaffinity(0, cores)

    return apply


def can_pin() -> bool:
    return hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SMRITI_OFFLINE_STREAM_DELAY_MS": "0",
    }


def spawn(
    command: list[str], *, cwd: Path, cores: set[int] | None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    # A file, not a pipe: a chatty server never blocks. Closed by the caller.
    log = tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env or environment(),
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=pin(cores) if cores else None,
    )
    return process, log


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def output(log: IO[bytes] | None) -> str:
    if log is None:
        return ""
    log.seek(0)
    return log.read().decode(errors="replace")[-3000:]


def serve_command(
    target: Target, database_url: str, providers: Path, args: Args, *, profiled: bool = False
) -> list[str]:
    module = ["-m", "bench.profiled_serve"] if profiled else ["-m", "api"]
    return [
        target.python,
        *module,
        "serve",
        "--port",
        str(target.port),
        "--database",
        database_url,
        "--providers",
        str(providers),
        "--log-level",
        "warning",
        *args.serve_args,
    ]


def server_cores(args: Args) -> set[int] | None:
    if not can_pin():
        return None
    if args.workers and args.workers > 1:
        return None  # several workers: every core
    return {SERVER_CORE}


async def wait_until_up(
    http: httpx.AsyncClient, url: str, process: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchmarkError(f"{url}: the server exited with status {process.returncode}")
        try:
            response = await http.get(url, timeout=2)
            if response.status_code < 500:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)
    raise BenchmarkError(f"{url} did not answer within {START_DEADLINE_S:g} s")


def family(pid: int) -> list[int]:
    """``pid`` and every process below it (uvicorn's workers)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found


def rss_mb(pid: int) -> dict[int, float]:
    """Resident set size of ``pid`` and every process below it, in MB."""
    found: dict[int, float] = {}
    for current in family(pid):
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                found[current] = int(line.split()[1]) / 1024
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time used so far by ``pid`` and the processes below it."""
    ticks = 0
    for current in family(pid):
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks / os.sysconf("SC_CLK_TCK")


# --- requests ----------------------------------------------------------------------------


async def send(
    http: httpx.AsyncClient, port: int, session_id: int, text: str, *, expect: str
) -> tuple[float, dict[str, Any]]:
    """One sendMessage; (ms, payload). Anything but a saved answer from ``expect`` fails."""
    body = {
        "query": SEND,
        "variables": {"input": {"sessionId": ids.encode("Session", session_id), "content": text}},
    }
    started = time.perf_counter()
    response = await http.post(f"http://127.0.0.1:{port}/graphql", json=body)
    elapsed = (time.perf_counter() - started) * MS
    if response.status_code != httpx.codes.OK:
        raise BenchmarkError(f"sendMessage: HTTP {response.status_code}: {response.text[:300]}")
    answer = response.json()
    if answer.get("errors"):
        raise BenchmarkError(f"sendMessage: {answer['errors']}")
    payload: dict[str, Any] = answer["data"]["sendMessage"]
    reply = payload["assistantTurn"]
    if payload["errors"] or reply is None or not reply["content"].startswith(expect):
        raise BenchmarkError(f"sendMessage did not answer from {expect!r}: {payload}")
    return elapsed, payload


async def floor_request(http: httpx.AsyncClient, port: int) -> float:
    started = time.perf_counter()
    response = await http.post(f"http://127.0.0.1:{port}/graphql", json=FLOOR_BODY)
    elapsed = (time.perf_counter() - started) * MS
    if response.status_code != httpx.codes.OK or "floor" not in response.json()["data"]:
        raise BenchmarkError(f"floor: HTTP {response.status_code}: {response.text[:300]}")
    return elapsed


def cycle(values: Sequence[int]) -> Iterator[int]:
    while True:
        yield from values


# --- seeding and statement counts (in this process, before any server runs) -------------


async def seed_and_count(
    database_url: str, providers: Path, targets: list[Target], plan: Plan
) -> dict[int, list[int]]:
    """Seed every target's sessions; count this checkout's statements per sendMessage.

    The count runs the app in this process (``create_app``, its lifespan, httpx's
    ASGI transport) with a handler on Tortoise's ``tortoise.db_client`` logger, as
    ``bench/measure.py`` does: the statements do not depend on the process, and
    the server under test then runs with no logging at all.
    """
    from api.app import create_app
    from api.settings import Settings
    from api.store import models
    from bench.seed import Seeder
    from tests.support.queries import count_statements

    app = create_app(Settings(database_url=database_url, providers_file=providers))
    async with app.router.lifespan_context(app):
        seeder = Seeder()
        owner = await seeder.owner()
        space = await seeder.space(owner, "Side by side (HEAD mode)")
        (planning,) = await seeder.sessions(owner, space, 1, title="Planning")
        await seeder.chain(space, HEAD_CHECKPOINTS, source_session_id=planning)
        stub_sessions: list[int] = []
        counted: dict[int, list[int]] = {}
        for target in [*targets, None]:
            label = target.label if target else "statements"
            empty = plan.empty_sessions() if target else STATEMENT_SAMPLES + 2
            sessions = {0: await seeder.sessions(owner, space, empty, title=f"{label} 0")}
            for size in SIZES[1:]:
                sessions[size] = await seeder.sessions(owner, space, 1, title=f"{label} {size}")
                await seeder.turns(sessions[size][0], size)
            stub_sessions += [sid for group in sessions.values() for sid in group]
            if target is None:
                counted = sessions
                continue
            target.sessions = sessions
            target.crowd = await seeder.sessions(owner, space, plan.crowd_runs, title="crowd")
            stub_sessions += target.crowd
            target.cold = {
                STUB_PROVIDER: await seeder.sessions(owner, space, plan.starts, title="cold stub"),
                OFFLINE_MODEL: await seeder.sessions(owner, space, plan.starts, title="cold"),
            }
            stub_sessions += target.cold[STUB_PROVIDER]
        # Seeded sessions talk to the offline echo; these to the stub.
        await models.Session.filter(id__in=stub_sessions).update(
            active_provider=STUB_PROVIDER, active_model=STUB_MODEL
        )
        await seeder.fix_sequences()
        await seeder.analyze()

        statements: dict[int, list[int]] = {size: [] for size in SIZES}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            for size in SIZES:
                pool = cycle(counted[size])
                for n in range(STATEMENT_SAMPLES + 2):
                    sid = next(pool)
                    body = {
                        "query": SEND,
                        "variables": {
                            "input": {"sessionId": ids.encode("Session", sid), "content": f"m{n}"}
                        },
                    }
                    with count_statements() as seen:
                        response = await http.post("/graphql", json=body)
                    payload = response.json()["data"]["sendMessage"]
                    if payload["errors"] or payload["assistantTurn"] is None:
                        raise BenchmarkError(f"in-process sendMessage failed: {payload}")
                    if n >= 2:  # the first two warm caches up
                        statements[size].append(len(seen))
    return statements


# --- the measurements --------------------------------------------------------------------


@dataclass
class Series:
    name: str
    samples: list[float] = field(default_factory=list)

    def p(self, q: int) -> float:
        return percentile(self.samples, q)


def percentile(values: Sequence[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def timed_rounds(
    http: httpx.AsyncClient,
    floors: dict[str, tuple[int, int]],
    targets: list[Target],
    plan: Plan,
) -> tuple[list[Series], dict[str, float]]:
    """Warm every server up, then one request of each series in turn, ``rounds`` times.

    Also returns each server's CPU time per request over the timed rounds (ms,
    from /proc: its own process and workers, background work included), which
    a busy machine disturbs far less than the wall-clock figures.
    """
    workloads: list[tuple[Series, Callable[[], Awaitable[float]]]] = [
        (Series(label), partial(floor_request, http, port)) for label, (port, _) in floors.items()
    ]
    counter = iter(range(10**9))

    def sender(target: Target, size: int) -> Callable[[], Awaitable[float]]:
        pool = cycle(target.sessions[size])

        async def request() -> float:
            text = f"Benchmark message {next(counter)}: what changed since the last checkpoint?"
            elapsed, _ = await send(http, target.port, next(pool), text, expect="fake reply")
            return elapsed

        return request

    for target in targets:
        for size in SIZES:
            series = Series(f"{target.label} sendMessage, {size:,} turns")
            workloads.append((series, sender(target, size)))
    for _, request in workloads:
        for _ in range(plan.warmup // 2):
            await request()
    gc.collect()
    pids = {label: pid for label, (_, pid) in floors.items()}
    pids |= {t.label: t.process.pid for t in targets if t.process}
    before = {label: cpu_seconds(pid) for label, pid in pids.items()}
    for _ in range(plan.rounds):
        for series, request in workloads:
            series.samples.append(await request())
    requests = {label: plan.rounds for label in floors}
    requests |= {t.label: plan.rounds * len(SIZES) for t in targets}
    cpu = {
        label: (cpu_seconds(pid) - before[label]) * MS / requests[label]
        for label, pid in pids.items()
    }
    return [series for series, _ in workloads], cpu


@dataclass
class Crowd:
    label: str
    seconds: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return [CROWD_CLIENTS * CROWD_SENDS / s for s in self.seconds]


async def crowd_run(
    http: httpx.AsyncClient, target: Target, session_id: int, database_url: str, crowd: Crowd
) -> None:
    """32 clients x 4 sends into one session; then every turn must be numbered 1..N."""
    reported: list[int] = []

    async def client(number: int) -> None:
        for n in range(CROWD_SENDS):
            elapsed, payload = await send(
                http, target.port, session_id, f"client {number} send {n}", expect="fake reply"
            )
            crowd.latencies.append(elapsed)
            reported.append(payload["userTurn"]["sequenceNumber"])

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(CROWD_CLIENTS)))
    crowd.seconds.append(time.perf_counter() - started)
    last, numbers = await stored_sequence(database_url, session_id)
    total = CROWD_CLIENTS * CROWD_SENDS * 2
    if numbers != list(range(1, total + 1)) or last != total:
        crowd.problems.append(
            f"session {session_id}: {len(numbers)} turns, last_sequence_number {last}, "
            f"expected exactly 1..{total}"
        )
    if len(set(reported)) != len(reported):
        crowd.problems.append(f"session {session_id}: a user turn number was reported twice")


async def stored_sequence(database_url: str, session_id: int) -> tuple[int, list[int]]:
    """(last_sequence_number, every turn's number in order), read from the database itself."""
    last_sql = "SELECT last_sequence_number FROM session WHERE id = {}"
    turns_sql = "SELECT sequence_number FROM turn WHERE session_id = {} ORDER BY sequence_number"
    path = sqlite_path(database_url)
    if path is not None:
        with sqlite3.connect(path) as db:
            (last,) = db.execute(last_sql.format("?"), [session_id]).fetchone()
            rows = db.execute(turns_sql.format("?"), [session_id]).fetchall()
            return int(last), [int(r[0]) for r in rows]
    conn = await asyncpg.connect(database_url.replace("postgres://", "postgresql://", 1))
    try:
        last = await conn.fetchval(last_sql.format("$1"), session_id)
        rows = await conn.fetch(turns_sql.format("$1"), session_id)
        return int(last), [int(r[0]) for r in rows]
    finally:
        await conn.close()


@dataclass
class Start:
    label: str
    model: str
    seconds: list[float] = field(default_factory=list)


async def first_send(
    http: httpx.AsyncClient,
    target: Target,
    command: list[str],
    session_id: int,
    expect: str,
    args: Args,
) -> float:
    """Seconds from spawning `smriti serve` to its first successful sendMessage."""
    started = time.perf_counter()
    process, log = spawn(command, cwd=target.cwd, cores=server_cores(args))
    try:
        while time.perf_counter() - started < START_DEADLINE_S:
            if process.poll() is not None:
                raise BenchmarkError(f"smriti serve exited: {output(log)}")
            try:
                await send(http, target.port, session_id, "Are you there?", expect=expect)
                return time.perf_counter() - started
            except httpx.TransportError:
                await asyncio.sleep(0.005)
        raise BenchmarkError(f"no successful sendMessage within {START_DEADLINE_S:g} s")
    finally:
        stop(process)
        log.close()


# --- the profile ---------------------------------------------------------------------------

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "LiteLLM and what it calls (openai, httpx, pydantic)",
        ("litellm", "openai", "httpx", "httpcore", "pydantic", "pydantic_core", "aiohttp",
         "tiktoken", "tokenizers", "jiter", "fastuuid", "yarl", "multidict", "aiohappyeyeballs"),
    ),
    ("ORM (Tortoise, pypika, asyncpg, aiosqlite)",
     ("tortoise", "pypika", "pypika_tortoise", "asyncpg", "aiosqlite", "sqlite3", "iso8601")),
    ("event loop (asyncio, uvloop, selectors)", ("asyncio", "uvloop", "selectors")),
    ("HTTP server (uvicorn, h11/httptools, Starlette)",
     ("uvicorn", "starlette", "httptools", "websockets", "wsproto")),
    ("GraphQL (Strawberry, graphql-core)", ("strawberry", "graphql", "cross_web")),
)  # fmt: skip
SMRITI = "Smriti (api/)"
OTHER = "other"
# Code used by several layers (h11 serves uvicorn and httpcore; the standard
# library and built-ins everyone): its time goes to whoever called it.
SHARED = ("h11", "anyio", "sniffio", "typing_extensions")

Func = tuple[str, int, str]


def package_of(filename: str) -> str | None:
    """The top-level package a profiled file belongs to; None for shared code."""
    path = filename.replace("\\", "/")
    if "site-packages" not in path and "/api/" in path:
        return "api"
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in path:
            rest = path.split(marker, 1)[1]
            if marker == "/lib/python3":
                rest = rest.split("/", 1)[1] if "/" in rest else rest
            return rest.split("/", 1)[0].removesuffix(".py")
    return None


def own_layer(func: Func) -> str | None:
    package = package_of(func[0])
    if package is None or package in SHARED:
        return None
    if package == "api":
        return SMRITI
    for layer, packages in LAYERS:
        if package in packages:
            return layer
    return None  # the standard library, apart from the event loop: its caller's


def layer_shares(stats: dict[Func, Any]) -> dict[str, float]:
    """Self time by layer; shared code and built-ins split over their callers."""
    memo: dict[Func, dict[str, float]] = {}

    def shares(func: Func, visiting: frozenset[Func]) -> dict[str, float]:
        if func in memo:
            return memo[func]
        layer = own_layer(func)
        if layer is not None:
            return {layer: 1.0}
        callers = stats.get(func, (0, 0, 0, 0, {}))[4]
        weights = {c: v[2] for c, v in callers.items() if c not in visiting and v[2] > 0}
        total = sum(weights.values())
        if not total:
            result = {OTHER: 1.0}
        else:
            result = {}
            for caller, weight in weights.items():
                for name, part in shares(caller, visiting | {func}).items():
                    result[name] = result.get(name, 0.0) + part * weight / total
        memo[func] = result
        return result

    totals: dict[str, float] = {}
    for func, (_, _, own, _, _) in stats.items():
        for name, part in shares(func, frozenset()).items():
            totals[name] = totals.get(name, 0.0) + own * part
    return totals


def profile_summary(path: Path, sends: int) -> str:
    loaded = pstats.Stats(str(path))
    stats: dict[Func, Any] = loaded.stats  # type: ignore[attr-defined]
    totals = layer_shares(stats)
    whole = sum(totals.values()) or 1.0
    lines = [
        f"cProfile (CPU time) of the server's event-loop thread over {sends} sends at 10,000 "
        f"turns (self time; shared code and built-ins charged to their callers)",
        f"{'layer':56}{'ms/send':>9}{'share':>8}",
    ]
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        lines.append(f"{name:56}{seconds * MS / sends:9.2f}{seconds / whole:8.0%}")
    lines.append(f"{'all':56}{whole * MS / sends:9.2f}")
    lines.append("\ntop functions by self time:")
    top = sorted(stats.items(), key=lambda item: -item[1][2])[:20]
    for (filename, line, name), (_, calls, own, _, _) in top:
        short = filename.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        lines.append(f"{own * MS / sends:7.3f} ms {calls / sends:7.1f}x  {short}:{line} {name}")
    return "\n".join(lines)


async def profile_target(
    http: httpx.AsyncClient, target: Target, profile_path: Path, sends: int
) -> str:
    assert target.process is not None
    session_id = target.sessions[SIZES[-1]][0]
    for n in range(5):
        await send(http, target.port, session_id, f"warm {n}", expect="fake reply")
    target.process.send_signal(signal.SIGUSR1)
    await asyncio.sleep(0.5)
    for n in range(sends):
        await send(http, target.port, session_id, f"profiled {n}", expect="fake reply")
    target.process.send_signal(signal.SIGUSR2)
    deadline = time.monotonic() + 30
    while not profile_path.exists():
        if time.monotonic() > deadline:
            raise BenchmarkError("the server wrote no profile")
        await asyncio.sleep(0.1)
    return profile_summary(profile_path, sends)


# --- the run ------------------------------------------------------------------------------


@dataclass
class Args:
    db: str
    plan: Plan
    profile: bool
    serve_args: list[str]
    workers: int | None
    compare: list[Path]


async def database_version(url: str) -> str:
    path = sqlite_path(url)
    if path is not None:
        return f"SQLite {sqlite3.sqlite_version}"
    conn = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1))
    try:
        return f"PostgreSQL {await conn.fetchval('SHOW server_version')}"
    finally:
        await conn.close()


@asynccontextmanager
async def provider_process(
    module: str, *options: str, core: set[int] | None = None
) -> AsyncIterator[tuple[str, int]]:
    """``python -m MODULE OPTIONS`` (a provider that prints its base URL on one line and
    runs until its standard input closes) in its own process, on ``core`` if given, else
    on this process's (the client's); yields its base URL and process id."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, *options],
        cwd=ROOT,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        preexec_fn=(lambda: os.sched_setaffinity(0, core)) if core else None,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.to_thread(process.stdout.readline)
        if not line:
            raise BenchmarkError(f"the provider ({module}) did not start")
        yield line.decode().strip(), process.pid
    finally:
        if process.stdin:
            process.stdin.close()
        stop(process)


def write_providers(
    folder: Path, base_url: str, provider: str = STUB_PROVIDER, model: str = STUB_MODEL
) -> Path:
    """A providers.yaml with ``provider/model`` behind ``base_url`` as the chat default."""
    path = folder / "providers.yaml"
    path.write_text(
        f"chat_default: {provider}/{model}\n"
        "background_intelligence: offline/extractor\n"
        "providers:\n"
        f"  {provider}:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{base_url}"\n'
        f"    models: [{model}]\n"
    )
    return path


def targets_of(args: Args) -> list[Target]:
    targets = [Target("smriti", sys.executable, ROOT)]
    for n, path in enumerate(args.compare, start=1):
        venv = path / ".venv" / "bin" / "python"
        label = "baseline" if len(args.compare) == 1 else f"baseline{n}"
        targets.append(Target(label, str(venv) if venv.exists() else sys.executable, path))
    return targets


async def run(args: Args) -> int:
    plan = args.plan
    pinned = can_pin()
    if pinned:
        os.sched_setaffinity(0, {CLIENT_CORE})
    targets = targets_of(args)
    load_before = os.getloadavg()[0]
    limits = httpx.Limits(max_connections=CROWD_CLIENTS + 8, max_keepalive_connections=64)
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="smriti-sbs-")))
        profile_path = folder / "server.prof"
        async with (
            provider_process("bench.stub") as (stub_url, _),
            temporary_database(args.db) as database_url,
            httpx.AsyncClient(timeout=60, limits=limits) as http,
        ):
            providers = write_providers(folder, stub_url)
            version = await database_version(database_url)
            print(f"seeding {version} and counting statements ...", file=sys.stderr)
            statements = await seed_and_count(database_url, providers, targets, plan)

            floors: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
            for label, extra in ((FLOOR, []), (LITELLM_FLOOR, ["--litellm", stub_url])):
                port = free_port()
                process, log = spawn(
                    [sys.executable, "-m", "bench.floor", str(port), *extra],
                    cwd=ROOT,
                    cores={SERVER_CORE} if pinned else None,
                )
                stack.callback(log.close)
                stack.callback(stop, process)
                floors[label] = (port, process)
            env = {**environment(), PROFILE_VARIABLE: str(profile_path)}
            for target in targets:
                target.port = free_port()
                target.process, target.log = spawn(
                    serve_command(
                        target,
                        database_url,
                        providers,
                        args,
                        profiled=args.profile and target.cwd == ROOT,
                    ),
                    cwd=target.cwd,
                    cores=server_cores(args),
                    env=env,
                )
            try:
                for port, process in floors.values():
                    await wait_until_up(http, f"http://127.0.0.1:{port}/", process)
                for target in targets:
                    assert target.process is not None
                    await wait_until_up(
                        http, f"http://127.0.0.1:{target.port}/healthz", target.process
                    )
                print("timed rounds ...", file=sys.stderr)
                floor_pids = {label: (port, p.pid) for label, (port, p) in floors.items()}
                series, cpu = await timed_rounds(http, floor_pids, targets, plan)
                print("32 clients x 4 sends ...", file=sys.stderr)
                crowds = [Crowd(t.label) for t in targets]
                for run_number in range(plan.crowd_runs):
                    for target, crowd in zip(targets, crowds, strict=True):
                        await crowd_run(http, target, target.crowd[run_number], database_url, crowd)
                rss = {t.label: rss_mb(t.process.pid) for t in targets if t.process}
                rss[LITELLM_FLOOR] = rss_mb(floors[LITELLM_FLOOR][1].pid)
                profile_text = ""
                if args.profile:
                    print("profiling ...", file=sys.stderr)
                    profile_text = await profile_target(
                        http, targets[0], profile_path, plan.profile_sends
                    )
            except Exception:
                for target in targets:
                    print(f"--- {target.label} output ---\n{output(target.log)}", file=sys.stderr)
                raise
            finally:
                for target in targets:
                    stop(target.process)
                    if target.log:
                        target.log.close()

            print("process start -> first sendMessage ...", file=sys.stderr)
            starts = [
                Start(t.label, model) for t in targets for model in (STUB_PROVIDER, OFFLINE_MODEL)
            ]
            for n in range(plan.starts):
                for start in starts:
                    target = next(t for t in targets if t.label == start.label)
                    target.port = free_port()
                    command = serve_command(target, database_url, providers, args)
                    expect = "fake reply" if start.model == STUB_PROVIDER else "Offline echo"
                    start.seconds.append(
                        await first_send(
                            http, target, command, target.cold[start.model][n], expect, args
                        )
                    )
    load_after = os.getloadavg()[0]
    return report(
        args, version, series, cpu, crowds, starts, statements, rss, profile_text,
        (load_before, load_after), pinned,
    )  # fmt: skip


def report(
    args: Args,
    version: str,
    series: list[Series],
    cpu: dict[str, float],
    crowds: list[Crowd],
    starts: list[Start],
    statements: dict[int, list[int]],
    rss: dict[str, dict[int, float]],
    profile_text: str,
    load: tuple[float, float],
    pinned: bool,
) -> int:
    floor, litellm_floor = series[0], series[1]
    base = floor.p(50)
    where = "server on core 0, client on core 1" if pinned else "not pinned (fewer than 2 cores)"
    if args.workers and args.workers > 1:
        where = f"server on every core ({args.workers} workers), client on core 1"
    serve_args = " ".join(args.serve_args) or "none"
    print(
        f"\nside by side: {version}, {args.plan.rounds} interleaved rounds, {where}; "
        f"smriti serve extra arguments: {serve_args}"
    )
    print(
        f"{'':40}{'p50 ms':>9}{'p95 ms':>9}{'x floor p50':>13}{'x floor p95':>13}"
        f"{'x LiteLLM p50':>15}"
    )
    for s in series:
        print(
            f"{s.name:40}{s.p(50):9.2f}{s.p(95):9.2f}"
            f"{s.p(50) / base:13.1f}{s.p(95) / floor.p(95):13.1f}"
            f"{s.p(50) / litellm_floor.p(50):15.2f}"
        )
    print("\nserver CPU time per request over the timed rounds (process and workers)")
    for label, ms in cpu.items():
        ratio = f"{ms / cpu[FLOOR]:13.1f} x floor" if cpu[FLOOR] else "  (too few rounds)"
        if cpu[FLOOR] and cpu[LITELLM_FLOOR]:
            ratio += f"{ms / cpu[LITELLM_FLOOR]:9.2f} x LiteLLM floor"
        print(f"{label:40}{ms:9.2f} ms{ratio}")
    print(
        f"\n{CROWD_CLIENTS} clients x {CROWD_SENDS} sends in one session "
        f"({len(crowds[0].seconds)} runs)"
    )
    print(f"{'':40}{'sends/s':>9}{'p50 ms':>9}{'p95 ms':>9}  sequence numbers")
    for crowd in crowds:
        check = "; ".join(crowd.problems) or "1..N, no gap"
        print(
            f"{crowd.label:40}{statistics.median(crowd.rates):9.1f}"
            f"{percentile(crowd.latencies, 50):9.1f}{percentile(crowd.latencies, 95):9.1f}  {check}"
        )
    measured_starts = [start for start in starts if start.seconds]
    if measured_starts:
        print(f"\nprocess start -> first successful sendMessage ({len(starts[0].seconds)} starts)")
        print(f"{'':40}{'median s':>9}{'min s':>9}{'max s':>9}")
    for start in measured_starts:
        name = f"{start.label}, {start.model}"
        print(
            f"{name:40}{statistics.median(start.seconds):9.2f}"
            f"{min(start.seconds):9.2f}{max(start.seconds):9.2f}"
        )
    counts = ", ".join(f"{size:,} turns: {sorted(set(c))}" for size, c in statements.items())
    print(f"\nSQL statements per sendMessage (this checkout, counted in-process): {counts}")
    for label, processes in rss.items():
        sizes = ", ".join(f"{mb:.0f} MB" for mb in processes.values())
        print(f"RSS after the run, {label}: {sizes} (process{'es' if len(processes) > 1 else ''})")
    print(f"load average: {load[0]:.2f} before, {load[1]:.2f} after")
    print(
        f"\nthe LiteLLM floor (a bare app making the one LiteLLM call a send makes) is "
        f"{litellm_floor.p(50) / base:.1f}x the floor at p50 and "
        f"{cpu[LITELLM_FLOOR] / cpu[FLOOR]:.1f}x its CPU a request; "
        f"{FLOOR_RATIO_LIMIT:g}x the floor leaves "
        f"{FLOOR_RATIO_LIMIT * base - litellm_floor.p(50):.2f} ms for everything else a send does"
    )

    mine = {s.name: s for s in series}
    own = [mine[f"smriti sendMessage, {size:,} turns"] for size in SIZES]
    first = next(s for s in starts if s.label == "smriti" and s.model == OFFLINE_MODEL)
    first_s = statistics.median(first.seconds) if first.seconds else float("nan")
    worst_rss = max(rss["smriti"].values())
    worst_litellm = max(s.p(50) for s in own) / litellm_floor.p(50)
    cpu_litellm = cpu["smriti"] / cpu[LITELLM_FLOOR] if cpu[LITELLM_FLOOR] else float("nan")
    checks = [
        (
            all(s.p(50) <= FLOOR_RATIO_LIMIT * base for s in own),
            f"sendMessage p50 within {FLOOR_RATIO_LIMIT:g}x the floor at every size "
            f"(worst {max(s.p(50) for s in own) / base:.1f}x)",
        ),
        (
            worst_litellm <= LITELLM_RATIO_LIMIT and cpu_litellm <= LITELLM_RATIO_LIMIT,
            f"the send path within {LITELLM_RATIO_LIMIT:g}x the LiteLLM floor: p50 at every "
            f"size (worst {worst_litellm:.2f}x), CPU a request ({cpu_litellm:.2f}x)",
        ),
        (
            own[-1].p(50) <= FLAT_LIMIT * own[0].p(50),
            f"flat: p50 at 10,000 turns {own[-1].p(50) / own[0].p(50):.2f}x p50 at 0",
        ),
        (not crowds[0].problems, "32 x 4 sends: sequence numbers exactly 1..N"),
        (
            first_s <= FIRST_SEND_LIMIT_S,
            f"start -> first sendMessage (offline) <= {FIRST_SEND_LIMIT_S:g} s ({first_s:.2f} s)",
        ),
        (worst_rss <= RSS_LIMIT_MB, f"RSS <= {RSS_LIMIT_MB:g} MB per process ({worst_rss:.0f} MB)"),
    ]
    print()
    for passed, text in checks:
        print(f"{'PASS' if passed else 'FAIL'}  {text}")
    if profile_text:
        print("\n" + profile_text)
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"side-by-side-{args.db}.json"
    document = {
        "database": version,
        "rounds": args.plan.rounds,
        "serve_args": args.serve_args,
        "load": load,
        "series": [{"name": s.name, "p50": s.p(50), "p95": s.p(95)} for s in series],
        "cpu_ms_per_request": cpu,
        "crowd": [{**asdict(c), "rates": c.rates} for c in crowds],
        "starts": [asdict(s) for s in starts],
        "statements": statements,
        "rss_mb": {label: list(p.values()) for label, p in rss.items()},
        "passed": [{"passed": p, "check": t} for p, t in checks],
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nwritten: {path}")
    return EXIT_OK if all(p for p, _ in checks) else EXIT_TARGET_FAILED


def parse(argv: list[str] | None) -> Args:
    parser = argparse.ArgumentParser(
        prog="python -m bench.side_by_side", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--quick", action="store_true", help="40 rounds, one crowd run, one start")
    parser.add_argument("--rounds", type=int, help="timed requests per series (default 200)")
    parser.add_argument(
        "--starts", type=int, help="process starts per provider (default 3; 0: skip)"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the server by layer")
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        dest="serve_args",
        help="an argument for `smriti serve` (repeatable; --serve-arg=--flag for a dash)",
    )
    parser.add_argument("--workers", type=int, help="passed to `smriti serve --workers`")
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        type=Path,
        help="another checkout to measure in the same run (its .venv if it has one)",
    )
    parsed = parser.parse_args(argv)
    plan = QUICK if parsed.quick else FULL
    if parsed.rounds:
        plan = Plan(parsed.rounds, plan.warmup, plan.crowd_runs, plan.starts, plan.profile_sends)
    if parsed.starts is not None:
        plan = Plan(plan.rounds, plan.warmup, plan.crowd_runs, parsed.starts, plan.profile_sends)
    serve_args = list(parsed.serve_args)
    if parsed.workers:
        serve_args += ["--workers", str(parsed.workers)]
    return Args(
        db=parsed.db,
        plan=plan,
        profile=parsed.profile,
        serve_args=serve_args,
        workers=parsed.workers,
        compare=[p.resolve() for p in parsed.compare],
    )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        return asyncio.run(run(args))
    except Exception:
        traceback.print_exc()
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
