"""``python -m bench.profile_reads [--db D] [--reads N] [--profile SERIES] [--checkpoints N]``

Where a whole read's server CPU goes, per node: the paged ``lineage`` (pages of
100 with the issue's fields, pages of 100 with every plain checkpoint field,
pages of 1,000 as ``bench/reads.py`` reads them, and with every plain field)
of a 1,000-checkpoint space (``--checkpoints``: another size),
and every turn of a 10,000-turn session (pages of 1,000 by ``edges`` and by
``nodes``, pages of 100). The app runs in-process as in ``python -m bench``;
each figure is this process's CPU time (``time.process_time``) over the read
divided by its nodes, the series interleaved. ``--profile SERIES`` runs
cProfile over that series instead and prints the top functions (cProfile
slows Python calls unevenly: read it as proportions).

To compare two trees, run this same file from each (``PYTHONPATH=<tree>``),
alternating, under similar load (see the README's figures).
"""

from __future__ import annotations

import os

os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import cProfile
import gc
import pstats
import statistics
import time
from typing import Any

import httpx

from api.app import create_app
from api.graphql.core import ids
from api.settings import Settings
from bench.databases import temporary_database
from bench.measure import Measurer
from bench.reads import LINEAGE_PAGES, TURN_NODE_PAGES, TURN_PAGES, Read, Reader
from bench.seed import SIDE_BRANCHES, Seeder

# The read: pages of 100 with id, short hash, title, branch, date, parent id.
LINEAGE_100 = """query($id: ID!, $after: String) { space(id: $id) {
  lineage(first: 100, after: $after) {
  pageInfo { hasNextPage endCursor }
  edges { node { id shortHash title branchName createdAt parent { id } } } } } }"""
# Every plain checkpoint field, pages of 100 (and of 1,000: the whole lineage
# with its content, against the reference's one request).
LINEAGE_FULL = """query($id: ID!, $after: String) { space(id: $id) {
  lineage(first: FIRST, after: $after) {
  pageInfo { hasNextPage endCursor }
  edges { node { id hash shortHash title objective summary decisions tasks openQuestions
    entities authorAgent baseSequence branchName createdAt sourceTurnRange { first last }
    parent { id } mergeParent { id } } } } } }"""
LINEAGE_100_FULL = LINEAGE_FULL.replace("FIRST", "100")
LINEAGE_1000_FULL = LINEAGE_FULL.replace("FIRST", "1000")

CHECKPOINTS, TURNS = 1000, 10_000


def _reads(reader: Reader, space_id: int, session_id: int) -> dict[str, Read]:
    space = {"id": ids.encode("Space", space_id)}
    session = {"id": ids.encode("Session", session_id)}

    def lineage(data: dict[str, Any]) -> dict[str, Any]:
        page: dict[str, Any] = data["space"]["lineage"]
        return page

    def turns(data: dict[str, Any]) -> dict[str, Any]:
        page: dict[str, Any] = data["session"]["turns"]
        return page

    return {
        "lineage(first: 100)": reader.pages(LINEAGE_100, space, lineage),
        "lineage(first: 100) all fields": reader.pages(LINEAGE_100_FULL, space, lineage),
        "lineage(first: 1000)": reader.pages(LINEAGE_PAGES, space, lineage),
        "lineage(first: 1000) all fields": reader.pages(LINEAGE_1000_FULL, space, lineage),
        "turns(first: 1000) edges": reader.pages(TURN_PAGES, {**session, "first": 1000}, turns),
        "turns(first: 1000) nodes": reader.pages(
            TURN_NODE_PAGES, {**session, "first": 1000}, turns
        ),
        "turns(first: 100) edges": reader.pages(TURN_PAGES, {**session, "first": 100}, turns),
    }


async def run(
    database: str, reads: int, profile: str | None, checkpoints: int = CHECKPOINTS
) -> None:
    async with temporary_database(database) as url:
        app = create_app(Settings(database_url=url, providers_file=None))
        async with app.router.lifespan_context(app):
            seeder = Seeder()
            owner = await seeder.owner()
            space = await seeder.lineage_space(owner, checkpoints, SIDE_BRANCHES)
            (session_id,) = await seeder.sessions(owner, None, 1, title="Whole")
            await seeder.turns(session_id, TURNS)
            await seeder.fix_sequences()
            await seeder.analyze()
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                series = _reads(Reader(Measurer(client)), space.space_id, session_id)
                for read in series.values():  # warm-up
                    await read()
                if profile is not None:
                    await _profile(series[profile], reads)
                    return
                await _time(series, reads)


async def _time(series: dict[str, Read], reads: int) -> None:
    cpu: dict[str, list[float]] = {name: [] for name in series}
    wall: dict[str, list[float]] = {name: [] for name in series}
    shape: dict[str, tuple[int, int]] = {}
    for _ in range(reads):
        for name, read in series.items():
            gc.collect()
            started = time.process_time()
            outcome = await read()
            cpu[name].append((time.process_time() - started) * 1000 / outcome.returned)
            wall[name].append(outcome.ms / outcome.returned)
            shape[name] = (outcome.returned, outcome.requests)
    print(
        f"{'read':32} {'nodes':>6} {'requests':>8}  CPU ms/node min / median   "
        "wall ms/node median   whole read: CPU ms / wall ms (medians)"
    )
    for name in series:
        nodes, requests = shape[name]
        cpu_median, wall_median = statistics.median(cpu[name]), statistics.median(wall[name])
        print(
            f"{name:32} {nodes:6} {requests:8}  {min(cpu[name]):.4f} / "
            f"{cpu_median:.4f}          {wall_median:.4f}"
            f"                {cpu_median * nodes:7.0f} / {wall_median * nodes:7.0f}"
        )


async def _profile(read: Read, reads: int) -> None:
    profiler = cProfile.Profile()
    returned = 0
    profiler.enable()
    for _ in range(reads):
        returned += (await read()).returned
    profiler.disable()
    print(f"cProfile over {reads} reads, {returned} nodes in all")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--reads", type=int, default=5, help="measured reads per series")
    parser.add_argument(
        "--profile",
        metavar="SERIES",
        help="cProfile this series instead, e.g. 'lineage(first: 100)'",
    )
    parser.add_argument(
        "--checkpoints",
        type=int,
        default=CHECKPOINTS,
        help="checkpoints on the lineage's main branch (10000: the issue's whole lineage)",
    )
    arguments = parser.parse_args()
    asyncio.run(run(arguments.db, arguments.reads, arguments.profile, arguments.checkpoints))


if __name__ == "__main__":
    main()
