"""Sessions: creation, attachment to a space, the mount, deletion."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F, Q
from tortoise.transactions import in_transaction

from ..domain.pages import Page, PageRequest
from ..domain.types import MAIN_BRANCH, Checkpoint, MemoryScope, Session, Visibility
from ..errors import ErrorCode, InputError, NotFound
from . import models, rows, sql
from .paging import keyset_page
from .writes import finished


@finished
async def create(
    owner_id: int,
    *,
    title: str,
    space_id: int | None,
    memory_scope: MemoryScope,
    provider: str,
    model: str,
    branch_name: str = MAIN_BRANCH,
    seeded_from_id: int | None = None,
    forked_from_id: int | None = None,
    mount_checkpoint_id: int | None = None,
) -> Session:
    """A new session; ``mount_checkpoint_id`` mounts a checkpoint from its start
    (a viewer's fork: a session outside the space, reading that checkpoint)."""
    now = datetime.now(UTC)
    row = await models.Session.create(
        owner_id=owner_id,
        title=title,
        space_id=space_id,
        memory_scope=memory_scope.value,
        active_provider=provider,
        active_model=model,
        branch_name=branch_name,
        seeded_from_id=seeded_from_id,
        forked_from_id=forked_from_id,
        mount_checkpoint_id=mount_checkpoint_id,
        mount_base_sequence=0 if mount_checkpoint_id is not None else None,
        created_at=now,
        updated_at=now,
    )
    return rows.session(row)


# Who may read a session: its author, and the members of its space when it is
# shared with the space. One statement, answered by the primary key and the
# (user_id, space_id) index of space_member.
_READABLE = (
    "(owner_id = ? OR (visibility = 'SPACE' AND space_id IN "
    "(SELECT space_id FROM space_member WHERE user_id = ?)))"
)


async def readable(user_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    """A session the user may read; NotFound otherwise."""
    record = await sql.fetch_one(
        sql.connection(),
        f"SELECT {rows.SESSION_COLUMNS} FROM session WHERE id = ? AND {_READABLE}",
        [session_id, user_id, user_id],
    )
    if record is None:
        raise NotFound("No such session.", field=field)
    return rows.session_record(record)


async def readable_many(user_id: int, ids: list[int]) -> dict[int, Session]:
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    found = await sql.fetch(
        sql.connection(),
        f"SELECT {rows.SESSION_COLUMNS} FROM session WHERE id IN ({marks}) AND {_READABLE}",
        [*ids, user_id, user_id],
    )
    return {int(r["id"]): rows.session_record(r) for r in found}


async def get(owner_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    """A session of its author (``owner_id``); NotFound otherwise."""
    record = await sql.fetch_one(
        sql.connection(),
        f"SELECT {rows.SESSION_COLUMNS} FROM session WHERE id = ? AND owner_id = ?",
        [session_id, owner_id],
    )
    if record is None:
        raise NotFound("No such session.", field=field)
    return rows.session_record(record)


async def page(
    owner_id: int,
    space_id: int | None,
    request: PageRequest,
    *,
    only_unattached: bool = False,
    shared_too: bool = False,
) -> Page[Session]:
    """The user's sessions (of one space, or in none); with ``shared_too``, the
    space's sessions shared with it as well (the caller checked membership)."""
    query = models.Session.filter(owner_id=owner_id)
    if space_id is not None:
        query = models.Session.filter(space_id=space_id)
        if shared_too:
            query = query.filter(Q(owner_id=owner_id) | Q(visibility=Visibility.SPACE.value))
        else:
            query = query.filter(owner_id=owner_id)
    elif only_unattached:
        query = query.filter(space_id__isnull=True)
    return await keyset_page(query, "id", request, rows.session)


@finished
async def configure(
    owner_id: int,
    session_id: int,
    *,
    title: str | None = None,
    memory_scope: MemoryScope | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> Session:
    """Change what is given of the title, the memory scope and the active model
    (``provider`` and ``model`` together); the rest stays as it is."""
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title
    if memory_scope is not None:
        changes["memory_scope"] = memory_scope.value
    if (provider is None) != (model is None):
        raise ValueError("provider and model are changed together")
    if provider is not None:
        changes.update(active_provider=provider, active_model=model)
    return await _set(owner_id, session_id, changes)


_UNMOUNTED_ON_MAIN: dict[str, Any] = {
    "branch_name": MAIN_BRANCH,
    "mount_checkpoint_id": None,
    "mount_base_sequence": None,
}


@finished
async def set_visibility(owner_id: int, session_id: int, visibility: Visibility) -> Session:
    return await _set(owner_id, session_id, {"visibility": visibility.value})


@finished
async def move_to_space(
    owner_id: int,
    session_id: int,
    *,
    space_id: int,
    memory_scope: MemoryScope,
    seeded_from_id: int | None,
) -> Session:
    """Attach to another space, on its main branch, nothing mounted."""
    changes = {
        **_UNMOUNTED_ON_MAIN,
        # Shared with one space is not shared with another: sharing is asked each time.
        "visibility": Visibility.PRIVATE.value,
        "space_id": space_id,
        "memory_scope": memory_scope.value,
        "seeded_from_id": seeded_from_id,
    }
    return await _set(owner_id, session_id, changes)


@finished
async def detach(owner_id: int, session_id: int) -> Session:
    """Leave the space (what the session was seeded from is kept, as history)."""
    changes = {**_UNMOUNTED_ON_MAIN, "space_id": None, "visibility": Visibility.PRIVATE.value}
    return await _set(owner_id, session_id, changes)


@finished
async def unmount(owner_id: int, session_id: int) -> Session:
    return await _set(
        owner_id, session_id, {"mount_checkpoint_id": None, "mount_base_sequence": None}
    )


@finished
async def name_if_untitled(owner_id: int, session_id: int, title: str) -> bool:
    """Set the title only while the session has none, in one statement: a title the
    user typed in the meantime is never overwritten. True if it was set."""
    updated = await models.Session.filter(id=session_id, owner_id=owner_id, title="").update(
        title=title, updated_at=datetime.now(UTC)
    )
    return bool(updated)


async def _set(owner_id: int, session_id: int, changes: dict[str, Any]) -> Session:
    """The one place that writes a session's plain columns; only this module's
    functions above name them."""
    if not changes:
        return await get(owner_id, session_id)
    changes["updated_at"] = datetime.now(UTC)
    updated = await models.Session.filter(id=session_id, owner_id=owner_id).update(**changes)
    if not updated:
        raise NotFound("No such session.", field="sessionId")
    return await get(owner_id, session_id)


@finished
async def mount(owner_id: int, session_id: int, checkpoint_id: int) -> Session:
    """Mount with the boundary the server computes: the session's current
    lastSequenceNumber, read and written in one statement so a turn written
    concurrently is either before the boundary or after it, never lost."""
    updated = await models.Session.filter(id=session_id, owner_id=owner_id).update(
        mount_checkpoint_id=checkpoint_id,
        mount_base_sequence=F("last_sequence_number"),
        updated_at=datetime.now(UTC),
    )
    if not updated:
        raise NotFound("No such session.", field="sessionId")
    return await get(owner_id, session_id)


@finished
async def delete(owner_id: int, session_id: int) -> None:
    deleted = await models.Session.filter(id=session_id, owner_id=owner_id).delete()
    if not deleted:
        raise NotFound("No such session.", field="id")


@finished
async def create_fork(
    owner_id: int,
    *,
    checkpoint: Checkpoint,
    branch_name: str,
    title: str,
    memory_scope: MemoryScope,
    provider: str,
    model: str,
) -> Session:
    """A new branch whose head is ``checkpoint`` and a session on it, together."""
    now = datetime.now(UTC)
    try:
        async with in_transaction("default") as conn:
            await models.Branch.create(
                using_db=conn,
                space_id=checkpoint.space_id,
                name=branch_name,
                head_id=checkpoint.id,
                created_at=now,
                updated_at=now,
            )
            row = await models.Session.create(
                using_db=conn,
                owner_id=owner_id,
                title=title,
                space_id=checkpoint.space_id,
                memory_scope=memory_scope.value,
                active_provider=provider,
                active_model=model,
                branch_name=branch_name,
                seeded_from_id=checkpoint.id,
                forked_from_id=checkpoint.id,
                created_at=now,
                updated_at=now,
            )
    except IntegrityError as exc:
        raise InputError(
            f'The branch "{branch_name}" already exists in this space.',
            code=ErrorCode.BRANCH_EXISTS,
            field="branchName",
        ) from exc
    return rows.session(row)
