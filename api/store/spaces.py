"""Spaces, read through their members: a space exists for its members only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from tortoise.expressions import Subquery
from tortoise.transactions import in_transaction

from ..domain.pages import Page, PageRequest
from ..domain.types import ChatSettings, Space, SpaceRole
from ..errors import NotFound
from . import members, models, rows, sql
from .paging import keyset_page
from .writes import finished

LOCAL_USER = "local"

# The space and the reader's role in it, in one indexed read.
_WITH_ROLE = (
    f"SELECT {rows.SPACE_COLUMNS}, m.role FROM space s "
    "JOIN space_member m ON m.space_id = s.id AND m.user_id = ? WHERE s.id = ?"
)


@finished
async def local_user_id() -> int:
    """The single local user every request acts as (created on first use)."""
    user, _ = await models.User.get_or_create(
        name=LOCAL_USER, defaults={"created_at": datetime.now(UTC)}
    )
    return int(user.id)


@finished
async def create(owner_id: int, name: str, description: str) -> Space:
    """A space and its creator's OWNER membership, together."""
    now = datetime.now(UTC)
    async with in_transaction("default") as conn:
        row = await models.Space.create(
            using_db=conn,
            owner_id=owner_id,
            name=name,
            description=description,
            created_at=now,
            updated_at=now,
        )
        await models.SpaceMember.create(
            using_db=conn,
            space_id=row.id,
            user_id=owner_id,
            role=SpaceRole.OWNER.value,
            created_at=now,
        )
    return rows.space(row)


async def get(user_id: int, space_id: int, *, field: str = "spaceId") -> Space:
    """A space the user is a member of (any role); NotFound otherwise."""
    return (await get_with_role(user_id, space_id, field=field))[0]


async def get_with_role(
    user_id: int, space_id: int, *, field: str = "spaceId"
) -> tuple[Space, SpaceRole]:
    found = await sql.fetch_one(sql.connection(), _WITH_ROLE, [user_id, space_id])
    if found is None:
        raise NotFound("No such space.", field=field)
    return rows.space_record(found), SpaceRole(found["role"])


async def settings_of(space_id: int) -> ChatSettings | None:
    """A space's defaults for its sessions (None: no such space); the caller
    reached the space through a session attached to it."""
    found = await sql.fetch_one(
        sql.connection(), "SELECT settings FROM space WHERE id = ?", [space_id]
    )
    return None if found is None else ChatSettings.from_json(rows.json_value(found["settings"]))


def _of_member(user_id: int, roles: Sequence[SpaceRole] | None = None) -> Subquery:
    """The ids of the spaces the user is a member of (in one of ``roles``, if given)."""
    query = models.SpaceMember.filter(user_id=user_id)
    if roles is not None:
        query = query.filter(role__in=[role.value for role in roles])
    return Subquery(query.values("space_id"))


async def get_many(user_id: int, ids: list[int]) -> dict[int, Space]:
    """The spaces among ``ids`` the user is a member of."""
    if not ids:
        return {}
    # Raw: read for every request that names a space and for every parent a
    # request had not read (the ORM's query building cost more than the statement).
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT {rows.SPACE_COLUMNS} FROM space s WHERE s.id IN ({', '.join('?' for _ in ids)})"
        " AND s.id IN (SELECT space_id FROM space_member WHERE user_id = ?)",
        [*ids, user_id],
    )
    return {
        space.id: space
        for space in (rows.space_record(cast("Mapping[str, Any]", r)) for r in found)
    }


@finished
async def update(
    user_id: int,
    space_id: int,
    *,
    name: str | None,
    description: str | None,
    roles: Sequence[SpaceRole],
    settings: ChatSettings | None = None,
) -> Space:
    """Rename or describe a space ``user_id`` is a member of in one of ``roles``
    (the policy's; the service tells a member of another role FORBIDDEN first,
    and this statement checks it again as it writes)."""
    values: dict[str, object] = {"updated_at": datetime.now(UTC)}
    if name is not None:
        values["name"] = name
    if description is not None:
        values["description"] = description
    if settings is not None:  # replaced whole; empty settings clear them
        values["settings"] = settings.to_json()
    updated = (
        await models.Space.filter(id=space_id)
        .filter(id__in=_of_member(user_id, roles))
        .update(**values)
    )
    if not updated:
        raise NotFound("No such space.", field="id")
    return rows.space(await models.Space.get(id=space_id))


@finished
async def delete(owner_id: int, space_id: int, *, roles: Sequence[SpaceRole]) -> None:
    """Delete a space ``owner_id`` is a member of in one of ``roles`` (the
    policy's), with its checkpoints and their sessions in it; other members'
    sessions are detached first, in the same transaction: their conversations
    are theirs."""
    async with in_transaction("default") as conn:
        owned = (
            await models.Space.filter(id=space_id)
            .filter(id__in=_of_member(owner_id, roles))
            .using_db(conn)
            .exists()
        )
        if not owned:
            raise NotFound("No such space.", field="id")
        await members.detach_others(conn, space_id, owner_id)
        await models.Space.filter(id=space_id).using_db(conn).delete()


async def page(user_id: int, request: PageRequest) -> Page[Space]:
    query = models.Space.filter(id__in=_of_member(user_id))
    return await keyset_page(query, "id", request, rows.space)
