"""``python -m bench.search --db sqlite|postgres [--quick]``

Full-text search at size: 100,000 turns (100 sessions of 1,000) and 10,000
checkpoints (one chain), seeded in bulk (``bench/seed.py``) with text drawn
from a 20,000-word vocabulary with Zipf frequencies, so words are common or
rare as in real text (the most common is in ~95% of turns, the 10th in ~25%,
the 100th in ~3%, the 2,000th in ~0.15%). The index is filled by the
migration's triggers as the rows are inserted.

Reported:

* ``search`` p50/p95 per query shape (first: 20, through GraphQL, in
  process), the shapes interleaved; target: p50 < 20 ms. Twice: as a user
  who reads only their own entries, then as the same user once they are a
  member of a teammate's space (their search is then scoped by everything
  they may read: ``api.store.members.shares_anything``). With each shape's
  CPU per search: this process's (the app, and SQLite in its thread) plus,
  on PostgreSQL, the server's backends serving this database (/proc/PID/stat,
  so a local server; parallel workers, which come and go, are not counted).
  On a loaded machine the CPU figure is the one to compare;
* ``sendMessage`` with the turn-index trigger and without it (dropped, then
  recreated from its own definition), in alternating blocks so load drift
  hits both; target: with <= 1.10 * without (p50).
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from tortoise import connections

from api.app import create_app
from api.domain import search_query
from api.domain.types import CheckpointContent, SpaceRole
from api.settings import Settings
from api.store import members, models
from api.store import search as search_index
from bench.__main__ import BASE_URL
from bench.concurrent_streams import cpu_seconds
from bench.databases import temporary_database
from bench.measure import Measurer
from bench.report import P50, P95, percentile
from bench.seed import Seeder

SESSIONS = 100
TURNS_PER_SESSION = 1_000
CHECKPOINTS = 10_000
VOCABULARY = 20_000
WORDS_PER_TURN = 30
SEED = 11
SEARCH_TARGET_MS = 20.0
SEND_OVERHEAD_TARGET = 1.10
# The shapes' names as one user alone, then as a member of a team's space.
SCOPES = ("", " [member]")

SEARCH = """
query($q: String!) {
  search(query: $q, first: 20) {
    edges { kind rank snippet node { __typename ... on Turn { id } ... on Checkpoint { id } } }
    pageInfo { hasNextPage }
  }
}
"""

_SYLLABLES = [
    "ka",
    "ri",
    "to",
    "na",
    "me",
    "lu",
    "so",
    "vi",
    "da",
    "pe",
    "mo",
    "ra",
    "zu",
    "ni",
    "ha",
    "te",
    "ko",
    "ba",
    "li",
    "fu",
    "sa",
    "de",
    "gi",
    "yo",
    "wa",
    "chi",
    "ne",
    "ru",
    "po",
    "mi",
]


@dataclass(frozen=True)
class Plan:
    searches: int  # per query shape
    send_blocks: int  # alternating with/without blocks
    sends_per_block: int


FULL = Plan(searches=100, send_blocks=6, sends_per_block=40)
QUICK = Plan(searches=30, send_blocks=4, sends_per_block=15)


class Corpus:
    """Deterministic Zipf-distributed text over invented words."""

    def __init__(self) -> None:
        self.random = random.Random(SEED)
        words: list[str] = []
        seen: set[str] = set()
        while len(words) < VOCABULARY:
            word = "".join(self.random.choices(_SYLLABLES, k=self.random.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.weights = [1.0 / rank for rank in range(1, VOCABULARY + 1)]

    def text(self, count: int) -> str:
        return " ".join(self.random.choices(self.words, weights=self.weights, k=count))

    def word(self, rank: int) -> str:
        """The ``rank``-th most frequent word (1-based)."""
        return self.words[rank - 1]


def _checkpoint(corpus: Corpus) -> object:
    def content(index: int, branch: str) -> CheckpointContent:
        return CheckpointContent(
            title=f"{branch} {corpus.text(4)} {index}",
            objective=corpus.text(10),
            summary=corpus.text(30),
            decisions=(corpus.text(6), corpus.text(6)),
            tasks=(corpus.text(5),),
            open_questions=(corpus.text(8),),
            entities=(corpus.word(50), corpus.word(700)),
        )

    return content


async def _backends() -> list[int]:
    """PostgreSQL: the pids of the server processes serving this database, when
    the server is on this machine (their /proc entries readable); else none."""
    conn = connections.get("default")
    if str(conn.capabilities.dialect) != "postgres":
        return []
    rows = await conn.execute_query_dict(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend'"
    )
    return [int(r["pid"]) for r in rows if Path(f"/proc/{r['pid']}/stat").exists()]


def _cpu_seconds(backends: list[int]) -> float:
    return time.process_time() + sum(cpu_seconds(pid) for pid in backends)


async def _join_a_team(seeder: Seeder, owner: int) -> None:
    """``owner`` becomes an EDITOR of a teammate's (empty) space."""
    teammate = await models.User.create(name="Teammate", created_at=seeder.now)
    team = await seeder.space(teammate.id, "Team")
    await models.SpaceMember.create(
        space_id=team, user_id=owner, role=SpaceRole.EDITOR.value, created_at=seeder.now
    )
    assert await members.shares_anything(owner)


async def _seed(corpus: Corpus) -> tuple[Seeder, int, int]:
    """Seed; returns (the seeder, the owner, an empty session's id for the sends)."""
    seeder = Seeder()
    owner = await seeder.owner()
    space = await seeder.space(owner, "Search benchmark")
    session_ids = await seeder.sessions(owner, space, SESSIONS + 1, title="Notes")
    for session_id in session_ids[:SESSIONS]:
        await seeder.turns(
            session_id, TURNS_PER_SESSION, text=lambda _n: corpus.text(WORDS_PER_TURN)
        )
    await seeder.chain(space, CHECKPOINTS, content_of=_checkpoint(corpus))  # type: ignore[arg-type]
    await seeder.fix_sequences()
    await seeder.analyze()
    return seeder, owner, session_ids[SESSIONS]


def _queries(corpus: Corpus) -> dict[str, str]:
    return {
        "rare word (rank 2000)": corpus.word(2000),
        "word (rank 100)": corpus.word(100),
        "common word (rank 10)": corpus.word(10),
        "two words (100, 300)": f"{corpus.word(300)} {corpus.word(100)}",
        "phrase of 2 common words": f'"{corpus.word(1)} {corpus.word(2)}"',
        "prefix (4 letters of rank 500)": corpus.word(500)[:4] + "*",
    }


async def _paths(queries: dict[str, str]) -> dict[str, str]:
    """PostgreSQL: the way each query's newest matches are found (api/store/search.py)."""
    conn = connections.get("default")
    if str(conn.capabilities.dialect) != "postgres":
        return {}
    search_index.forget_statistics()
    stats = await search_index._word_statistics(conn)
    chosen = {}
    for name, text in queries.items():
        path, window = search_index.choose_path(search_query.parse(text), stats)
        chosen[name] = path.name.lower() + (f" (newest {window:,})" if window else "")
    return chosen


async def _toggle_turn_trigger(saved: list[str]) -> None:
    """Drop the trigger that indexes new turns, remembering its definition; or,
    given one, recreate it."""
    conn = connections.get("default")
    postgres = str(conn.capabilities.dialect) == "postgres"
    if saved:
        await conn.execute_script(saved.pop())
        return
    if postgres:
        rows = await conn.execute_query_dict(
            "SELECT pg_get_triggerdef(oid) AS sql FROM pg_trigger WHERE tgname = 'turn_search'"
        )
        await conn.execute_script("DROP TRIGGER turn_search ON turn")
    else:
        rows = await conn.execute_query_dict(
            "SELECT sql FROM sqlite_master WHERE name = 'search_turn_insert'"
        )
        await conn.execute_script("DROP TRIGGER search_turn_insert")
    saved.append(rows[0]["sql"])


async def run(database: str, plan: Plan) -> int:
    corpus = Corpus()
    async with temporary_database(database) as url:
        app = create_app(Settings(database_url=url, providers_file=None))
        async with app.router.lifespan_context(app):
            started = time.perf_counter()
            seeder, owner, send_session = await _seed(corpus)
            seed_seconds = time.perf_counter() - started
            paths = await _paths(_queries(corpus))
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                measurer = Measurer(client)
                queries = _queries(corpus)
                workloads = {
                    name: measurer.query_request(SEARCH, {"q": q}) for name, q in queries.items()
                }
                hits: dict[str, int] = {}
                samples: dict[str, list[float]] = {}
                cpu: dict[str, float] = {}
                for scope in SCOPES:
                    if scope == SCOPES[1]:
                        await _join_a_team(seeder, owner)
                    for name, request in workloads.items():
                        for _ in range(5):
                            _, data = await request()
                        hits[f"{name}{scope}"] = len(data["search"]["edges"])
                        samples[f"{name}{scope}"] = []
                        cpu[f"{name}{scope}"] = 0.0
                    backends = await _backends()
                    for _ in range(plan.searches):
                        for name, request in workloads.items():
                            before = _cpu_seconds(backends)
                            elapsed, _ = await request()
                            cpu[f"{name}{scope}"] += _cpu_seconds(backends) - before
                            samples[f"{name}{scope}"].append(elapsed)

                for _ in range(10):
                    await measurer.send(send_session)
                sends: dict[str, list[float]] = {"with index": [], "without index": []}
                saved: list[str] = []
                for block in range(plan.send_blocks * 2):
                    label = "with index" if block % 2 == 0 else "without index"
                    if block % 2 == 1:
                        await _toggle_turn_trigger(saved)
                    for _ in range(plan.sends_per_block):
                        elapsed, _ = await measurer.send(send_session)
                        sends[label].append(elapsed)
                    if block % 2 == 1:
                        await _toggle_turn_trigger(saved)

    print(f"== search benchmark: {database} ==")
    print(
        f"seeded {SESSIONS * TURNS_PER_SESSION:,} turns and {CHECKPOINTS:,} checkpoints "
        f"in {seed_seconds:.0f} s"
    )
    print(f"{'query':43} {'page':>4} {'p50 ms':>8} {'p95 ms':>8} {'CPU ms':>7}  path")
    all_p50 = []
    for name, values in samples.items():
        p50 = percentile(values, P50)
        all_p50.append(p50)
        print(
            f"{name:43} {hits[name]:>4} {p50:>8.2f} {percentile(values, P95):>8.2f} "
            f"{1000 * cpu[name] / len(values):>7.2f}  "
            f"{paths.get(name.removesuffix(SCOPES[1]), '')}"
        )
    everything = [v for values in samples.values() for v in values]
    overall = percentile(everything, P50)
    print(f"{'all shapes':43} {'':>4} {overall:>8.2f} {percentile(everything, P95):>8.2f}")
    with_p50 = percentile(sends["with index"], P50)
    without_p50 = percentile(sends["without index"], P50)
    ratio = with_p50 / without_p50
    for label, values in sends.items():
        print(
            f"sendMessage {label:22} n={len(values):<4} p50 {percentile(values, P50):6.2f} ms"
            f"  p95 {percentile(values, P95):6.2f} ms"
        )
    search_ok = max(all_p50) < SEARCH_TARGET_MS
    send_ok = ratio <= SEND_OVERHEAD_TARGET
    print(
        f"{'PASS' if search_ok else 'FAIL'}  search p50 < {SEARCH_TARGET_MS:.0f} ms "
        f"for every shape (worst {max(all_p50):.2f} ms)"
    )
    print(f"{'PASS' if send_ok else 'FAIL'}  send with indexing within 10% (p50 ratio {ratio:.3f})")
    return 0 if search_ok and send_ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    args = parser.parse_args(argv)
    return asyncio.run(run(args.db, QUICK if args.quick else FULL))


if __name__ == "__main__":
    sys.exit(main())
