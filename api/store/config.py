"""The Tortoise configuration for a database URL."""

from __future__ import annotations

import os
from typing import Any

from tortoise.backends.base.config_generator import expand_db_url

# Named from this package's name: `api.store` in a clone, `smriti.store` installed.
MODELS_MODULE = f"{__package__}.models"
MIGRATIONS_MODULE = f"{__package__}.migrations"
ASYNCPG_ENGINE = "tortoise.backends.asyncpg"


def tortoise_config(db_url: str) -> dict[str, Any]:
    return {
        "connections": {"default": connection_config(db_url)},
        "apps": {
            "models": {
                "models": [MODELS_MODULE],
                "default_connection": "default",
                "migrations": MIGRATIONS_MODULE,
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def connection_config(db_url: str) -> str | dict[str, Any]:
    """The URL itself, or for PostgreSQL the URL's settings and a pool that
    gives connections back as they are (``keep_session``)."""
    expanded = expand_db_url(db_url)
    if expanded["engine"] != ASYNCPG_ENGINE:
        return db_url
    expanded["credentials"]["reset"] = keep_session
    return expanded


async def keep_session(connection: object) -> None:
    """What asyncpg's pool does to a connection given back, beyond rolling back
    a transaction left open (which it still does): nothing.

    Its default sends ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
    RESET ALL`` at every release: one more round trip to the server for every
    statement run outside a transaction and for every transaction, awaited by
    the statement's caller (Tortoise releases before it returns). Smriti leaves
    nothing of the kind on a pooled connection: no SET, LISTEN, cursor or
    advisory lock goes through the pool (the migrations' lock has a connection
    of its own, ``api.store.database``).
    """


# For Tortoise's own CLI (`tortoise -c api.store.config.TORTOISE_ORM makemigrations`).
TORTOISE_ORM = tortoise_config(os.environ.get("SMRITI_DATABASE_URL", "sqlite://:memory:"))
