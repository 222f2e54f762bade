"""Process start to the first successful send through LiteLLM (issue 19, target 6).

    python -m bench.cold_start                  # SQLite, 3 rounds
    python -m bench.cold_start --db postgres --rounds 5
    python -m bench.cold_start --no-preload     # SMRITI_PRELOAD_PROVIDERS=0

Each round, on a throw-away database (a SQLite file, or a new PostgreSQL
database dropped at the end):

* **first run**: ``python -m api serve --workers 1`` on the empty database (so
  its migrations are applied at start); the clock starts just before the
  process is spawned. ``/healthz`` is polled every 5 ms until it answers, then
  ``createSession`` and ``sendMessage`` go to ``lab/my-model``, an
  OpenAI-compatible stub (``bench/stub.py``, in a process of its own) reached
  through LiteLLM over loopback. The figure is the time until that send has
  answered with an assistant turn; VmRSS is read from /proc right after it.
* **restart**: the same, on the now migrated database, whose session already
  exists: ``/healthz`` is polled, then ``sendMessage`` is sent.

Apart from the server, ``python -c "import litellm"`` and ``python -c "import
api.app"`` (the server's own modules) are timed the same way (spawn to exit)
with their CPU time and peak RSS, in the same environment
(LITELLM_OFFLINE_MODE=true).

Smriti's modules are compiled to bytecode first (``compileall``, into
api/__pycache__), as an installed Smriti has them: pip compiles a wheel's
modules when it installs it, while a checkout run with PYTHONDONTWRITEBYTECODE
set (as on this machine) compiles every module of api/ from source at every
start. The server's CPU time (user + system, /proc) up to the first send is
printed beside the wall-clock time: it moves much less with the machine's load.

Medians over the rounds are printed, with PASS/FAIL against the targets.
Exit status: 0 when both pass, 1 when one fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.databases import temporary_database
from bench.workers import providers_file
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
FIRST_SEND_LIMIT_S = 2.5
RSS_LIMIT_MB = 200.0
DEADLINE_S = 90.0
POLL_S = 0.005
EXIT_OK, EXIT_TARGET_FAILED = 0, 1
CREATE = (
    'mutation { createSession(input: {model: "lab/my-model"}) { session { id } errors { code } } }'
)
SEND = (
    'mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "Are you there?"}) '
    "{ assistantTurn { content } errors { code message } } }"
)


@dataclass
class Start:
    port_s: float  # spawn -> /healthz answers
    send_s: float  # spawn -> the first send has answered
    cpu_s: float  # the server's CPU time (user + system) by then
    rss_mb: float  # VmRSS right after it


def environment(preload: bool) -> dict[str, str]:
    return {
        **os.environ,
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SMRITI_PRELOAD_PROVIDERS": "1" if preload else "0",
        "PYTHONPATH": str(ROOT),
    }


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def one_start(
    database_url: str, providers: Path, session: str | None, preload: bool
) -> tuple[Start, str]:
    """Start `smriti serve`, send once, stop it; the timings and the session used."""
    port = free_port()
    command = [
        sys.executable, "-m", "api", "serve", "--port", str(port), "--database", database_url,
        "--providers", str(providers), "--workers", "1", "--log-level", "warning",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment(preload), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                port_s = await _until_healthy(http, process, started, log)
                if session is None:
                    created = (await http.post("/graphql", json={"query": CREATE})).json()
                    session = created["data"]["createSession"]["session"]["id"]
                answer = await http.post(
                    "/graphql", json={"query": SEND, "variables": {"s": session}}
                )
                send_s = time.perf_counter() - started
                result = answer.json()["data"]["sendMessage"]
                if result["errors"] or not result["assistantTurn"]:
                    raise RuntimeError(f"the first send failed: {result}")
                rss = vm_rss_mb(process.pid)
                cpu = cpu_s(process.pid)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return Start(port_s, send_s, cpu, rss), session


async def _until_healthy(
    http: httpx.AsyncClient, process: subprocess.Popen[bytes], started: float, log: object
) -> float:
    while time.perf_counter() - started < DEADLINE_S:
        if process.poll() is not None:
            log.seek(0)  # type: ignore[attr-defined]
            raise RuntimeError(f"smriti serve exited: {log.read().decode()[-3000:]}")  # type: ignore[attr-defined]
        try:
            if (await http.get("/healthz")).status_code == 200:
                return time.perf_counter() - started
        except httpx.TransportError:
            pass
        await asyncio.sleep(POLL_S)
    raise RuntimeError(f"smriti serve did not answer within {DEADLINE_S:g} s")


def import_alone(module: str) -> tuple[float, float, float]:
    """Seconds from spawn to exit of `python -c "import MODULE"`, its CPU seconds
    (user + system) and its peak RSS (MB)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", f"import {module}"], cwd=ROOT, env=environment(True)
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"import {module} failed ({process.returncode})")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


async def measure(args: argparse.Namespace, providers: Path) -> dict[str, list[Start]]:
    starts: dict[str, list[Start]] = {"first run (migrations)": [], "restart": []}
    for round_number in range(args.rounds):
        async with temporary_database(args.db) as url:
            first, session = await one_start(url, providers, None, args.preload)
            again, _ = await one_start(url, providers, session, args.preload)
        starts["first run (migrations)"].append(first)
        starts["restart"].append(again)
        print(
            f"round {round_number + 1}: first run {first.send_s:.2f} s, CPU {first.cpu_s:.2f} s "
            f"(port {first.port_s:.2f} s, RSS {first.rss_mb:.0f} MB); restart "
            f"{again.send_s:.2f} s, CPU {again.cpu_s:.2f} s (port {again.port_s:.2f} s, "
            f"RSS {again.rss_mb:.0f} MB)",
            flush=True,
        )
    return starts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-preload", dest="preload", action="store_false")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()}; {args.db}", flush=True)
    compileall.compile_dir(ROOT / "api", quiet=1)
    with tempfile.TemporaryDirectory(prefix="smriti-bench-cold-") as folder:
        stub = subprocess.Popen(
            [sys.executable, "-m", "bench.stub"],
            cwd=ROOT,
            env=environment(True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert stub.stdout is not None
            providers = providers_file(Path(folder), stub.stdout.readline().strip())
            starts = asyncio.run(measure(args, providers))
        finally:
            stub.terminate()
            stub.wait()
    alone = {m: [import_alone(m) for _ in range(args.rounds)] for m in ("litellm", "api.app")}
    passed = True
    for label, runs in starts.items():
        send = statistics.median(s.send_s for s in runs)
        port = statistics.median(s.port_s for s in runs)
        cpu = statistics.median(s.cpu_s for s in runs)
        rss = statistics.median(s.rss_mb for s in runs)
        ok = send <= FIRST_SEND_LIMIT_S and rss <= RSS_LIMIT_MB
        passed = passed and ok
        print(
            f"{'PASS' if ok else 'FAIL'} {label}: start -> first send {send:.2f} s "
            f"(<= {FIRST_SEND_LIMIT_S:g}; server CPU {cpu:.2f} s), port answers at {port:.2f} s, "
            f"RSS after it {rss:.0f} MB (<= {RSS_LIMIT_MB:g})"
        )
    for module, runs in alone.items():
        seconds = statistics.median(s for s, _, _ in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        rss = statistics.median(r for _, _, r in runs)
        print(
            f'python -c "import {module}": {seconds:.2f} s, CPU {cpu:.2f} s, peak RSS {rss:.0f} MB'
        )
    print(f"load average after: {os.getloadavg()}")
    return EXIT_OK if passed else EXIT_TARGET_FAILED


if __name__ == "__main__":
    sys.exit(main())
