"""Where the database is, and how it is brought up to date and opened."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tortoise import Tortoise
from tortoise.contrib.starlette import RegisterTortoise
from tortoise.exceptions import BaseORMException
from tortoise.migrations.api import migrate as run_migrations

from api.store.config import tortoise_config

# Writers wait for each other instead of failing with "database is locked";
# NORMAL is the durability WAL mode is designed for (a power cut may lose the
# last commits, never corrupt the file).
SQLITE_DEFAULTS = {"busy_timeout": "10000", "synchronous": "NORMAL", "foreign_keys": "ON"}


class StartupError(Exception):
    """The database cannot be used; the message is one line for the person starting Smriti."""


def sqlite_url(path: Path) -> str:
    return normalize_url(f"sqlite://{path}")


def normalize_url(url: str) -> str:
    """Accept the URL spellings users write; add SQLite's pragmas.

    A SQLite file path becomes absolute here, so the server opens (and prints) the
    file the user meant: ``sqlite:////abs`` (SQLAlchemy's spelling) and
    ``sqlite:///abs`` (Tortoise's, and what the README has always shown) both name
    ``/abs``; ``sqlite://relative/path`` is relative to the working directory.
    """
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme in ("postgresql", "postgresql+asyncpg", "asyncpg"):
        scheme = "postgres"
    if scheme == "sqlite":
        query = dict(SQLITE_DEFAULTS)
        query.update(dict(parse_qsl(parts.query)))
        # Built by hand: urlunsplit would drop the empty host ("sqlite:/abs").
        return f"sqlite://{_sqlite_location(parts.netloc + parts.path)}?{urlencode(query)}"
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))


def _sqlite_location(raw: str) -> str:
    if raw in ("", ":memory:", "/:memory:"):
        return ":memory:"
    if raw.startswith("//"):
        # SQLAlchemy's absolute spelling; POSIX keeps a leading "//" distinct.
        raw = "/" + raw.lstrip("/")
    return str(Path(raw).expanduser().absolute())


def sqlite_path(url: str) -> Path | None:
    """The file a normalized SQLite URL names (None for PostgreSQL and :memory:)."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or ":memory:" in (parts.netloc, parts.path):
        return None
    return Path(parts.path)


def describe(url: str) -> str:
    """The database as the start-up line shows it: a file's absolute path, or the
    URL without its password."""
    path = sqlite_path(url)
    if path is not None:
        return f"SQLite file {path}"
    parts = urlsplit(url)
    netloc = (
        parts.netloc.replace(f":{parts.password}@", ":***@") if parts.password else parts.netloc
    )
    return urlunsplit(parts._replace(netloc=netloc, query=""))


def check_sqlite_file(path: Path) -> None:
    """Refuse, in one line, a SQLite file Smriti could not open and write.

    Done with the standard library before the ORM opens the file: a file the
    async driver cannot open leaves Tortoise's start-up waiting forever.
    """
    if path.exists() and not path.is_file():
        raise StartupError(f"cannot use the database {path}: it is not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a file is in the way" if isinstance(exc, FileExistsError) else exc.strerror
        raise StartupError(f"cannot create the directory {path.parent}: {reason}") from exc
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
                f"the database {path} is read-only ({reason}); Smriti must be able to "
                f"write to the file and to its directory {path.parent}"
            ) from exc
        if not os.access(path.parent, os.W_OK | os.X_OK):
            reason = f"{reason}: the directory {path.parent} is not writable"
        raise StartupError(f"cannot open the database {path}: {reason}") from exc


async def prepare(db_url: str, *, timeout: float = 60.0) -> None:
    """Check the database and apply its migrations before the server listens, so a
    database that cannot be used stops start-up with one line (StartupError)."""
    path = sqlite_path(db_url)
    if path is not None:
        check_sqlite_file(path)
    try:
        await asyncio.wait_for(migrate(db_url), timeout)
    except TimeoutError as exc:
        raise StartupError(
            f"the database {describe(db_url)} did not answer within {timeout:g} s"
        ) from exc
    except (OSError, sqlite3.Error, BaseORMException) as exc:
        raise StartupError(f"cannot open the database {describe(db_url)}: {exc}") from exc


async def migrate(db_url: str) -> None:
    """Apply every migration that has not run yet (idempotent)."""
    await run_migrations(config=tortoise_config(db_url))
    await Tortoise.close_connections()


def register(app: Any, db_url: str) -> RegisterTortoise:
    """The ORM's lifespan for a Starlette app (visible to request handlers)."""
    return RegisterTortoise(app, config=tortoise_config(db_url))
