"""Whole reads: every checkpoint of a lineage, every turn of a session.

One *read* is as many requests as it takes (pages, followed by their cursors);
its time is the wall-clock time of all of them, and its statements are summed
over all of them. The figure to compare across sizes is ms per node (or turn).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.measure import MS_PER_SECOND, STATEMENT_SAMPLES, Measurer
from tests.support.queries import count_statements

# The paged lineage as a client reads it without `lineageGraph`: the same
# fields, 1,000 per page (the connection's cap), cursor after cursor.
LINEAGE_PAGES = """
query($id: ID!, $after: String) {
  space(id: $id) {
    lineage(first: 1000, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { id hash title branchName createdAt parent { id } mergeParent { id } } }
    }
  }
}
"""
# The whole graph in one request.
LINEAGE_GRAPH = """
query($id: ID!) {
  space(id: $id) {
    lineageGraph { nodes { id hash title branchName parentId mergeParentId createdAt } }
  }
}
"""
# Every turn, oldest first: the web UI's turn fields (webui/api.js TurnFields,
# without contentHtml) plus createdAt, as many per page as `first` allows.
TURN_FIELDS = "id role content provider model sequenceNumber createdAt interrupted replyToSequence"
TURN_PAGES = (
    "query($id: ID!, $first: Int!, $after: String) { session(id: $id) {"
    " turns(first: $first, after: $after) { pageInfo { hasNextPage endCursor }"
    f" edges {{ node {{ {TURN_FIELDS} }} }} }} }} }}"
)

# The same, through the connection's `nodes` (no edge object per turn).
TURN_NODE_PAGES = (
    "query($id: ID!, $first: Int!, $after: String) { session(id: $id) {"
    " turns(first: $first, after: $after) { pageInfo { hasNextPage endCursor }"
    f" nodes {{ {TURN_FIELDS} }} }} }} }}"
)

Read = Callable[[], Any]


@dataclass
class ReadSeries:
    """One whole-read kind at one data size."""

    name: str
    size: int
    unit: str  # "checkpoints" or "turns"
    samples_ms: list[float] = field(default_factory=list)
    # CPU time of this process during the read (the app runs in-process; on
    # SQLite the database's thread is included, PostgreSQL's server is not):
    # what the read costs, less sensitive to other work on a shared machine.
    cpu_ms: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    requests: int = 0  # requests per read
    returned: int = 0  # nodes per read


@dataclass(frozen=True)
class Outcome:
    ms: float
    requests: int
    returned: int
    cpu_ms: float = 0.0


class Reader:
    """Whole reads through the app, by pages or at once."""

    def __init__(self, measurer: Measurer) -> None:
        self.measurer = measurer

    def pages(
        self,
        query: str,
        variables: dict[str, Any],
        connection: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> Read:
        """Follow ``endCursor`` until ``hasNextPage`` is false."""

        async def read() -> Outcome:
            total_ms, after, returned, requests = 0.0, None, 0, 0
            while True:
                elapsed, data = await self.measurer.post(query, {**variables, "after": after})
                total_ms += elapsed
                requests += 1
                page = connection(data)
                returned += len(page["edges"] if "edges" in page else page["nodes"])
                if not page["pageInfo"]["hasNextPage"]:
                    return Outcome(total_ms, requests, returned)
                after = page["pageInfo"]["endCursor"]

        return read

    def once(
        self, query: str, variables: dict[str, Any], count: Callable[[dict[str, Any]], int]
    ) -> Read:
        async def read() -> Outcome:
            elapsed, data = await self.measurer.post(query, variables)
            return Outcome(elapsed, 1, count(data))

        return read

    async def run(
        self, series: Sequence[tuple[ReadSeries, Read]], *, warmup: int, measured: int
    ) -> None:
        """Warm up, time the reads interleaved, then count statements (untimed)."""
        for _, read in series:
            for _ in range(warmup):
                await read()
        for _ in range(measured):
            for target, read in series:
                started = time.process_time()
                outcome = await read()
                target.cpu_ms.append((time.process_time() - started) * MS_PER_SECOND)
                target.samples_ms.append(outcome.ms)
        for target, read in series:
            for _ in range(STATEMENT_SAMPLES):
                with count_statements() as statements:
                    outcome = await read()
                target.statements.append(len(statements))
            target.requests, target.returned = outcome.requests, outcome.returned


def rss_mb() -> tuple[float, float]:
    """(resident now, peak) of this process, in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    now = pages * resource.getpagesize() / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    return now, peak


# A fresh interpreter that builds the app (and, with LiteLLM, loads it as the
# first model call would), then reports its resident memory.
_IMPORT_PROBE = """
import os, sys
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
from api.app import create_app
from api.settings import Settings
create_app(Settings(database_url="sqlite://:memory:", providers_file=None))
if sys.argv[1] == "litellm":
    from api.providers.litellm import loader
    loader.load()
for line in open("/proc/self/status"):
    if line.startswith("VmRSS:"):
        print(int(line.split()[1]) / 1024)
"""


def import_rss_mb(with_litellm: bool) -> float:
    """Resident MB of a new process holding the app, with or without LiteLLM loaded."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, "litellm" if with_litellm else "app"],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])
