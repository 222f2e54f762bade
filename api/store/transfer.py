"""Whole spaces at once: the reads behind verify and export, the import write."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from tortoise import Tortoise

from api.domain.types import Checkpoint
from api.store import database, models, rows
from api.store.config import tortoise_config


async def hash_space_id(space_id: int) -> int:
    """The space id the space's checkpoint hashes are sealed with."""
    origin = await models.Space.filter(id=space_id).values_list("origin_space_id", flat=True)
    return int(origin[0]) if origin and origin[0] is not None else space_id


async def space_checkpoints(space_id: int) -> list[Checkpoint]:
    """Every checkpoint of the space, oldest first (ids grow with time)."""
    found = await models.Checkpoint.filter(space_id=space_id).order_by("id")
    return [rows.checkpoint(row) for row in found]


async def space_ids(owner_id: int) -> list[int]:
    return [
        int(i)
        for i in await models.Space.filter(owner_id=owner_id)
        .order_by("id")
        .values_list("id", flat=True)
    ]


@contextlib.asynccontextmanager
async def opened(db_url: str) -> AsyncIterator[None]:
    """The database, migrated and connected, for a command-line tool."""
    await database.prepare(db_url)
    await Tortoise.init(config=tortoise_config(db_url))
    try:
        yield
    finally:
        await Tortoise.close_connections()
