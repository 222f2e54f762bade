"""Spaces, read through their members: a space exists for its members only."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..domain.pages import Page, PageRequest
from ..domain.types import ChatSettings, Space, SpaceRole
from ..errors import NotFound
from . import members, rows, sql
from .paging import keyset
from .tables import SPACE, SPACE_MEMBER, USER
from .writes import finished

LOCAL_USER = "local"

_COLUMNS = SPACE.select("s")
# The space and the reader's role in it, in one indexed read.
_WITH_ROLE = (
    f"SELECT {_COLUMNS}, m.role FROM space s "
    "JOIN space_member m ON m.space_id = s.id AND m.user_id = ? WHERE s.id = ?"
)
_ROLE = len(SPACE.columns)


@finished
async def local_user_id() -> int:
    """The single local user every request acts as (created on first use; two
    first uses at once make one)."""
    conn = sql.connection()
    find = "SELECT id FROM smriti_user WHERE name = ?"
    found = await sql.fetch_rows(conn, find, [LOCAL_USER])
    if not found:
        await sql.execute(
            conn,
            f"INSERT INTO {USER.name} (name, created_at, is_admin, disabled) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            [LOCAL_USER, datetime.now(UTC), False, False],
        )
        found = await sql.fetch_rows(conn, find, [LOCAL_USER])
    return int(found[0][0])


@finished
async def create(owner_id: int, name: str, description: str) -> Space:
    """A space and its creator's OWNER membership, together."""
    now = datetime.now(UTC)
    async with sql.transaction() as conn:
        values = dict(
            owner_id=owner_id,
            name=name,
            description=description,
            created_at=now,
            updated_at=now,
        )
        space = rows.space(await sql.insert(conn, SPACE, values))
        await sql.insert(
            conn,
            SPACE_MEMBER,
            dict(space_id=space.id, user_id=owner_id, role=SpaceRole.OWNER.value, created_at=now),
        )
    return space


async def get(user_id: int, space_id: int, *, field: str = "spaceId") -> Space:
    """A space the user is a member of (any role); NotFound otherwise."""
    return (await get_with_role(user_id, space_id, field=field))[0]


async def get_with_role(
    user_id: int, space_id: int, *, field: str = "spaceId"
) -> tuple[Space, SpaceRole]:
    found = await sql.fetch_rows(sql.connection(), _WITH_ROLE, [user_id, space_id])
    if not found:
        raise NotFound("No such space.", field=field)
    return rows.space(found[0]), SpaceRole(found[0][_ROLE])


async def settings_of(space_id: int) -> ChatSettings | None:
    """A space's defaults for its sessions (None: no such space); the caller
    reached the space through a session attached to it."""
    found = await sql.fetch_one(
        sql.connection(), "SELECT settings FROM space WHERE id = ?", [space_id]
    )
    return None if found is None else ChatSettings.from_json(rows.json_value(found["settings"]))


def _of_member(user_id: int, roles: Sequence[SpaceRole] | None = None) -> tuple[str, list[Any]]:
    """The ids of the spaces the user is a member of (in one of ``roles``, if
    given), as a subquery and its parameters."""
    if roles is None:
        return "SELECT space_id FROM space_member WHERE user_id = ?", [user_id]
    marks = sql.marks(roles)
    return (
        f"SELECT space_id FROM space_member WHERE user_id = ? AND role IN ({marks})",
        [user_id, *(role.value for role in roles)],
    )


async def get_many(user_id: int, ids: list[int]) -> dict[int, Space]:
    """The spaces among ``ids`` the user is a member of."""
    if not ids:
        return {}
    # Read for every request that names a space and for every parent a
    # request had not read.
    member, params = _of_member(user_id)
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT {_COLUMNS} FROM space s WHERE s.id IN ({sql.marks(ids)}) AND s.id IN ({member})",
        [*ids, *params],
    )
    return {space.id: space for space in map(rows.space, found)}


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
    member, params = _of_member(user_id, roles)
    conn = sql.connection()
    updated = await sql.update(
        conn, SPACE, values, f"id = ? AND id IN ({member})", [space_id, *params]
    )
    if not updated:
        raise NotFound("No such space.", field="id")
    found = await sql.fetch_rows(conn, f"SELECT {_COLUMNS} FROM space s WHERE s.id = ?", [space_id])
    return rows.space(found[0])


@finished
async def delete(owner_id: int, space_id: int, *, roles: Sequence[SpaceRole]) -> None:
    """Delete a space ``owner_id`` is a member of in one of ``roles`` (the
    policy's), with its checkpoints and their sessions in it; other members'
    sessions are detached first, in the same transaction: their conversations
    are theirs."""
    member, params = _of_member(owner_id, roles)
    async with sql.transaction() as conn:
        owned = await sql.fetch_rows(
            conn, f"SELECT 1 FROM space WHERE id = ? AND id IN ({member})", [space_id, *params]
        )
        if not owned:
            raise NotFound("No such space.", field="id")
        await members.detach_others(conn, space_id, owner_id)
        await sql.execute(conn, "DELETE FROM space WHERE id = ?", [space_id])


async def page(user_id: int, request: PageRequest) -> Page[Space]:
    """The user's spaces by id (``keyset``)."""
    member, params = _of_member(user_id)
    page_of = keyset(request, "s.id")
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT {_COLUMNS} FROM space s WHERE s.id IN ({member}){page_of.bounds} "
        f"ORDER BY s.id {page_of.order} LIMIT ?",
        [*params, *page_of.params, page_of.limit + 1],
    )
    kept = [rows.space(r) for r in found[: page_of.limit]]
    return page_of.page(kept, more=len(found) > page_of.limit)
