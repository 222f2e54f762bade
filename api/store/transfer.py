"""Whole spaces at once: the reads behind verify and export, the import write."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from tortoise import Tortoise
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from ..domain.export_format import Branch, Export, SessionExport, SpaceExport
from ..domain.import_tree import BranchImport
from ..domain.tags import tag_key
from ..domain.types import Checkpoint, Session, Space, SpaceRole, Turn, Visibility
from . import database, models, rows, sql
from .config import tortoise_config
from .sessions import COPY_TURNS, tags_of
from .writes import finished


async def hash_space_id(space_id: int) -> int:
    """The space id the space's checkpoint hashes are sealed with."""
    row = await models.Space.get_or_none(id=space_id)
    return row.origin_space_id if row is not None and row.origin_space_id else space_id


async def space_checkpoints(space_id: int) -> list[Checkpoint]:
    """Every checkpoint of the space, oldest first (ids grow with time)."""
    found = await models.Checkpoint.filter(space_id=space_id).order_by("id")
    return [rows.checkpoint(row) for row in found]


async def space_ids(user_id: int) -> list[int]:
    """The spaces the user is a member of."""
    found = await models.SpaceMember.filter(user_id=user_id).order_by("space_id")
    return [row.space_id for row in found]  # type: ignore[attr-defined]


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
    space = rows.space(await models.Space.get(id=space_id))
    branches = await models.Branch.filter(space_id=space_id).order_by("name")
    session_rows = (
        await models.Session.filter(space_id=space_id)
        .filter(Q(owner_id=reader_id) | Q(visibility=Visibility.SPACE.value))
        .order_by("id")
    )
    return SpaceExport(
        space=space,
        hash_space_id=await hash_space_id(space_id),
        branches=tuple(
            Branch(
                name=b.name,
                head_id=b.head_id,  # type: ignore[attr-defined]
                created_at=b.created_at,
                updated_at=b.updated_at,
            )
            for b in branches
        ),
        checkpoints=tuple(await space_checkpoints(space_id)),
        sessions=tuple(await _with_turns(session_rows)),
    )


async def session_exports(owner_id: int, session_ids: list[int] | None) -> list[SessionExport]:
    """The owner's sessions in no space (``None``: all of them), oldest first."""
    query = models.Session.filter(owner_id=owner_id, space_id=None)
    if session_ids is not None:
        query = query.filter(id__in=session_ids)
    return await _with_turns(await query.order_by("id"))


async def _with_turns(session_rows: list[models.Session]) -> list[SessionExport]:
    """The sessions with their turns and tags; a branch whose origin is not
    among them (deleted, not the reader's to read, or not exported) is written
    as a session of its own."""
    by_session: dict[int, list[Turn]] = {row.id: [] for row in session_rows}
    found = await models.Turn.filter(session_id__in=list(by_session)).order_by(
        "session_id", "sequence_number"
    )
    for turn in found:
        by_session[turn.session_id].append(rows.turn(turn))  # type: ignore[attr-defined]
    tags = await tags_of(list(by_session))
    exported = []
    for row in session_rows:
        session = rows.session(row)
        point = session.branched_from
        if point is not None and point.session_id not in by_session:
            session = replace(session, branched_from=None, branch_root_id=None)
        exported.append(SessionExport(session, tuple(by_session[row.id]), tuple(tags[row.id])))
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
    async with in_transaction("default") as conn:
        await _one_import_at_a_time(conn, owner_id)
        spaces = [await _import_space(conn, owner_id, item) for item in export.spaces]
        sessions = []
        made: dict[int, models.Session] = {}  # the document's session ids
        for index, item in enumerate(export.sessions):
            # The first such (an imported conversation's branches may share
            # its title and, messages without times, its creation time).
            existing = (
                await models.Session.filter(
                    owner_id=owner_id,
                    space_id=None,
                    created_at=item.session.created_at,
                    title=item.session.title,
                )
                .using_db(conn)
                .order_by("id")
                .first()
            )
            if existing is not None:
                made[item.session.id] = existing
                sessions.append((rows.session(existing), False))
                continue
            created = await _create_session(conn, owner_id, None, item, made)
            made[item.session.id] = created
            if branches is not None:
                await _create_branches(conn, created, item, branches[index])
            sessions.append((rows.session(created), True))
    return Imported(spaces=spaces, sessions=sessions)


async def _create_branches(
    conn: Any, root: models.Session, item: SessionExport, found: tuple[BranchImport, ...]
) -> None:
    """Each branch as ``create_branch`` makes one (copies of its origin's
    turns 1..after, recording the turns they copy), then its own turns."""
    made = [root]
    for branch in found:
        origin = made[branch.origin]
        row = await models.Session.create(
            using_db=conn,
            owner_id=root.owner_id,  # type: ignore[attr-defined]
            space_id=None,
            title=root.title,
            branch_name=root.branch_name,
            active_provider=root.active_provider,
            active_model=root.active_model,
            memory_scope=root.memory_scope,
            settings=root.settings,
            last_sequence_number=branch.after + len(branch.turns),
            branched_from_id=origin.id,
            branched_after_sequence=branch.after,
            branch_root_id=root.id,
            created_at=branch.created_at,
            updated_at=branch.updated_at,
        )
        await sql.execute(conn, COPY_TURNS, [row.id, origin.id, branch.after])
        await models.Turn.bulk_create([_turn_row(row.id, t) for t in branch.turns], using_db=conn)
        made.append(row)


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
    candidates = await models.Space.filter(
        owner_id=owner_id, created_at=item.space.created_at
    ).using_db(conn)
    for row in candidates:
        if (row.origin_space_id or row.id) == origin:
            return rows.space(row), False
    space = await models.Space.create(
        using_db=conn,
        owner_id=owner_id,
        name=item.space.name,
        description=item.space.description,
        settings=item.space.settings.to_json(),
        origin_space_id=origin,
        created_at=item.space.created_at,
        updated_at=item.space.updated_at,
    )
    await models.SpaceMember.create(
        using_db=conn,
        space_id=space.id,
        user_id=owner_id,
        role=SpaceRole.OWNER.value,
        created_at=datetime.now(UTC),
    )
    session_ids: dict[int, int] = {}
    made: dict[int, models.Session] = {}
    session_rows: list[tuple[models.Session, SessionExport]] = []
    for session in item.sessions:
        session_row = await _create_session(conn, owner_id, space.id, session, made)
        made[session.session.id] = session_row
        session_ids[session.session.id] = session_row.id
        session_rows.append((session_row, session))
    checkpoint_ids: dict[int, int] = {}
    for checkpoint in item.checkpoints:
        content = checkpoint.content
        source = checkpoint.source_turn_range
        created = await models.Checkpoint.create(
            using_db=conn,
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
        checkpoint_ids[checkpoint.id] = created.id
    for session_row, session in session_rows:
        original = session.session
        mount = original.mount
        await (
            models.Session.filter(id=session_row.id)
            .using_db(conn)
            .update(
                seeded_from_id=checkpoint_ids.get(original.seeded_from_id or 0),
                forked_from_id=checkpoint_ids.get(original.forked_from_id or 0),
                mount_checkpoint_id=checkpoint_ids[mount.checkpoint_id] if mount else None,
                mount_base_sequence=mount.base_sequence if mount else None,
            )
        )
    for branch in item.branches:
        await models.Branch.create(
            using_db=conn,
            space_id=space.id,
            name=branch.name,
            head_id=checkpoint_ids[branch.head_id],
            created_at=branch.created_at,
            updated_at=branch.updated_at,
        )
    return rows.space(space), True


async def _create_session(
    conn: Any,
    owner_id: int,
    space_id: int | None,
    item: SessionExport,
    made: dict[int, models.Session],
) -> models.Session:
    """The session, pinned, archived and tagged as exported; a branch (its
    origin in ``made``, by the document's ids) holds copies of its origin's
    turns up to its branch point, as ``create_branch`` makes them, then its own."""
    session = item.session
    point = session.branched_from
    origin = made[point.session_id] if point is not None else None
    row = await models.Session.create(
        using_db=conn,
        owner_id=owner_id,
        space_id=space_id,
        title=session.title,
        branch_name=session.branch_name,
        active_provider=session.active_provider,
        active_model=session.active_model,
        memory_scope=session.memory_scope.value,
        settings=session.settings.to_json(),
        last_sequence_number=session.last_sequence_number,
        pinned_at=session.pinned_at,
        archived_at=session.archived_at,
        branched_from_id=origin.id if origin is not None else None,
        branched_after_sequence=point.after_sequence if point is not None else None,
        branch_root_id=(origin.branch_root_id or origin.id) if origin is not None else None,
        created_at=session.created_at,
        updated_at=session.updated_at,
    )
    after = 0
    if origin is not None and point is not None:
        after = point.after_sequence
        await sql.execute(conn, COPY_TURNS, [row.id, origin.id, after])
    own = [_turn_row(row.id, t) for t in item.turns if t.sequence_number > after]
    await models.Turn.bulk_create(own, using_db=conn)
    if item.tags:
        await models.SessionTag.bulk_create(
            [models.SessionTag(session_id=row.id, tag=t, tag_key=tag_key(t)) for t in item.tags],
            using_db=conn,
        )
    return row


def _turn_row(session_id: int, t: Turn) -> models.Turn:
    return models.Turn(
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
    [found] = await _with_turns([await models.Session.get(id=session_id)])
    return found


async def checkpoints_from_session(session_id: int) -> list[Checkpoint]:
    """The checkpoints saved from a session, oldest first."""
    found = await models.Checkpoint.filter(source_session_id=session_id).order_by("id")
    return [rows.checkpoint(row) for row in found]
