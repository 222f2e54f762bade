"""Measure requests through the real ASGI app: wall-clock latency around each
HTTP call, and the SQL statements a request issues.

Statements are counted the way tests/support/queries.py does — a handler on
Tortoise's ``tortoise.db_client`` logger at DEBUG — and only on separate,
untimed requests, so the logging never inflates a latency figure.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from api.graphql.core import ids
from tests.support.queries import count_statements

GRAPHQL_PATH = "/graphql"
MS_PER_SECOND = 1000.0
# Requests whose statements are counted, per series: more than one shows the
# count is stable, not a fluke of one request.
STATEMENT_SAMPLES = 3

SEND = """
mutation($input: SendMessageInput!) {
  sendMessage(input: $input) {
    userTurn { id sequenceNumber }
    assistantTurn { id sequenceNumber content }
    context { mode boundary tokenEstimate checkpoints { id } }
    errors { code message }
  }
}
"""
LINEAGE = """
query($id: ID!) {
  space(id: $id) {
    lineage(first: 100) { edges { node { id shortHash branchName parent { id } } } }
  }
}
"""
ANCESTORS = """
query($id: ID!) { checkpoint(id: $id) { ancestors(first: 50) { id title } } }
"""
# The offline echo model reports how many earlier turns it was given.
_EARLIER_TURNS = re.compile(r"Earlier turns: (\d+)")


# One request of a series: returns (milliseconds, the answer's data).
Workload = Callable[[], Awaitable[tuple[float, dict[str, Any]]]]


class BenchmarkError(RuntimeError):
    """A request failed or answered something other than what was asked."""


@dataclass
class Series:
    """One measured request kind at one data size."""

    name: str  # e.g. "sendMessage HEAD LATEST_3"
    size: int
    unit: str  # "turns" or "checkpoints"
    samples_ms: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    # sendMessage only: the context the model saw (mode, turns in the window).
    mode: str | None = None
    window_turns: int | None = None
    # Expected number of returned nodes (lineage / ancestors), for a sanity check.
    returned: int | None = None


class Measurer:
    """Sends GraphQL requests to the in-process app and checks the answers."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self._sent = 0

    async def post(self, query: str, variables: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        response = await self.client.post(
            GRAPHQL_PATH, json={"query": query, "variables": variables}
        )
        elapsed_ms = (time.perf_counter() - started) * MS_PER_SECOND
        if response.status_code != httpx.codes.OK:
            raise BenchmarkError(f"HTTP {response.status_code}: {response.text[:500]}")
        body: dict[str, Any] = response.json()
        if body.get("errors"):
            raise BenchmarkError(f"GraphQL errors: {body['errors']}")
        data: dict[str, Any] = body["data"]
        return elapsed_ms, data

    # --- sendMessage -----------------------------------------------------------

    async def send(self, session_id: int) -> tuple[float, dict[str, Any]]:
        """One sendMessage; returns (ms, payload). Payload errors are failures."""
        self._sent += 1
        content = f"Benchmark message {self._sent}: what changed since the last checkpoint?"
        elapsed, data = await self.post(
            SEND, {"input": {"sessionId": ids.encode("Session", session_id), "content": content}}
        )
        payload: dict[str, Any] = data["sendMessage"]
        if payload["errors"] or payload["assistantTurn"] is None:
            raise BenchmarkError(f"sendMessage failed: {payload['errors']}")
        return elapsed, payload

    def send_request(self, session_ids: Sequence[int]) -> Workload:
        """sendMessage on ``session_ids`` round-robin; give as many sessions as
        requests to send exactly once to each (a history that stays empty)."""
        sessions = _round_robin(session_ids)

        async def request() -> tuple[float, dict[str, Any]]:
            return await self.send(next(sessions))

        return request

    def query_request(self, query: str, variables: dict[str, Any]) -> Workload:
        """The same query, every time."""

        async def request() -> tuple[float, dict[str, Any]]:
            return await self.post(query, variables)

        return request

    async def run(
        self, series: Sequence[tuple[Series, Workload]], *, warmup: int, measured: int
    ) -> None:
        """Warm every workload up, time them interleaved, then count statements.

        Interleaving (one request of each series in turn) spreads any drift in
        machine load evenly over the series being compared.
        """
        for _, request in series:
            for _ in range(warmup):
                await request()
        for _ in range(measured):
            for target, request in series:
                elapsed, _ = await request()
                target.samples_ms.append(elapsed)
        for target, request in series:
            for _ in range(STATEMENT_SAMPLES):
                with count_statements() as statements:
                    _, data = await request()
                target.statements.append(len(statements))
            _describe(target, data)

    # --- profiling -------------------------------------------------------------

    async def profile_sends(self, session_id: int, count: int) -> pstats.Stats:
        """cProfile ``count`` sends (after the caller's warm-up) on one session."""
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            for _ in range(count):
                await self.send(session_id)
        finally:
            profiler.disable()
        return pstats.Stats(profiler, stream=io.StringIO())


def _round_robin(items: Sequence[int]) -> Iterator[int]:
    while True:
        yield from items


def _describe(series: Series, data: dict[str, Any]) -> None:
    """Record what the last answer looked like: the context a send used, or
    how many nodes a query returned."""
    if "space" in data:
        series.returned = len(data["space"]["lineage"]["edges"])
    elif "checkpoint" in data:
        series.returned = len(data["checkpoint"]["ancestors"])
    else:
        series.mode = data["context"]["mode"]
        found = _EARLIER_TURNS.search(data["assistantTurn"]["content"])
        series.window_turns = int(found.group(1)) if found else None
