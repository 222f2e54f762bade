"""The Tortoise configuration for a database URL."""

from __future__ import annotations

import os
from typing import Any

# Named from this package's name: `api.store` in a clone, `smriti.store` installed.
MODELS_MODULE = f"{__package__}.models"
MIGRATIONS_MODULE = f"{__package__}.migrations"


def tortoise_config(db_url: str) -> dict[str, Any]:
    return {
        "connections": {"default": db_url},
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


# For Tortoise's own CLI (`tortoise -c api.store.config.TORTOISE_ORM makemigrations`).
TORTOISE_ORM = tortoise_config(os.environ.get("SMRITI_DATABASE_URL", "sqlite://:memory:"))
