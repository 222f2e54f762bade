"""Where the database is, and how it is brought up to date and opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tortoise import Tortoise
from tortoise.contrib.starlette import RegisterTortoise
from tortoise.migrations.api import migrate as run_migrations

from api.store.config import tortoise_config

# Writers wait for each other instead of failing with "database is locked";
# NORMAL is the durability WAL mode is designed for (a power cut may lose the
# last commits, never corrupt the file).
SQLITE_DEFAULTS = {"busy_timeout": "10000", "synchronous": "NORMAL", "foreign_keys": "ON"}


def sqlite_url(path: Path) -> str:
    return normalize_url(f"sqlite://{path}")


def normalize_url(url: str) -> str:
    """Accept the URL spellings users write; add SQLite's pragmas."""
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme in ("postgresql", "postgresql+asyncpg", "asyncpg"):
        scheme = "postgres"
    if scheme == "sqlite":
        query = dict(SQLITE_DEFAULTS)
        query.update(dict(parse_qsl(parts.query)))
        if parts.path not in ("", ":memory:") and parts.netloc != ":memory:":
            Path(parts.netloc + parts.path).parent.mkdir(parents=True, exist_ok=True)
        return urlunsplit((scheme, parts.netloc, parts.path, urlencode(query), ""))
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))


async def migrate(db_url: str) -> None:
    """Apply every migration that has not run yet (idempotent)."""
    await run_migrations(config=tortoise_config(db_url))
    await Tortoise.close_connections()


def register(app: Any, db_url: str) -> RegisterTortoise:
    """The ORM's lifespan for a Starlette app (visible to request handlers)."""
    return RegisterTortoise(app, config=tortoise_config(db_url))
