"""Throw-away databases for one benchmark run: a temporary SQLite file, or a
fresh PostgreSQL database that is dropped at the end, even when the run fails."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]

from api.store.database import normalize_url, sqlite_url

# The server to create the benchmark database on; the maintenance database
# named here is only used to CREATE and DROP it.
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres"
PG_URL_VARIABLE = "SMRITI_BENCH_PG_URL"
DATABASE_PREFIX = "smriti_bench_"
# Hex digits of a random suffix: enough that two concurrent runs never collide.
SUFFIX_LENGTH = 12


def postgres_admin_url() -> str:
    """The maintenance URL: $SMRITI_BENCH_PG_URL, else $SMRITI_TEST_PG_URL, else local."""
    return os.environ.get(PG_URL_VARIABLE) or os.environ.get("SMRITI_TEST_PG_URL", DEFAULT_PG_URL)


async def _admin(admin_url: str, statement: str) -> None:
    conn = await asyncpg.connect(admin_url.replace("postgres://", "postgresql://", 1))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@asynccontextmanager
async def temporary_database(kind: str) -> AsyncIterator[str]:
    """Yield the Smriti database URL of a new, empty database of ``kind``."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="smriti-bench-") as directory:
            yield sqlite_url(Path(directory) / "bench.sqlite3")
        return
    if kind != "postgres":
        raise ValueError(f"unknown database kind {kind!r}")
    admin_url = postgres_admin_url()
    name = DATABASE_PREFIX + uuid.uuid4().hex[:SUFFIX_LENGTH]
    await _admin(admin_url, f'CREATE DATABASE "{name}"')
    try:
        yield normalize_url(f"{admin_url.rsplit('/', 1)[0]}/{name}")
    finally:
        await _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
