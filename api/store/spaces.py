"""Spaces and their owner."""

from __future__ import annotations

from datetime import UTC, datetime

from api.domain.types import Space
from api.errors import NotFound
from api.store import models, rows
from api.store.pages import Page, PageRequest
from api.store.paging import keyset_page
from api.store.writes import finished

LOCAL_USER = "local"


@finished
async def local_user_id() -> int:
    """The single local user every request acts as (created on first use)."""
    user, _ = await models.User.get_or_create(
        name=LOCAL_USER, defaults={"created_at": datetime.now(UTC)}
    )
    return int(user.id)


@finished
async def create(owner_id: int, name: str, description: str) -> Space:
    now = datetime.now(UTC)
    row = await models.Space.create(
        owner_id=owner_id, name=name, description=description, created_at=now, updated_at=now
    )
    return rows.space(row)


async def get(owner_id: int, space_id: int, *, field: str = "spaceId") -> Space:
    row = await models.Space.get_or_none(id=space_id, owner_id=owner_id)
    if row is None:
        raise NotFound("No such space.", field=field)
    return rows.space(row)


async def get_many(owner_id: int, ids: list[int]) -> dict[int, Space]:
    found = await models.Space.filter(id__in=ids, owner_id=owner_id)
    return {row.id: rows.space(row) for row in found}


@finished
async def update(
    owner_id: int, space_id: int, *, name: str | None, description: str | None
) -> Space:
    values: dict[str, object] = {"updated_at": datetime.now(UTC)}
    if name is not None:
        values["name"] = name
    if description is not None:
        values["description"] = description
    updated = await models.Space.filter(id=space_id, owner_id=owner_id).update(**values)
    if not updated:
        raise NotFound("No such space.", field="id")
    return await get(owner_id, space_id, field="id")


@finished
async def delete(owner_id: int, space_id: int) -> None:
    deleted = await models.Space.filter(id=space_id, owner_id=owner_id).delete()
    if not deleted:
        raise NotFound("No such space.", field="id")


async def page(owner_id: int, request: PageRequest) -> Page[Space]:
    query = models.Space.filter(owner_id=owner_id)
    return await keyset_page(query, "id", request, rows.space)
