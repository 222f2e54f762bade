"""Sends per second with 1 and with N `smriti serve` workers (issue 10, target 2).

    python -m bench.workers                          # PostgreSQL, 1 vs 2 workers, 5 rounds
    python -m bench.workers --db sqlite --workers 1,2 --rounds 3
    python -m bench.workers --clients 32 --sends 8   # the load of one run

Each run starts the real `smriti serve --workers N` on a throw-away database and
an OpenAI-compatible stub (tests/support/fake_openai.py) in a process of its own
on loopback, warms every worker up, then lets ``--clients`` clients each send
``--sends`` messages one after another into one shared session. The figure is
sends / wall-clock seconds of that burst. Runs alternate between the worker
counts (1, 2, 1, 2, ...) so the machine's load hits each alike; the medians and
every run are printed, with the load average and each worker's share of the CPU
time (read from /proc: the requests really were spread over the workers).

The clients speak HTTP/1.1 over raw asyncio streams, one keep-alive connection
each: a full HTTP client would spend CPU this 2-core machine needs for the server.
After each run the session's turns must be numbered exactly 1..N, no gap, no duplicate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]

from bench.databases import postgres_admin_url, temporary_database
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer, cpu_seconds

SEND = (
    "mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) "
    "{ userTurn { sequenceNumber } assistantTurn { sequenceNumber } errors { code } } }"
)
CREATE = (
    'mutation { createSession(input: {model: "lab/my-model"}) { session { id } errors { code } } }'
)
NUMBERS = (
    "query($s: ID!, $after: String) { session(id: $s) { lastSequenceNumber "
    "turns(first: 100, after: $after) { edges { node { sequenceNumber } } "
    "pageInfo { hasNextPage endCursor } } } }"
)


class Connection:
    """One keep-alive HTTP/1.1 connection that POSTs JSON and reads JSON back."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, query: str, variables: dict[str, Any]) -> Any:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        body = json.dumps({"query": query, "variables": variables}).encode()
        self.writer.write(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        )
        answer = json.loads(await self.reader.readexactly(length))
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {answer}")
        return answer

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


@dataclass
class Run:
    workers: int
    sends: int
    seconds: float
    load: float  # the 1-minute load average when the run started
    cpu_shares: list[float]  # each worker's share of the workers' CPU time in the burst
    cpu_per_send: float  # the workers' CPU seconds in the burst, per send
    # The same for this client, the stub and PostgreSQL's backends, each.
    client_per_send: float
    stub_per_send: float
    database_per_send: float

    @property
    def per_second(self) -> float:
        return self.sends / self.seconds

    @property
    def others_per_send(self) -> float:
        return self.client_per_send + self.stub_per_send + self.database_per_send


def ceiling(workers: int, cores: int, worker_cpu: float, others_cpu: float) -> float:
    """The most sends/s ``workers`` processes can reach on ``cores`` cores.

    A worker runs on one core at a time, so it cannot pass 1 / worker_cpu; and
    every send also spends ``others_cpu`` in the client, the stub and the
    database on the same cores, so all together cannot pass
    cores / (worker_cpu + others_cpu).
    """
    return min(workers / worker_cpu, cores / (worker_cpu + others_cpu))


async def database_backends(url: str) -> list[int]:
    """The PostgreSQL server processes serving the benchmark database (none on SQLite)."""
    if not url.startswith("postgres:"):
        return []
    name = url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(postgres_admin_url().replace("postgres://", "postgresql://", 1))
    try:
        rows = await admin.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1", name)
    finally:
        await admin.close()
    return [row["pid"] for row in rows if Path(f"/proc/{row['pid']}").exists()]


async def session_numbers(port: int, sid: str) -> tuple[int, list[int]]:
    """The session's lastSequenceNumber and every turn's number, in order."""
    connection = Connection(port)
    numbers: list[int] = []
    after = None
    try:
        while True:
            data = (await connection.post(NUMBERS, {"s": sid, "after": after}))["data"]["session"]
            numbers += [edge["node"]["sequenceNumber"] for edge in data["turns"]["edges"]]
            if not data["turns"]["pageInfo"]["hasNextPage"]:
                return data["lastSequenceNumber"], numbers
            after = data["turns"]["pageInfo"]["endCursor"]
    finally:
        connection.close()


async def burst(port: int, sid: str, clients: int, sends: int) -> float:
    """``clients`` connections each sending ``sends`` messages in turn; the wall time."""

    async def client(number: int) -> None:
        connection = Connection(port)
        try:
            for i in range(sends):
                answer = await connection.post(SEND, {"s": sid, "c": f"client {number} #{i}"})
                result = answer.get("data", {}).get("sendMessage") if "data" in answer else None
                if not result or result["errors"]:
                    raise RuntimeError(f"a send failed: {answer}")
        finally:
            connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return time.perf_counter() - started


async def one_run(
    url: str,
    providers: Path,
    stub_pid: int,
    workers: int,
    clients: int,
    sends: int,
    warm_sends: int,
) -> Run:
    with SmritiServer(url, providers=providers, workers=workers) as server:
        pids = server.worker_pids()
        assert len(pids) == workers, server.printed()
        first = Connection(server.port)
        created = await first.post(CREATE, {})
        first.close()
        sid = created["data"]["createSession"]["session"]["id"]
        # Every worker loads LiteLLM and opens its connections before the clock starts.
        await burst(server.port, sid, clients, warm_sends)
        load = os.getloadavg()[0]
        before = [cpu_seconds(pid) for pid in pids]
        helpers = [[os.getpid()], [stub_pid], await database_backends(url)]
        others = [sum(cpu_seconds(pid) for pid in group) for group in helpers]
        seconds = await burst(server.port, sid, clients, sends)
        spent = [cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]
        client, stub, database = (
            sum(cpu_seconds(pid) for pid in group) - was
            for group, was in zip(helpers, others, strict=True)
        )
        last, numbers = await session_numbers(server.port, sid)
        expected = 2 * clients * (sends + warm_sends)
        if numbers != list(range(1, expected + 1)) or last != expected:
            raise AssertionError(f"turns not numbered 1..{expected}: last {last}, {numbers[:20]}…")
    total = sum(spent) or 1.0
    shares = [s / total for s in spent]
    count = clients * sends
    return Run(
        workers,
        count,
        seconds,
        load,
        shares,
        total / count,
        client / count,
        stub / count,
        database / count,
    )


def stub(ready: Any, stop: Any) -> None:
    """The OpenAI-compatible stub, in a process of its own (its CPU is not the client's)."""
    with FakeOpenAI() as fake:
        ready.send(fake.base_url)
        stop.wait()


def providers_file(folder: Path, base_url: str) -> Path:
    path = folder / "providers.yaml"
    path.write_text(
        "chat_default: lab/my-model\n"
        "background_intelligence: lab/my-model\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{base_url}"\n'
        "    models: [my-model]\n"
    )
    return path


async def run_all(args: argparse.Namespace) -> list[Run]:
    counts = [int(n) for n in args.workers.split(",")]
    context = multiprocessing.get_context("spawn")
    ready, child_end = context.Pipe()
    stop = context.Event()
    provider = context.Process(target=stub, args=(child_end, stop), daemon=True)
    provider.start()
    runs: list[Run] = []
    try:
        base_url = ready.recv()
        with tempfile.TemporaryDirectory(prefix="smriti-bench-workers-") as folder:
            providers = providers_file(Path(folder), base_url)
            async with temporary_database(args.db) as url:
                for round_number in range(args.rounds):
                    for workers in counts:
                        assert provider.pid is not None
                        run = await one_run(
                            url,
                            providers,
                            provider.pid,
                            workers,
                            args.clients,
                            args.sends,
                            args.warm_sends,
                        )
                        runs.append(run)
                        shares = " ".join(f"{share:.0%}" for share in run.cpu_shares)
                        print(
                            f"round {round_number + 1}: {workers} worker(s) "
                            f"{run.per_second:6.1f} sends/s ({run.sends} in {run.seconds:.2f} s, "
                            f"load {run.load:.2f}; CPU per send: workers "
                            f"{run.cpu_per_send * 1000:.1f} ms split {shares}, "
                            f"client {run.client_per_send * 1000:.1f} ms, stub "
                            f"{run.stub_per_send * 1000:.1f} ms, database server "
                            f"{run.database_per_send * 1000:.1f} ms)",
                            flush=True,
                        )
    finally:
        stop.set()
        provider.join(10)
    return runs


def summary(runs: list[Run], counts: list[int]) -> dict[int, float]:
    medians = {n: statistics.median(r.per_second for r in runs if r.workers == n) for n in counts}
    base = medians[counts[0]]
    cores = os.cpu_count() or 1
    # The ceilings from the CPU every send costs, measured over all the runs.
    worker_cpu = statistics.median(r.cpu_per_send for r in runs)
    others_cpu = statistics.median(r.others_per_send for r in runs)
    ceilings = {n: ceiling(n, cores, worker_cpu, others_cpu) for n in counts}
    for n, median in medians.items():
        mine = [r for r in runs if r.workers == n]
        every = ", ".join(f"{r.per_second:.1f}" for r in mine)
        cpu = statistics.median(r.cpu_per_send for r in mine) * 1000
        rest = statistics.median(r.others_per_send for r in mine) * 1000
        print(
            f"{n} worker(s): median {median:.1f} sends/s ({median / base:.2f}x); CPU per send "
            f"{cpu:.1f} ms workers + {rest:.1f} ms client, stub, database server; runs: {every}"
        )
    for n in counts[1:]:
        possible = ceilings[n] / ceilings[counts[0]]
        print(
            f"ceiling on {cores} cores with the client, stub and database on them: "
            f"{n} worker(s) at most {possible:.2f}x {counts[0]} "
            f"(min(N / w, cores / (w + o)), w = {worker_cpu * 1000:.1f} ms, "
            f"o = {others_cpu * 1000:.1f} ms); measured {medians[n] / base:.2f}x"
        )
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.workers", description=__doc__)
    parser.add_argument("--db", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--workers", default="1,2", help="worker counts, compared to the first")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--sends", type=int, default=8, help="sends per client, timed")
    parser.add_argument("--warm-sends", type=int, default=2, help="sends per client, untimed")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()}", flush=True)
    runs = asyncio.run(run_all(args))
    summary(runs, [int(n) for n in args.workers.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
