"""``python -m bench [--db sqlite|postgres|both] [--quick] [--profile]``

Each database is measured in its own Python process (``--db both`` runs one
child per database), so each gets a truly cold first request and its own ORM
state. Exit status: 0 when every target passes, 1 when one fails, 2 when the
run itself fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import dataclasses
import gc
import json
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass

import httpx
from tortoise import connections

from api.app import create_app
from api.graphql.core import ids
from api.settings import Settings
from bench import report
from bench.databases import temporary_database
from bench.measure import ANCESTORS, LINEAGE, STATEMENT_SAMPLES, Measurer, Series
from bench.reads import (
    LINEAGE_GRAPH,
    LINEAGE_PAGES,
    TURN_NODE_PAGES,
    TURN_PAGES,
    Reader,
    ReadSeries,
    import_rss_mb,
    rss_mb,
)
from bench.seed import Seeded, seed

DATABASES = ("sqlite", "postgres")
EXIT_OK, EXIT_TARGET_FAILED, EXIT_ERROR = 0, 1, 2
# A loopback name: the app answers only those (api/http/hosts.py).
BASE_URL = "http://localhost"


@dataclass(frozen=True)
class Plan:
    """How much to seed and how many requests to send."""

    sends: int  # measured sendMessage calls per series
    queries: int  # measured lineage / ancestors requests per series
    warmup: int  # untimed requests before each series
    global_warmup: int  # untimed sends right after the cold one (all code paths hot)
    profile_sends: int  # sends under cProfile with --profile
    # Earlier turns in the HEAD-mode sessions (the brief's 0, 1,000, 10,000).
    head_sizes: tuple[int, ...] = (0, 1_000, 10_000)
    fresh_sizes: tuple[int, ...] = (10_000,)
    # Checkpoints on main of the HEAD space ("6.5 ms p50 with 50 checkpoints").
    head_checkpoints: int = 50
    # Lineage sizes: the count must be the same at both.
    lineage_sizes: tuple[int, ...] = (100, 10_000)
    # Whole reads (bench/reads.py): measured reads per series, lineages read
    # entire, sessions read page by page at these page sizes.
    reads: int = 9
    read_lineage_sizes: tuple[int, ...] = (1_000, 10_000)
    read_turn_sizes: tuple[int, ...] = (10_000,)
    turn_pages: tuple[int, ...] = (100, 1_000)

    def sessions_for_empty(self) -> int:
        """Size 0 sends once per session, so its history stays empty."""
        return self.warmup + self.sends + STATEMENT_SAMPLES


DEFAULT = Plan(sends=200, queries=200, warmup=10, global_warmup=20, profile_sends=100)
QUICK = Plan(sends=40, queries=40, warmup=5, global_warmup=10, profile_sends=30, reads=3)


async def _version() -> str:
    conn = connections.get("default")
    if str(conn.capabilities.dialect) == "postgres":
        rows = await conn.execute_query_dict("SHOW server_version")
        return f"PostgreSQL {rows[0]['server_version']}"
    rows = await conn.execute_query_dict("SELECT sqlite_version() AS v")
    return f"SQLite {rows[0]['v']}"


async def _measure(measurer: Measurer, seeded: Seeded, plan: Plan) -> list[Series]:
    """sendMessage series interleaved with each other, then the queries."""
    sends = [
        (Series(report.SEND_HEAD, size, "turns"), measurer.send_request(session_ids))
        for size, session_ids in seeded.head_sessions.items()
    ] + [
        (Series(report.SEND_FRESH, size, "turns"), measurer.send_request(session_ids))
        for size, session_ids in seeded.fresh_sessions.items()
    ]
    await measurer.run(sends, warmup=plan.warmup, measured=plan.sends)
    queries = [
        (
            Series(report.LINEAGE, size, "checkpoints"),
            measurer.query_request(LINEAGE, {"id": ids.encode("Space", space.space_id)}),
        )
        for size in plan.lineage_sizes
        if (space := seeded.lineage_spaces[size])
    ] + [
        (
            Series(report.ANCESTORS, size, "checkpoints"),
            measurer.query_request(ANCESTORS, {"id": ids.encode("Checkpoint", space.newest_id)}),
        )
        for size in plan.lineage_sizes
        if (space := seeded.lineage_spaces[size])
    ]
    await measurer.run(queries, warmup=plan.warmup, measured=plan.queries)
    return [series for series, _ in sends + queries]


async def _measure_reads(measurer: Measurer, seeded: Seeded, plan: Plan) -> list[ReadSeries]:
    """Whole lineages (the compact graph and the paged connection) and whole
    sessions, interleaved; each read is every request it takes."""
    reader = Reader(measurer)
    reads = []
    for size in plan.read_lineage_sizes:
        space = {"id": ids.encode("Space", seeded.lineage_spaces[size].space_id)}
        reads += [
            (
                ReadSeries(report.READ_GRAPH, size, "checkpoints"),
                reader.once(
                    LINEAGE_GRAPH, space, lambda d: len(d["space"]["lineageGraph"]["nodes"])
                ),
            ),
            (
                ReadSeries(report.READ_LINEAGE_PAGES, size, "checkpoints"),
                reader.pages(LINEAGE_PAGES, space, lambda d: d["space"]["lineage"]),
            ),
        ]
    for size, session_id in seeded.read_sessions.items():
        reads += [
            (
                ReadSeries(report.READ_TURNS.format(page=page), size, "turns"),
                reader.pages(
                    TURN_PAGES,
                    {"id": ids.encode("Session", session_id), "first": page},
                    lambda d: d["session"]["turns"],
                ),
            )
            for page in plan.turn_pages
        ]
        reads.append(
            (
                ReadSeries(report.READ_TURN_NODES.format(page=max(plan.turn_pages)), size, "turns"),
                reader.pages(
                    TURN_NODE_PAGES,
                    {"id": ids.encode("Session", session_id), "first": max(plan.turn_pages)},
                    lambda d: d["session"]["turns"],
                ),
            )
        )
    await reader.run(reads, warmup=1, measured=plan.reads)
    return [series for series, _ in reads]


async def run_one(database: str, plan: Plan, *, profile: bool) -> int:
    """Seed, measure, print and save the figures for one database."""
    async with temporary_database(database) as url:
        app = create_app(Settings(database_url=url, providers_file=None))
        async with app.router.lifespan_context(app):
            started = time.perf_counter()
            seeded = await seed(
                head_checkpoints=plan.head_checkpoints,
                head_sizes=plan.head_sizes,
                sessions_for_empty=plan.sessions_for_empty(),
                fresh_sizes=plan.fresh_sizes,
                lineage_sizes=sorted({*plan.lineage_sizes, *plan.read_lineage_sizes}),
                read_turn_sizes=plan.read_turn_sizes,
            )
            seed_seconds = time.perf_counter() - started
            load_before = os.getloadavg()[0]
            version = await _version()
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                measurer = Measurer(client)
                rss_before_send, _ = rss_mb()
                cold_ms, _ = await measurer.send(seeded.cold_session_id)
                for _ in range(plan.global_warmup):
                    await measurer.send(seeded.cold_session_id)
                gc.collect()
                measured = await _measure(measurer, seeded, plan)
                gc.collect()
                read_rows = [
                    report.read_figures(s) for s in await _measure_reads(measurer, seeded, plan)
                ]
                gc.collect()
                rss_after, rss_peak = rss_mb()
                load = (load_before, os.getloadavg()[0])
                profile_text = ""
                if profile:
                    largest = max(seeded.head_sessions)
                    session_id = seeded.head_sessions[largest][0]
                    stats = await measurer.profile_sends(session_id, plan.profile_sends)
                    profile_text = (
                        f"\n-- profile: {report.SEND_HEAD} at {largest:,} turns --\n"
                        + report.profile_summary(stats, plan.profile_sends)
                    )
    rows = [report.figures(s) for s in measured]
    targets = report.evaluate_targets(rows) + report.read_targets(read_rows, rss_after)
    memory = {
        "rss_before_first_send_mb": rss_before_send,
        "rss_after_run_mb": rss_after,
        "rss_peak_mb": rss_peak,
        "new_process_app_only_mb": import_rss_mb(with_litellm=False),
        "new_process_app_and_litellm_mb": import_rss_mb(with_litellm=True),
    }
    print(
        report.render(
            database=database,
            version=version,
            cold_ms=cold_ms,
            seed_seconds=seed_seconds,
            rows=rows,
            targets=targets,
            load=load,
        )
    )
    print(
        "\n"
        + report.read_table(read_rows)
        + "\nms/node: p50 of the whole read / nodes; CPU: this process's CPU time (the app "
        "runs in-process), less sensitive to other work on the machine\n"
        + "resident memory (MB): "
        + ", ".join(f"{k.removesuffix('_mb').replace('_', ' ')} {v:.0f}" for k, v in memory.items())
    )
    if profile_text:
        print(profile_text)
    document = report.as_json(
        database=database,
        version=version,
        cold_ms=cold_ms,
        seed_seconds=seed_seconds,
        rows=rows,
        targets=targets,
        parameters={
            "sends": plan.sends,
            "queries": plan.queries,
            "warmup": plan.warmup,
            "head_checkpoints": plan.head_checkpoints,
            "memory_scope": "LATEST_3",
        },
        load=load,
    )
    document["whole_reads"] = [
        {**dataclasses.asdict(r), "per_node_ms": r.per_node_ms} for r in read_rows
    ]
    document["memory"] = memory
    path = report.write_json(database, document)
    print(f"\nwritten: {path}", flush=True)
    return EXIT_OK if all(t.passed for t in targets) else EXIT_TARGET_FAILED


def run_children(databases: list[str], argv: list[str]) -> int:
    """One child process per database; then every target in one place."""
    worst = EXIT_OK
    for database in databases:
        command = [sys.executable, "-m", "bench", "--db", database, *argv]
        code = subprocess.run(command, check=False).returncode
        worst = max(worst, code)
        print(flush=True)
    print("== targets, all databases ==")
    for database in databases:
        path = report.RESULTS_DIR / f"{database}.json"
        if not path.exists():
            print(f"{database}: no results (the run failed)")
            continue
        for target in json.loads(path.read_text(encoding="utf-8"))["targets"]:
            verdict = "PASS" if target["passed"] else "FAIL"
            print(f"{verdict}  [{database}] {target['label']}: {target['detail']}")
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--db", choices=[*DATABASES, "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="fewer requests (under a minute)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile sendMessage at the largest history and print where time goes",
    )
    args = parser.parse_args(argv)
    if args.db == "both":
        passed_on = [
            flag for flag, on in (("--quick", args.quick), ("--profile", args.profile)) if on
        ]
        for database in DATABASES:  # stale figures must not pass for fresh ones
            (report.RESULTS_DIR / f"{database}.json").unlink(missing_ok=True)
        return run_children(list(DATABASES), passed_on)
    plan = QUICK if args.quick else DEFAULT
    try:
        return asyncio.run(run_one(args.db, plan, profile=args.profile))
    except Exception:
        traceback.print_exc()
        print(f"benchmark failed on {args.db}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
