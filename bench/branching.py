"""``python -m bench.branching --db sqlite|postgres [--turns N] [--branches K]``

What a conversation branch costs (issue 21 §1): a session of 10,000 turns
(seeded in bulk, ``bench/seed.py``), then ``forkSession(atTurnId: <its last
turn>)`` K times through GraphQL, in process. Each branch copies turns
1..10,000 with one ``INSERT … SELECT`` (``api.store.sessions.create_branch``);
the search index's turn trigger skips copies (migration 0016: a shared turn is
indexed once, in the session that first had it), so forking with and without
the trigger should cost the same.

Reported: the time of each fork (p50, max), the rows added per branch, the
content bytes they copy, and how much the database grew per branch (SQLite:
the file; PostgreSQL: ``pg_database_size``), so the cost is known in time,
rows and bytes. Then a send in the branch, to show reads do not care.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import sys
from pathlib import Path

import httpx
from tortoise import connections

from api.app import create_app
from api.graphql.core import ids
from api.settings import Settings
from bench.__main__ import BASE_URL
from bench.databases import temporary_database
from bench.measure import Measurer
from bench.report import P50, percentile
from bench.search import _toggle_turn_trigger
from bench.seed import Seeder

FORK = """mutation($t: ID!) { forkSession(input: {atTurnId: $t}) {
  session { id lastSequenceNumber } errors { code message } } }"""


async def _database_bytes(url: str) -> int:
    conn = connections.get("default")
    if url.startswith("sqlite"):
        # Checkpoint the WAL so the file holds everything written.
        await conn.execute_script("PRAGMA wal_checkpoint(TRUNCATE);")
        path = Path(url.split("://", 1)[1].split("?", 1)[0])
        return path.stat().st_size
    _, rows = await conn.execute_query("SELECT pg_database_size(current_database())")
    return int(rows[0][0])


async def _scalar(statement: str) -> int:
    _, rows = await connections.get("default").execute_query(statement)
    return int(rows[0][0])


async def run(database: str, turns: int, branches: int) -> int:
    async with temporary_database(database) as url:
        app = create_app(Settings(database_url=url, providers_file=None))
        async with app.router.lifespan_context(app):
            seeder = Seeder()
            owner = await seeder.owner()
            (session_id,) = await seeder.sessions(owner, None, 1, title="Long")
            await seeder.turns(session_id, turns)
            await seeder.fix_sequences()
            await seeder.analyze()
            last_turn = await _scalar(
                f"SELECT id FROM turn WHERE session_id = {session_id} AND sequence_number = {turns}"
            )
            content_bytes = await _scalar(
                f"SELECT SUM(LENGTH(content)) FROM turn WHERE session_id = {session_id}"
            )
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                measurer = Measurer(client)
                times, growth = [], []
                rows_before = await _scalar("SELECT COUNT(*) FROM turn")
                for _ in range(branches):
                    size_before = await _database_bytes(url)
                    elapsed, data = await measurer.post(FORK, {"t": ids.encode("Turn", last_turn)})
                    assert data["forkSession"]["errors"] == [], data
                    assert data["forkSession"]["session"]["lastSequenceNumber"] == turns
                    times.append(elapsed)
                    growth.append(await _database_bytes(url) - size_before)
                rows_added = (await _scalar("SELECT COUNT(*) FROM turn")) - rows_before
                # The same forks without the search index's turn trigger: what the
                # copy itself costs (the trigger skips copies: about the same).
                saved: list[str] = []
                await _toggle_turn_trigger(saved)
                unindexed = []
                for _ in range(branches):
                    elapsed, _ = await measurer.post(FORK, {"t": ids.encode("Turn", last_turn)})
                    unindexed.append(elapsed)
                await _toggle_turn_trigger(saved)
                branch = ids.decode(data["forkSession"]["session"]["id"], "Session", field="id")
                sends = [(await measurer.send(branch))[0] for _ in range(5)]
                origin_sends = [(await measurer.send(session_id))[0] for _ in range(5)]
    print(f"== branching benchmark: {database} ==")
    print(f"a session of {turns:,} turns ({content_bytes:,} bytes of content)")
    print(
        f"forkSession(atTurnId) x{branches}: p50 {percentile(times, P50):.0f} ms, "
        f"max {max(times):.0f} ms"
    )
    print(
        f"  of which the search index: without its turn trigger p50 "
        f"{percentile(unindexed, P50):.0f} ms"
    )
    print(f"turn rows added per branch: {rows_added // branches:,}")
    print(
        f"database growth per branch: p50 {percentile(growth, P50) / 1e6:.2f} MB "
        f"(content {content_bytes / 1e6:.2f} MB; the rest: row overhead, the two turn "
        "indexes, the search index)"
    )
    print(
        f"sendMessage p50: in the branch {percentile(sends, P50):.1f} ms, "
        f"in the origin {percentile(origin_sends, P50):.1f} ms"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.branching", description=__doc__)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--branches", type=int, default=5)
    args = parser.parse_args(argv)
    return asyncio.run(run(args.db, args.turns, args.branches))


if __name__ == "__main__":
    sys.exit(main())
