"""Where the database is, and how it is brought up to date and opened."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
from tortoise import Tortoise
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.contrib.starlette import RegisterTortoise
from tortoise.exceptions import BaseORMException
from tortoise.migrations.api import migrate as run_migrations

# The URL helpers live in api/database_url.py (the settings make the URL
# canonical too, and may not import the store); the store names them as well.
from ..database_url import describe, sqlite_path
from ..database_url import normalize_url as normalize_url
from ..database_url import sqlite_url as sqlite_url
from .config import tortoise_config


class StartupError(Exception):
    """The database cannot be used; the message is one sentence for the person starting Smriti."""


def check_sqlite_file(path: Path) -> None:
    """Refuse, in one line, a SQLite file Smriti could not open and write.

    Done with the standard library before the ORM opens the file: a file the
    async driver cannot open leaves Tortoise's start-up waiting forever.
    """
    if path.exists() and not path.is_file():
        raise StartupError(f"Cannot use the database {path}: it is not a file.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a file is in the way" if isinstance(exc, FileExistsError) else exc.strerror
        raise StartupError(f"Cannot create the directory {path.parent}: {reason}.") from exc
    try:
        connection = sqlite3.connect(path, timeout=10, isolation_level=None)
        try:
            # Reading the version reads the header ("file is not a database"); writing
            # it back unchanged needs the file and its directory (journal) writable.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            connection.execute(f"PRAGMA user_version = {int(version)}")
        finally:
            connection.close()
    except sqlite3.Error as exc:
        reason = str(exc)
        if "readonly" in reason or "read-only" in reason:
            raise StartupError(
                f"The database {path} is read-only ({reason}); Smriti must be able to "
                f"write to the file and to its directory {path.parent}."
            ) from exc
        if not os.access(path.parent, os.W_OK | os.X_OK):
            reason = f"{reason}: the directory {path.parent} is not writable"
        raise StartupError(f"Cannot open the database {path}: {reason}.") from exc


async def prepare(db_url: str, *, timeout: float = 60.0) -> list[str]:
    """Check the database and apply its migrations before the server listens, so a
    database that cannot be used stops start-up with one line (StartupError).
    The names of the migrations applied now."""
    path = sqlite_path(db_url)
    if path is not None:
        check_sqlite_file(path)
    try:
        return await asyncio.wait_for(migrate(db_url), timeout)
    except TimeoutError as exc:
        raise StartupError(
            f"The database {describe(db_url)} did not answer within {timeout:g} s."
        ) from exc
    except (OSError, sqlite3.Error, BaseORMException) as exc:
        raise StartupError(f"Cannot open the database {describe(db_url)}: {exc}") from exc


# pg_advisory_lock's key for "migrating Smriti's schema" (any fixed number).
MIGRATION_LOCK = 0x534D52495449  # "SMRITI"


async def migrate(db_url: str) -> list[str]:
    """Apply every migration that has not run yet (idempotent); the names applied.

    Servers starting together on one database take turns: the first applies
    what is missing, the others then find nothing left to do (instead of
    failing on, or applying twice, what the first is in the middle of).
    """
    applied: list[str] = []

    def planned(_connection: str, plan: list[Any], _fake: bool, _dry_run: bool) -> None:
        applied.extend(step.migration.name for step in plan if not step.backward)

    async with _one_migrator(db_url):
        await run_migrations(config=tortoise_config(db_url), reporter=planned)
        await Tortoise.close_connections()
    return applied


@asynccontextmanager
async def _one_migrator(db_url: str) -> AsyncIterator[None]:
    """Hold the database's migration lock while the body runs.

    PostgreSQL: the advisory lock MIGRATION_LOCK, released when its connection
    closes, whatever happens. SQLite: an exclusive flock on a file beside the
    database (``<file>-migrate-lock``, left in place: removing a lock file races
    with the next locker); not on the database file itself, whose own locks
    SQLite takes with fcntl, which some systems merge with flock's.
    """
    path = sqlite_path(db_url)
    if path is not None:
        with open(f"{path}-migrate-lock", "a") as lock:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await asyncio.sleep(0.05)
            yield  # closing the file releases the lock
        return
    if not db_url.startswith("postgres:"):
        yield
        return
    credentials = expand_db_url(db_url)["credentials"]
    connection = await asyncpg.connect(
        **{
            key: credentials[key]
            for key in ("host", "port", "user", "password", "database", "ssl")
            if credentials.get(key) is not None
        }
    )
    try:
        await connection.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
        yield
    finally:
        await connection.close()


def register(app: Any, db_url: str) -> RegisterTortoise:
    """The ORM's lifespan for a Starlette app (visible to request handlers)."""
    return RegisterTortoise(app, config=tortoise_config(db_url))
