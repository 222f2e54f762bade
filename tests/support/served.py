"""Small synchronous helpers for tests that drive a running `smriti serve`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from api.store.database import sqlite_url
from tests.support.servers import SmritiServer

LAST = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"


@contextmanager
def sqlite_server(folder: Path) -> Iterator[SmritiServer]:
    """`smriti serve` on a new SQLite file in ``folder`` (offline provider)."""
    with SmritiServer(sqlite_url(folder / "smriti.sqlite3")) as running:
        yield running


def new_session(server: SmritiServer) -> str:
    created = httpx.post(
        server.graphql_url,
        json={"query": "mutation { createSession(input: {}) { session { id } } }"},
    ).json()
    sid: str = created["data"]["createSession"]["session"]["id"]
    return sid


def last_sequence(server: SmritiServer, sid: str) -> int:
    body = httpx.post(server.graphql_url, json={"query": LAST, "variables": {"s": sid}}).json()
    number: int = body["data"]["session"]["lastSequenceNumber"]
    return number
