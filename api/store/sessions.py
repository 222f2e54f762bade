"""Sessions: creation, attachment to a space, the mount, deletion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..domain.branching import Member, branch_mount
from ..domain.pages import Page, PageRequest
from ..domain.types import (
    MAIN_BRANCH,
    ChatSettings,
    Checkpoint,
    MemoryScope,
    Session,
    Turn,
    Visibility,
)
from ..errors import ErrorCode, InputError, NotFound
from . import rows, sql
from .readable import readable_sessions
from .tables import BRANCH, SESSION, SESSION_TAG, TURN
from .writes import finished

_COLUMNS = SESSION.select()
_READABLE = readable_sessions()


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
    values = dict(
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
    return rows.session(await sql.insert(sql.connection(), SESSION, values))


async def _one(where: str, params: list[Any]) -> Session | None:
    found = await sql.fetch_rows(
        sql.connection(), f"SELECT {_COLUMNS} FROM session WHERE {where}", params
    )
    return rows.session(found[0]) if found else None


async def readable(user_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    """A session the user may read; NotFound otherwise (one statement)."""
    found = await _one(f"id = ? AND {_READABLE.sql}", [session_id, *_READABLE.params(user_id)])
    if found is None:
        raise NotFound("No such session.", field=field)
    return found


_SESSION_QUALIFIED = SESSION.select("session")
_TURN_COLUMNS = TURN.select()
# for_message's rows: the session's (its columns, the key's turn, the space's
# settings, then NULLs), and one per turn of the window (NULLs, then the turn's
# columns), read by position: the session's columns are not repeated per turn.
_RECENT_AT = len(SESSION.columns) + 2
_NO_TURN = ", ".join("NULL" for _ in TURN.columns)
_NO_SESSION = ", ".join("NULL" for _ in range(_RECENT_AT))
_SPACE_SETTINGS = (
    "(SELECT space.settings FROM space WHERE space.id = session.space_id) AS space_settings"
)
_KEYED_TURN = (
    "(SELECT keyed.id FROM turn AS keyed "
    "WHERE keyed.session_id = session.id AND keyed.idempotency_key = ?)"
)


@dataclass(frozen=True, slots=True)
class ForMessage:
    """A session as a new message to it needs it, read at once (``for_message``)."""

    session: Session
    # The turn the message's idempotency key was sent with already (None: none).
    keyed_turn_id: int | None
    # The session's newest turns, newest first: the window's (``store.context``).
    recent: tuple[Turn, ...]
    # Its space's defaults for its sessions (None: no space), as ``spaces.settings_of``.
    space_settings: ChatSettings | None


async def for_message(
    user_id: int,
    session_id: int,
    *,
    idempotency_key: str | None,
    window: int,
    field: str = "sessionId",
) -> ForMessage:
    """``readable``, with what a message to the session needs of it before its
    turn is written: the turn ``idempotency_key`` was sent with, if any (by the
    (session_id, idempotency_key) unique index), the ``window`` newest turns
    (by the (session_id, sequence_number) one) and its space's settings. One
    statement: read apart, they were up to four round trips before the write,
    each a wait of its own."""
    keyed = _KEYED_TURN if idempotency_key is not None else "NULL"
    found = await sql.fetch_records(
        sql.connection(),
        f"SELECT {_SESSION_QUALIFIED}, {keyed} AS keyed_turn_id, {_SPACE_SETTINGS}, "
        f"{_NO_TURN} FROM session WHERE session.id = ? AND {_READABLE.sql} "
        f"UNION ALL SELECT {_NO_SESSION}, {_TURN_COLUMNS} FROM (SELECT {_TURN_COLUMNS} "
        "FROM turn WHERE session_id = ? ORDER BY sequence_number DESC LIMIT ?) AS recent",
        [
            *([idempotency_key] if idempotency_key is not None else []),
            session_id,
            *_READABLE.params(user_id),
            session_id,
            window,
        ],
    )
    # Without the session's row (not theirs to read) the turns are never used.
    first = next((record for record in found if record[0] is not None), None)
    if first is None:
        raise NotFound("No such session.", field=field)
    recent = [rows.turn(record[_RECENT_AT:]) for record in found if record[0] is None]
    recent.sort(key=lambda turn: turn.sequence_number, reverse=True)
    session = rows.session(first)
    keyed_turn_id, space_settings = first[_RECENT_AT - 2], first[_RECENT_AT - 1]
    return ForMessage(
        session,
        None if keyed_turn_id is None else int(keyed_turn_id),
        tuple(recent),
        None
        if session.space_id is None
        else ChatSettings.from_json(rows.json_value(space_settings)),
    )


async def readable_many(user_id: int, ids: list[int]) -> dict[int, Session]:
    if not ids:
        return {}
    marks = sql.marks(ids)
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT {_COLUMNS} FROM session WHERE id IN ({marks}) AND {_READABLE.sql}",
        [*ids, *_READABLE.params(user_id)],
    )
    return {session.id: session for session in map(rows.session, found)}


async def get(owner_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    """A session of its author (``owner_id``); NotFound otherwise."""
    found = await _one("id = ? AND owner_id = ?", [session_id, owner_id])
    if found is None:
        raise NotFound("No such session.", field=field)
    return found


@dataclass(frozen=True, slots=True)
class Filters:
    """Which sessions a listing holds. ``archived``: False (the default) leaves
    archived sessions out, True lists only them, None both; ``pinned`` likewise
    (None: both); ``tag_key``: only sessions with that tag (its key);
    ``latest_per_family``: of a conversation's branches (one family), only the
    most recently updated one the listing holds."""

    archived: bool | None = False
    pinned: bool | None = None
    tag_key: str | None = None
    latest_per_family: bool = False


@dataclass(frozen=True, slots=True)
class _Listing:
    """Which sessions a listing may show (its scope: whose, which space) and
    which of them it holds (its filters), as SQL on the session table named
    ``alias``: one rule, read for the rows listed and for their newer branches."""

    owner_id: int
    space_id: int | None
    only_unattached: bool
    shared_too: bool
    filters: Filters

    def scope(self, alias: str) -> tuple[list[str], list[Any]]:
        if self.space_id is None:
            where = [f"{alias}.owner_id = ?"]
            if self.only_unattached:
                where.append(f"{alias}.space_id IS NULL")
            return where, [self.owner_id]
        if self.shared_too:
            mine = f"({alias}.owner_id = ? OR {alias}.visibility = '{Visibility.SPACE.value}')"
        else:
            mine = f"{alias}.owner_id = ?"
        return [f"{alias}.space_id = ?", mine], [self.space_id, self.owner_id]

    def held(self, alias: str) -> tuple[list[str], list[Any]]:
        where, params = self.scope(alias)
        f = self.filters
        for column, wanted in (("archived_at", f.archived), ("pinned_at", f.pinned)):
            if wanted is not None:
                where.append(f"{alias}.{column} IS {'NOT ' if wanted else ''}NULL")
        if f.tag_key is not None:
            where.append(f"{alias}.id IN (SELECT session_id FROM session_tag WHERE tag_key = ?)")
            params.append(f.tag_key)
        return where, params


# A row whose family has a newer session the listing holds is left out: the
# family's sessions are its root and those naming it, newer by updated_at, then
# by id. Two lookups, by the primary key and by the branch_root_id index (one
# with OR, or a join on COALESCE, scanned all of the owner's sessions per row).
_NEWER = "(o.updated_at > s.updated_at OR (o.updated_at = s.updated_at AND o.id > s.id))"
_NEWER_OF_FAMILY = (
    "NOT EXISTS (SELECT 1 FROM session o WHERE o.id = s.branch_root_id "
    f"AND {_NEWER} AND {{held}}) "
    "AND NOT EXISTS (SELECT 1 FROM session o "
    "WHERE o.branch_root_id = COALESCE(s.branch_root_id, s.id) "
    f"AND {_NEWER} AND {{held}})"
)
_LISTED = SESSION.select("s")


async def page(
    owner_id: int,
    space_id: int | None,
    request: PageRequest,
    *,
    only_unattached: bool = False,
    shared_too: bool = False,
    filters: Filters | None = None,
) -> Page[Session]:
    """The user's sessions (of one space, or in none); with ``shared_too``, the
    space's sessions shared with it as well (the caller checked membership).

    Pinned sessions first, the most recently pinned first (then by id), then the
    others oldest first. Forward only (``first``/``after``): the cursor is a
    session's id, whose place is read again (it may have been pinned since)."""
    listing = _Listing(owner_id, space_id, only_unattached, shared_too, filters or Filters())
    conn = sql.connection()
    where, params = listing.held("s")
    if listing.filters.latest_per_family:
        newer, newer_params = listing.held("o")
        where.append(_NEWER_OF_FAMILY.format(held=" AND ".join(newer)))
        params += newer_params + newer_params
    if request.after is not None:
        # The cursor's row among those the listing may show (not a stranger's);
        # its pinned_at is passed back as the driver read it.
        scope, scope_params = listing.scope("s")
        found = await sql.fetch_rows(
            conn,
            f"SELECT s.pinned_at FROM session s WHERE s.id = ? AND {' AND '.join(scope)}",
            [request.after, *scope_params],
        )
        pinned_at = found[0][0] if found else None
        if pinned_at is None:
            where.append("(s.pinned_at IS NULL AND s.id > ?)")
            params.append(request.after)
        else:
            where.append(
                "(s.pinned_at < ? OR (s.pinned_at = ? AND s.id > ?) OR s.pinned_at IS NULL)"
            )
            params += [pinned_at, pinned_at, request.after]
    limit = request.first if request.first is not None else 100
    # One statement: the pinned (most recently pinned first), then the others.
    found_rows = await sql.fetch_rows(
        conn,
        f"SELECT {_LISTED} FROM session s WHERE {' AND '.join(where)} "
        "ORDER BY CASE WHEN s.pinned_at IS NULL THEN 1 ELSE 0 END, s.pinned_at DESC, s.id "
        "LIMIT ?",
        [*params, limit + 1],
    )
    return Page(
        tuple(rows.session(r) for r in found_rows[:limit]),
        has_next=len(found_rows) > limit,
        has_previous=request.after is not None,
    )


async def family_sizes(user_id: int, root_ids: Sequence[int]) -> dict[int, int]:
    """How many sessions of each family (by its root's id) the user may read:
    one statement through the primary key and the branch_root_id index."""
    if not root_ids:
        return {}
    marks = sql.marks(root_ids)
    found = await sql.fetch_rows(
        sql.connection(),
        "SELECT COALESCE(branch_root_id, id), COUNT(*) FROM session "
        f"WHERE (id IN ({marks}) OR branch_root_id IN ({marks})) AND {_READABLE.sql} "
        "GROUP BY COALESCE(branch_root_id, id)",
        [*root_ids, *root_ids, *_READABLE.params(user_id)],
    )
    return {int(r[0]): int(r[1]) for r in found}


@finished
async def configure(
    owner_id: int,
    session_id: int,
    *,
    title: str | None = None,
    memory_scope: MemoryScope | None = None,
    provider: str | None = None,
    model: str | None = None,
    settings: ChatSettings | None = None,
) -> Session:
    """Change what is given of the title, the memory scope, the active model
    (``provider`` and ``model`` together) and the settings (replaced whole;
    empty settings clear them); the rest stays as it is."""
    changes: dict[str, Any] = {}
    if settings is not None:
        changes["settings"] = settings.to_json()
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
async def organise(
    owner_id: int,
    session_id: int,
    *,
    pinned: bool | None = None,
    archived: bool | None = None,
    tags: Sequence[tuple[str, str]] | None = None,
) -> Session:
    """Pin or unpin, archive or unarchive, and replace the tags (``(tag, key)``
    pairs, distinct keys) with what is given, together. Pinning a pinned session
    (archiving an archived one) keeps when it was first done."""
    now = datetime.now(UTC)
    mine, params = "id = ? AND owner_id = ?", [session_id, owner_id]
    async with sql.transaction() as conn:
        if not await sql.update(conn, SESSION, {"updated_at": now}, mine, params):
            raise NotFound("No such session.", field="id")
        for column, wanted in (("pinned_at", pinned), ("archived_at", archived)):
            if wanted is True:
                await sql.update(
                    conn, SESSION, {column: now}, f"{mine} AND {column} IS NULL", params
                )
            elif wanted is False:
                await sql.update(conn, SESSION, {column: None}, mine, params)
        if tags is not None:
            await sql.execute(conn, "DELETE FROM session_tag WHERE session_id = ?", [session_id])
            await sql.insert_many(
                conn,
                SESSION_TAG,
                [{"session_id": session_id, "tag": t, "tag_key": k} for t, k in tags],
            )
    return await get(owner_id, session_id)


async def tags_of(session_ids: Sequence[int]) -> dict[int, list[str]]:
    """Each session's tags, in the order they were given (one statement)."""
    found: dict[int, list[str]] = {i: [] for i in session_ids}
    if not session_ids:
        return found
    marks = sql.marks(session_ids)
    for record in await sql.fetch(
        sql.connection(),
        f"SELECT session_id, tag FROM session_tag WHERE session_id IN ({marks}) ORDER BY id",
        list(session_ids),
    ):
        found[int(record["session_id"])].append(record["tag"])
    return found


@finished
async def unmount(owner_id: int, session_id: int) -> Session:
    return await _set(
        owner_id, session_id, {"mount_checkpoint_id": None, "mount_base_sequence": None}
    )


@finished
async def name_if_untitled(owner_id: int, session_id: int, title: str) -> bool:
    """Set the title only while the session has none, in one statement: a title the
    user typed in the meantime is never overwritten. True if it was set."""
    updated = await sql.update(
        sql.connection(),
        SESSION,
        {"title": title, "updated_at": datetime.now(UTC)},
        "id = ? AND owner_id = ? AND title = ''",
        [session_id, owner_id],
    )
    return bool(updated)


async def _set(owner_id: int, session_id: int, changes: dict[str, Any]) -> Session:
    """The one place that writes a session's plain columns; only this module's
    functions above name them."""
    if not changes:
        return await get(owner_id, session_id)
    changes["updated_at"] = datetime.now(UTC)
    updated = await sql.update(
        sql.connection(), SESSION, changes, "id = ? AND owner_id = ?", [session_id, owner_id]
    )
    if not updated:
        raise NotFound("No such session.", field="sessionId")
    return await get(owner_id, session_id)


@finished
async def mount(owner_id: int, session_id: int, checkpoint_id: int) -> Session:
    """Mount with the boundary the server computes: the session's current
    lastSequenceNumber, read and written in one statement so a turn written
    concurrently is either before the boundary or after it, never lost."""
    updated = await sql.write(
        sql.connection(),
        "UPDATE session SET mount_checkpoint_id = ?, mount_base_sequence = last_sequence_number, "
        "updated_at = ? WHERE id = ? AND owner_id = ?",
        [checkpoint_id, datetime.now(UTC), session_id, owner_id],
    )
    if not updated:
        raise NotFound("No such session.", field="sessionId")
    return await get(owner_id, session_id)


@finished
async def delete(owner_id: int, session_id: int) -> None:
    deleted = await sql.write(
        sql.connection(),
        "DELETE FROM session WHERE id = ? AND owner_id = ?",
        [session_id, owner_id],
    )
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
        async with sql.transaction() as conn:
            await sql.insert(
                conn,
                BRANCH,
                dict(
                    space_id=checkpoint.space_id,
                    name=branch_name,
                    head_id=checkpoint.id,
                    created_at=now,
                    updated_at=now,
                ),
            )
            values = dict(
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
            row = await sql.insert(conn, SESSION, values)
    except sql.IntegrityError as exc:
        raise InputError(
            f'The branch "{branch_name}" already exists in this space.',
            code=ErrorCode.BRANCH_EXISTS,
            field="branchName",
        ) from exc
    return rows.session(row)


# The origin's turns 1..t, copied into the branch in one statement: the same
# sequence numbers, content, usage, the settings each reply was asked with, links
# between turns (reply_to_sequence and
# continues_sequence name sequence numbers, which the copies keep) and
# creation times, each row recording the turn it copies: the first of its group,
# never a copy (a copy of a copy names what the copy names), so a turn and all
# its copies are one group for the search index, which holds one of them (0016).
_COPIED = ", ".join(c for c in TURN.columns if c not in ("id", "session_id"))
COPY_TURNS = (
    f"INSERT INTO turn (session_id, {_COPIED}, copied_from_id) "
    f"SELECT ?, {_COPIED}, coalesce(copied_from_id, id) "
    "FROM turn WHERE session_id = ? AND sequence_number <= ?"
)


_COPY_TAGS = (
    "INSERT INTO session_tag (session_id, tag, tag_key) "
    "SELECT ?, tag, tag_key FROM session_tag WHERE session_id = ? ORDER BY id"
)


def like(origin: Session) -> dict[str, Any]:
    """The columns a session made as a line of ``origin`` takes from it as they
    are (a conversation branch, an imported session): its title, checkpoint
    branch, model, memory scope, and its instructions and parameters (a
    branch answers as its conversation does)."""
    return dict(
        title=origin.title,
        branch_name=origin.branch_name,
        active_provider=origin.active_provider,
        active_model=origin.active_model,
        memory_scope=origin.memory_scope.value,
        settings=origin.settings.to_json(),
    )


@finished
async def create_branch(origin: Session, *, after_sequence: int, title: str) -> Session:
    """A conversation branch of ``origin`` after its turn ``after_sequence``:
    a new session of the origin's author, in its space, on its checkpoint
    branch, with its model, memory scope and mount (``branch_mount``), holding
    copies of turns 1..after_sequence — written together, in one transaction."""
    if not 0 <= after_sequence <= origin.last_sequence_number:
        raise ValueError("a branch point is a turn of the origin")
    mount = branch_mount(origin.mount, after_sequence)
    now = datetime.now(UTC)
    async with sql.transaction() as conn:
        values = dict(
            like(origin),
            owner_id=origin.owner_id,
            title=title,
            space_id=origin.space_id,
            seeded_from_id=origin.seeded_from_id,
            forked_from_id=origin.forked_from_id,
            mount_checkpoint_id=mount.checkpoint_id if mount else None,
            mount_base_sequence=mount.base_sequence if mount else None,
            visibility=origin.visibility.value,
            # Pinned, archived and tagged as its conversation is: the sidebar lists a
            # family once, as its latest branch.
            pinned_at=origin.pinned_at,
            archived_at=origin.archived_at,
            last_sequence_number=after_sequence,
            branched_from_id=origin.id,
            branched_after_sequence=after_sequence,
            branch_root_id=origin.family_root_id,
            created_at=now,
            updated_at=now,
        )
        branch = rows.session(await sql.insert(conn, SESSION, values))
        await sql.execute(conn, COPY_TURNS, [branch.id, origin.id, after_sequence])
        await sql.execute(conn, _COPY_TAGS, [branch.id, origin.id])
    return branch


async def family(root_id: int) -> list[Member]:
    """Every session of a branch family (the root and those whose root it is):
    one read through the branch_root_id index and the primary key."""
    found = await sql.fetch_rows(
        sql.connection(),
        "SELECT id, branched_from_id, branched_after_sequence, last_sequence_number, "
        "created_at FROM session WHERE id = ? OR branch_root_id = ?",
        [root_id, root_id],
    )
    return [Member(r[0], r[1], r[2], r[3], rows.timestamp(r[4])) for r in found]


async def branch_by_key(
    origin_id: int, after_sequence: int, idempotency_key: str
) -> Session | None:
    """The branch of ``origin_id`` after ``after_sequence`` whose next turn was
    sent with ``idempotency_key`` (an editAndResend sent again), if any."""
    return await _one(
        "branched_from_id = ? AND branched_after_sequence = ? AND id IN "
        "(SELECT session_id FROM turn WHERE sequence_number = ? AND idempotency_key = ?)",
        [origin_id, after_sequence, after_sequence + 1, idempotency_key],
    )
