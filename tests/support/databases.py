"""The test database of the chosen kind (SMRITI_TEST_DB: sqlite or postgres), and fresh
copies of it: what tests/conftest.py's fixtures and the tests that start servers share."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from api.store.database import normalize_url, sqlite_path, sqlite_url

TEST_DB = os.environ.get("SMRITI_TEST_DB", "sqlite")
PG_URL = os.environ.get("SMRITI_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


async def admin(statement: str) -> None:
    conn = await asyncpg.connect(PG_URL.replace("postgres://", "postgresql://", 1))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def check_kind() -> None:
    if TEST_DB not in ("sqlite", "postgres"):
        raise RuntimeError(f"SMRITI_TEST_DB must be sqlite or postgres, not {TEST_DB!r}")


@contextlib.asynccontextmanager
async def fresh_database(sqlite_file: Path, *, template: str | None = None) -> AsyncIterator[str]:
    """A database of the chosen kind (a PostgreSQL one is dropped after): empty, or a
    copy of ``template`` (the URL ``migrated_template`` gives)."""
    check_kind()
    if TEST_DB == "sqlite":
        if template is not None:
            source = sqlite_path(template)
            assert source is not None
            # The backup API copies what the file holds, a write-ahead log included.
            with (
                contextlib.closing(sqlite3.connect(source)) as src,
                contextlib.closing(sqlite3.connect(sqlite_file)) as dst,
            ):
                src.backup(dst)
        yield sqlite_url(sqlite_file)
        return
    name = f"smriti_test_{uuid.uuid4().hex[:12]}"
    if template is None:
        await admin(f'CREATE DATABASE "{name}"')
    else:
        await admin(f'CREATE DATABASE "{name}" TEMPLATE "{template.rsplit("/", 1)[1]}"')
    base = PG_URL.rsplit("/", 1)[0]
    try:
        yield normalize_url(f"{base}/{name}")
    finally:
        await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def module_database(folder: Path) -> AsyncIterator[str]:
    """A database of the kind under test, as conftest's ``database_url`` makes one."""
    if TEST_DB == "sqlite":
        yield sqlite_url(folder / "smriti.sqlite3")
        return
    name = f"smriti_test_{uuid.uuid4().hex[:12]}"
    await admin(f'CREATE DATABASE "{name}"')
    try:
        yield normalize_url(f"{PG_URL.rsplit('/', 1)[0]}/{name}")
    finally:
        await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
