"""Whole spaces at once: the reads behind verify and export, the import write."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from tortoise import Tortoise

from ..domain.export_format import Branch, Export, SessionExport, SpaceExport
from ..domain.import_tree import BranchImport
from ..domain.tags import tag_key
from ..domain.types import BranchPoint, Checkpoint, Session, Space, SpaceRole, Turn
from ..errors import NotFound
from . import database, rows, sql
from .config import tortoise_config
from .readable import readable_sessions
from .sessions import COPY_TURNS, like, tags_of
from .tables import BRANCH, CHECKPOINT, SESSION, SESSION_TAG, SPACE, SPACE_MEMBER, TURN
from .writes import finished


async def _read(conn: Any, statement: str, params: list[Any]) -> Sequence[rows.Row]:
    return await sql.fetch_rows(conn, statement, params)


async def hash_space_id(space_id: int) -> int:
    """The space id the space's checkpoint hashes are sealed with."""
    found = await sql.fetch_value(
        sql.connection(), "SELECT COALESCE(origin_space_id, id) FROM space WHERE id = ?", [space_id]
    )
    return space_id if found is None else int(found)


async def _checkpoints(where: str, params: list[Any]) -> list[Checkpoint]:
    """Checkpoints, oldest first (ids grow with time)."""
    found = await _read(
        sql.connection(),
        f"SELECT {CHECKPOINT.select()} FROM checkpoint WHERE {where} ORDER BY id",
        params,
    )
    return [rows.checkpoint(row) for row in found]


async def space_checkpoints(space_id: int) -> list[Checkpoint]:
    """Every checkpoint of the space, oldest first."""
    return await _checkpoints("space_id = ?", [space_id])


async def space_ids(user_id: int) -> list[int]:
    """The spaces the user is a member of."""
    found = await _read(
        sql.connection(),
        "SELECT space_id FROM space_member WHERE user_id = ? ORDER BY space_id",
        [user_id],
    )
    return [int(row[0]) for row in found]


async def _sessions(conn: Any, where: str, params: list[Any]) -> list[Session]:
    found = await _read(conn, f"SELECT {SESSION.select()} FROM session WHERE {where}", params)
    return [rows.session(row) for row in found]


@contextlib.asynccontextmanager
async def opened(db_url: str) -> AsyncIterator[None]:
    """The database, migrated and connected, for a command-line tool."""
    await database.prepare(db_url)
    await Tortoise.init(config=tortoise_config(db_url))
    try:
        yield
    finally:
        await Tortoise.close_connections()


# --- export reads ------------------------------------------------------------


async def space_export(space_id: int, reader_id: int) -> SpaceExport:
    """Everything stored about one space that ``reader_id`` may read (their
    membership already checked): its lineage, their own sessions in it and the
    ones shared with it."""
    conn = sql.connection()
    found = await _read(conn, f"SELECT {SPACE.select()} FROM space WHERE id = ?", [space_id])
    if not found:
        raise NotFound("No such space.", field="spaceId")
    branches = await _read(
        conn,
        "SELECT name, head_id, created_at, updated_at FROM branch WHERE space_id = ? ORDER BY name",
        [space_id],
    )
    readable = readable_sessions()
    session_rows = await _sessions(
        conn,
        f"space_id = ? AND {readable.sql} ORDER BY id",
        [space_id, *readable.params(reader_id)],
    )
    return SpaceExport(
        space=rows.space(found[0]),
        hash_space_id=await hash_space_id(space_id),
        branches=tuple(
            Branch(
                name=name,
                head_id=head_id,
                created_at=rows.timestamp(created_at),
                updated_at=rows.timestamp(updated_at),
            )
            for name, head_id, created_at, updated_at in branches
        ),
        checkpoints=tuple(await space_checkpoints(space_id)),
        sessions=tuple(await _with_turns(session_rows)),
    )


async def session_exports(owner_id: int, session_ids: list[int] | None) -> list[SessionExport]:
    """The owner's sessions in no space (``None``: all of them), oldest first."""
    where, params = "owner_id = ? AND space_id IS NULL", [owner_id]
    if session_ids is not None:
        if not session_ids:
            return []
        where += f" AND id IN ({sql.marks(session_ids)})"
        params += session_ids
    return await _with_turns(await _sessions(sql.connection(), f"{where} ORDER BY id", params))


async def _with_turns(sessions: list[Session]) -> list[SessionExport]:
    """The sessions with their turns and tags; a branch whose origin is not
    among them (deleted, not the reader's to read, or not exported) is written
    as a session of its own."""
    by_session: dict[int, list[Turn]] = {session.id: [] for session in sessions}
    if by_session:
        found = await _read(
            sql.connection(),
            f"SELECT {TURN.select()} FROM turn WHERE session_id IN "
            f"({sql.marks(by_session)}) ORDER BY session_id, sequence_number",
            list(by_session),
        )
        for record in found:
            turn = rows.turn(record)
            by_session[turn.session_id].append(turn)
    tags = await tags_of(list(by_session))
    exported = []
    for session in sessions:
        row_id = session.id
        point = session.branched_from
        if point is not None and point.session_id not in by_session:
            session = replace(session, branched_from=None, branch_root_id=None)
        exported.append(SessionExport(session, tuple(by_session[row_id]), tuple(tags[row_id])))
    return exported


# --- import ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Imported:
    spaces: list[tuple[Space, bool]]  # each space, and whether this import created it
    sessions: list[tuple[Session, bool]]  # sessions in no space, likewise


@finished
async def import_export(
    owner_id: int,
    export: Export,
    branches: tuple[tuple[BranchImport, ...], ...] | None = None,
) -> Imported:
    """Recreate an export for ``owner_id`` in one transaction: all of it or nothing.

    A space already here (the same origin space id and creation time: an
    earlier import of it, or the exported space itself) is not imported
    again; nor is a space-less session with the same creation time and title.
    ``branches``: for each space-less session (in
    order), the conversation branches to create with it (another app's
    other lines), only when the session is created.
    """
    async with sql.transaction() as conn:
        await _one_import_at_a_time(conn, owner_id)
        spaces = [await _import_space(conn, owner_id, item) for item in export.spaces]
        sessions = []
        made: dict[int, Session] = {}  # the document's session ids
        for index, item in enumerate(export.sessions):
            # The first such (an imported conversation's branches may share
            # its title and, messages without times, its creation time).
            existing = await _sessions(
                conn,
                "owner_id = ? AND space_id IS NULL AND created_at = ? AND title = ? "
                "ORDER BY id LIMIT 1",
                [owner_id, item.session.created_at, item.session.title],
            )
            if existing:
                made[item.session.id] = existing[0]
                sessions.append((existing[0], False))
                continue
            created = await _create_session(conn, owner_id, None, item, made)
            made[item.session.id] = created
            if branches is not None:
                await _create_branches(conn, created, item, branches[index])
            sessions.append((created, True))
    return Imported(spaces=spaces, sessions=sessions)


async def _create_branches(
    conn: Any, root: Session, item: SessionExport, found: tuple[BranchImport, ...]
) -> None:
    """Each branch as ``create_branch`` makes one (copies of its origin's
    turns 1..after, recording the turns they copy), then its own turns."""
    made = {0: root}  # by the positions ``BranchImport.origin`` names
    for branch in found:
        line = replace(
            root,
            last_sequence_number=branch.after + len(branch.turns),
            pinned_at=None,
            archived_at=None,
            branched_from=BranchPoint(branch.origin, branch.after),
            created_at=branch.created_at,
            updated_at=branch.updated_at,
        )
        made[len(made)] = await _create_session(
            conn, root.owner_id, None, SessionExport(line, branch.turns), made
        )


# pg_advisory_xact_lock's first key: "SMRI", for Smriti's imports.
_IMPORT_LOCK = 0x534D5249


async def _one_import_at_a_time(conn: Any, owner_id: int) -> None:
    """Make concurrent imports for one owner take turns until they commit.

    "Already here?" is a read followed by inserts; two imports of one document
    running at once would both read "no" and both insert. On PostgreSQL a
    transaction-scoped advisory lock orders them: the second reads after the
    first has committed and finds its space. On SQLite nothing is needed: the
    app's one connection runs one transaction at a time, and another process's
    writer is held off by the database lock (the loser of that race fails whole,
    writing nothing).
    """
    if sql.dialect(conn) == "postgres":
        await conn.execute_query("SELECT pg_advisory_xact_lock($1, $2)", [_IMPORT_LOCK, owner_id])


async def _import_space(conn: Any, owner_id: int, item: SpaceExport) -> tuple[Space, bool]:
    origin = item.hash_space_id
    candidates = await _read(
        conn,
        f"SELECT {SPACE.select()}, COALESCE(origin_space_id, id) FROM space "
        "WHERE owner_id = ? AND created_at = ?",
        [owner_id, item.space.created_at],
    )
    for row in candidates:
        if row[len(SPACE.columns)] == origin:
            return rows.space(row), False
    values = dict(
        owner_id=owner_id,
        name=item.space.name,
        description=item.space.description,
        settings=item.space.settings.to_json(),
        origin_space_id=origin,
        created_at=item.space.created_at,
        updated_at=item.space.updated_at,
    )
    space = rows.space(await sql.insert(conn, SPACE, values))
    await sql.insert(
        conn,
        SPACE_MEMBER,
        dict(
            space_id=space.id,
            user_id=owner_id,
            role=SpaceRole.OWNER.value,
            created_at=datetime.now(UTC),
        ),
    )
    session_ids: dict[int, int] = {}
    made: dict[int, Session] = {}
    session_rows: list[tuple[Session, SessionExport]] = []
    for session in item.sessions:
        session_row = await _create_session(conn, owner_id, space.id, session, made)
        made[session.session.id] = session_row
        session_ids[session.session.id] = session_row.id
        session_rows.append((session_row, session))
    checkpoint_ids: dict[int, int] = {}
    for checkpoint in item.checkpoints:
        content = checkpoint.content
        source = checkpoint.source_turn_range
        values = dict(
            hash=checkpoint.hash,
            space_id=space.id,
            parent_id=checkpoint_ids[checkpoint.parent_id] if checkpoint.parent_id else None,
            merge_parent_id=(
                checkpoint_ids[checkpoint.merge_parent_id] if checkpoint.merge_parent_id else None
            ),
            branch_name=checkpoint.branch_name,
            **content.columns(),
            item_ids=content.item_ids.columns() if content.item_ids is not None else None,
            author_agent=checkpoint.author_agent,
            # A source session the export does not hold (deleted before it)
            # would name an unrelated session here: it is dropped.
            source_session_id=session_ids.get(checkpoint.source_session_id or 0),
            source_first=source.first if source else None,
            source_last=source.last if source else None,
            base_sequence=checkpoint.base_sequence,
            created_at=checkpoint.created_at,
        )
        created = rows.checkpoint(await sql.insert(conn, CHECKPOINT, values))
        checkpoint_ids[checkpoint.id] = created.id
    for session_row, session in session_rows:
        original = session.session
        mount = original.mount
        changes = dict(
            seeded_from_id=checkpoint_ids.get(original.seeded_from_id or 0),
            forked_from_id=checkpoint_ids.get(original.forked_from_id or 0),
            mount_checkpoint_id=checkpoint_ids[mount.checkpoint_id] if mount else None,
            mount_base_sequence=mount.base_sequence if mount else None,
        )
        await sql.update(conn, SESSION, changes, "id = ?", [session_row.id])
    await sql.insert_many(
        conn,
        BRANCH,
        [
            dict(
                space_id=space.id,
                name=branch.name,
                head_id=checkpoint_ids[branch.head_id],
                created_at=branch.created_at,
                updated_at=branch.updated_at,
            )
            for branch in item.branches
        ],
    )
    return space, True


async def _create_session(
    conn: Any,
    owner_id: int,
    space_id: int | None,
    item: SessionExport,
    made: dict[int, Session],
) -> Session:
    """The session, pinned, archived and tagged as exported; a branch (its
    origin in ``made``, by the document's ids) holds copies of its origin's
    turns up to its branch point, as ``create_branch`` makes them, then its own."""
    session = item.session
    point = session.branched_from
    origin = made[point.session_id] if point is not None else None
    values = dict(
        like(session),
        owner_id=owner_id,
        space_id=space_id,
        last_sequence_number=session.last_sequence_number,
        pinned_at=session.pinned_at,
        archived_at=session.archived_at,
        branched_from_id=origin.id if origin is not None else None,
        branched_after_sequence=point.after_sequence if point is not None else None,
        branch_root_id=origin.family_root_id if origin is not None else None,
        created_at=session.created_at,
        updated_at=session.updated_at,
    )
    row = rows.session(await sql.insert(conn, SESSION, values))
    after = 0
    if origin is not None and point is not None:
        after = point.after_sequence
        await sql.execute(conn, COPY_TURNS, [row.id, origin.id, after])
    own = [_turn_row(row.id, t) for t in item.turns if t.sequence_number > after]
    await sql.insert_many(conn, TURN, own)
    await sql.insert_many(
        conn,
        SESSION_TAG,
        [dict(session_id=row.id, tag=t, tag_key=tag_key(t)) for t in item.tags],
    )
    return row


def _turn_row(session_id: int, t: Turn) -> dict[str, Any]:
    """A turn's columns as an import writes them (its author is not kept)."""
    return dict(
        session_id=session_id,
        sequence_number=t.sequence_number,
        role=t.role.value,
        content=t.content,
        provider=t.provider,
        model=t.model,
        token_count=t.token_count,
        prompt_tokens=t.usage.prompt_tokens,
        completion_tokens=t.usage.completion_tokens,
        cost=t.usage.cost,
        interrupted=t.interrupted,
        reply_to_sequence=t.reply_to_sequence,
        idempotency_key=t.idempotency_key,
        created_at=t.created_at,
        finish_reason=t.finish_reason.value if t.finish_reason else None,
        provider_finish_reason=t.provider_finish_reason,
        continues_sequence=t.continues_sequence,
        settings=t.settings.to_json() if t.settings else None,
    )


async def session_export(session_id: int) -> SessionExport:
    """One session and its turns (its owner already checked)."""
    found = await _sessions(sql.connection(), "id = ?", [session_id])
    if not found:
        raise NotFound("No such session.", field="sessionId")
    [exported] = await _with_turns(found)
    return exported


async def checkpoints_from_session(session_id: int) -> list[Checkpoint]:
    """The checkpoints saved from a session, oldest first."""
    return await _checkpoints("source_session_id = ?", [session_id])
