"""Space members and their roles (one row per member; the creator's is written
with the space).

Changes to a space's members are serialised on the space's row, like saving
a checkpoint: two owners demoting each other at once cannot both pass the
"one OWNER is left" check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ..domain.types import MAIN_BRANCH, Member, SpaceRole, Visibility
from ..errors import ErrorCode, InputError, NotFound
from . import rows, sql
from .readable import readable_sessions
from .tables import SPACE, SPACE_MEMBER
from .writes import finished

_MEMBERS = (
    "SELECT m.space_id, m.user_id, u.name, m.role, m.created_at FROM space_member m "
    "JOIN smriti_user u ON u.id = m.user_id WHERE m.space_id = ? ORDER BY m.id"
)


_ROLE = "SELECT role FROM space_member WHERE user_id = ? AND space_id = ?"


async def role(user_id: int, space_id: int) -> SpaceRole | None:
    """The user's role in the space; None when they are not a member (one indexed read)."""
    found = await sql.fetch_value(sql.connection(), _ROLE, [user_id, space_id])
    return None if found is None else SpaceRole(found)


async def roles(user_id: int, space_ids: Sequence[int]) -> dict[int, SpaceRole]:
    """The user's role in each of the spaces they are a member of."""
    if not space_ids:
        return {}
    marks = sql.marks(space_ids)
    found = await sql.fetch(
        sql.connection(),
        f"SELECT space_id, role FROM space_member WHERE user_id = ? AND space_id IN ({marks})",
        [user_id, *space_ids],
    )
    return {int(r["space_id"]): SpaceRole(r["role"]) for r in found}


async def of_spaces(space_ids: Sequence[int]) -> dict[int, list[Member]]:
    """Each space's members, in the order they were added (one statement)."""
    result: dict[int, list[Member]] = {i: [] for i in space_ids}
    if not space_ids:
        return result
    marks = sql.marks(space_ids)
    found = await sql.fetch(
        sql.connection(),
        "SELECT m.space_id, m.user_id, u.name, m.role, m.created_at FROM space_member m "
        f"JOIN smriti_user u ON u.id = m.user_id WHERE m.space_id IN ({marks}) "
        "ORDER BY m.space_id, m.id",
        list(space_ids),
    )
    for record in found:
        result[int(record["space_id"])].append(_member(record))
    return result


# Whether the user reads anything in the search index that is not their own
# (entries carry the owner they were written with): a space someone else made,
# a session someone else shared with one of their spaces, or a space they
# made and have left.
_SHARED = readable_sessions("s", through_space_only=True)
_SHARES_ANYTHING = f"""
SELECT 1 AS found WHERE EXISTS (
    SELECT 1 FROM space_member m JOIN space s ON s.id = m.space_id
    WHERE m.user_id = ? AND s.owner_id <> ?
) OR EXISTS (
    SELECT 1 FROM session s WHERE {_SHARED.sql} AND s.owner_id <> ?
) OR EXISTS (
    SELECT 1 FROM space s WHERE s.owner_id = ? AND NOT EXISTS (
        SELECT 1 FROM space_member m WHERE m.space_id = s.id AND m.user_id = ?
    )
)
"""


async def shares_anything(user_id: int) -> bool:
    found = await sql.fetch_one(
        sql.connection(),
        _SHARES_ANYTHING,
        [user_id, user_id, *_SHARED.params(user_id), user_id, user_id, user_id],
    )
    return found is not None


def _member(record: Any) -> Member:
    return Member(
        space_id=int(record["space_id"]),
        user_id=int(record["user_id"]),
        user_name=record["name"],
        role=SpaceRole(record["role"]),
        created_at=rows.timestamp(record["created_at"]),
    )


# What the service's policy says of a role (raises Forbidden when it does not
# allow the change): the store never decides which roles may.
RoleCheck = Callable[[SpaceRole], None]


async def _lock_as(conn: Any, space_id: int, by: int, check_role: RoleCheck) -> None:
    """Take the space's row lock (PostgreSQL) or the write lock (SQLite) till
    commit, then ask ``check_role`` of ``by``'s role: a role checked before the
    lock may have changed since (an owner demoted a moment ago changes nothing)."""
    await sql.update(conn, SPACE, {"updated_at": datetime.now(UTC)}, "id = ?", [space_id])
    found = await sql.fetch_value(conn, _ROLE, [by, space_id])
    if found is None:
        raise NotFound("No such space.", field="spaceId")
    check_role(SpaceRole(found))


async def _owners(conn: Any, space_id: int) -> int:
    found = await sql.fetch_one(
        conn,
        "SELECT COUNT(*) AS n FROM space_member WHERE space_id = ? AND role = ?",
        [space_id, SpaceRole.OWNER.value],
    )
    return int(found["n"]) if found is not None else 0


def _last_owner(name: str) -> InputError:
    return InputError(
        f"{name} is the space's last owner: make another member an owner first.",
        code=ErrorCode.LAST_OWNER,
        field="userName",
    )


@finished
async def add(
    space_id: int, user_id: int, role: SpaceRole, *, by: int, check_role: RoleCheck
) -> Member:
    """Add ``user_id`` with ``role``; ``by``: the member adding them."""
    try:
        async with sql.transaction() as conn:
            await _lock_as(conn, space_id, by, check_role)
            await sql.insert(
                conn,
                SPACE_MEMBER,
                dict(
                    space_id=space_id,
                    user_id=user_id,
                    role=role.value,
                    created_at=datetime.now(UTC),
                ),
            )
            return await _current(conn, space_id, user_id)
    except sql.IntegrityError:
        raise InputError(
            "That user is already a member of this space (updateSpaceMember changes a role).",
            code=ErrorCode.CONFLICT,
            field="userName",
        ) from None


@finished
async def change(
    space_id: int, user_id: int, role: SpaceRole, *, by: int, check_role: RoleCheck
) -> Member:
    """A member's new role; LAST_OWNER when it would leave the space without one."""
    async with sql.transaction() as conn:
        await _lock_as(conn, space_id, by, check_role)
        current = await _current(conn, space_id, user_id)
        demoted = current.role is SpaceRole.OWNER and role is not SpaceRole.OWNER
        if demoted and await _owners(conn, space_id) <= 1:
            raise _last_owner(current.user_name)
        await sql.update(
            conn,
            SPACE_MEMBER,
            {"role": role.value},
            "space_id = ? AND user_id = ?",
            [space_id, user_id],
        )
        return await _current(conn, space_id, user_id)


@finished
async def remove(space_id: int, user_id: int, *, by: int, check_role: RoleCheck) -> None:
    """Remove a member (LAST_OWNER for the last owner). Their sessions leave the
    space with them, in the same transaction: attached ones are detached (private,
    on main, nothing mounted) and a mount of one of its checkpoints is undone, so
    no message of theirs reads the space afterwards."""
    async with sql.transaction() as conn:
        await _lock_as(conn, space_id, by, check_role)
        current = await _current(conn, space_id, user_id)
        if current.role is SpaceRole.OWNER and await _owners(conn, space_id) <= 1:
            raise _last_owner(current.user_name)
        await sql.execute(
            conn,
            "DELETE FROM space_member WHERE space_id = ? AND user_id = ?",
            [space_id, user_id],
        )
        await sql.execute(
            conn,
            "UPDATE session SET mount_checkpoint_id = NULL, mount_base_sequence = NULL "
            "WHERE owner_id = ? AND mount_checkpoint_id IN "
            "(SELECT id FROM checkpoint WHERE space_id = ?)",
            [user_id, space_id],
        )
        await _detach(conn, space_id, "owner_id = ?", user_id)


async def detach_others(conn: Any, space_id: int, user_id: int) -> None:
    """Detach the space's sessions of every user but ``user_id``."""
    await _detach(conn, space_id, "owner_id <> ?", user_id)


async def _detach(conn: Any, space_id: int, whose: str, user_id: int) -> None:
    """Detach sessions of the space: private, on main, nothing mounted."""
    await sql.execute(
        conn,
        "UPDATE session SET space_id = NULL, branch_name = ?, mount_checkpoint_id = NULL, "
        f"mount_base_sequence = NULL, visibility = ?, updated_at = ? "
        f"WHERE space_id = ? AND {whose}",
        [MAIN_BRANCH, Visibility.PRIVATE.value, datetime.now(UTC), space_id, user_id],
    )


async def _current(conn: Any, space_id: int, user_id: int) -> Member:
    found = await sql.fetch(
        conn, _MEMBERS.replace("ORDER BY", "AND m.user_id = ? ORDER BY"), [space_id, user_id]
    )
    if not found:
        raise NotFound("That user is not a member of this space.", field="userName")
    return _member(found[0])
