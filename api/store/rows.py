"""Turn ORM rows into domain objects (the only place that knows both)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..domain.types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    BranchPoint,
    ChatSettings,
    Checkpoint,
    CheckpointContent,
    FinishReason,
    ItemIds,
    LineageEntry,
    MemoryScope,
    Mount,
    Role,
    Session,
    Space,
    Turn,
    TurnRange,
    Usage,
    Visibility,
)
from . import models


def space_record(record: Mapping[str, Any]) -> Space:
    """A space from a raw row (``SPACE_COLUMNS``)."""
    return Space(
        id=record["id"],
        name=record["name"],
        description=record["description"],
        owner_id=record["owner_id"],
        created_at=timestamp(record["created_at"]),
        updated_at=timestamp(record["updated_at"]),
        settings=ChatSettings.from_json(json_value(record["settings"])),
    )


SPACE_COLUMNS = "s.id, s.name, s.description, s.owner_id, s.created_at, s.updated_at, s.settings"


def space(row: models.Space) -> Space:
    return Space(
        id=row.id,
        name=row.name,
        description=row.description,
        owner_id=row.owner_id,  # type: ignore[attr-defined]
        created_at=row.created_at,
        updated_at=row.updated_at,
        settings=ChatSettings.from_json(json_value(row.settings)),
    )


def session(row: models.Session) -> Session:
    mount_id = row.mount_checkpoint_id  # type: ignore[attr-defined]
    mount = (
        Mount(checkpoint_id=mount_id, base_sequence=row.mount_base_sequence or 0)
        if mount_id is not None
        else None
    )
    return Session(
        id=row.id,
        title=row.title,
        space_id=row.space_id,  # type: ignore[attr-defined]
        branch_name=row.branch_name,
        active_provider=row.active_provider,
        active_model=row.active_model,
        seeded_from_id=row.seeded_from_id,  # type: ignore[attr-defined]
        forked_from_id=row.forked_from_id,  # type: ignore[attr-defined]
        memory_scope=MemoryScope(row.memory_scope),
        mount=mount,
        last_sequence_number=row.last_sequence_number,
        owner_id=row.owner_id,  # type: ignore[attr-defined]
        created_at=row.created_at,
        updated_at=row.updated_at,
        visibility=Visibility(row.visibility),
        pinned_at=row.pinned_at,
        archived_at=row.archived_at,
        settings=ChatSettings.from_json(json_value(row.settings)),
        branched_from=_branch_point(row.branched_from_id, row.branched_after_sequence),
        branch_root_id=row.branch_root_id,
    )


SESSION_COLUMNS = (
    "id, title, space_id, branch_name, active_provider, active_model, seeded_from_id, "
    "forked_from_id, memory_scope, mount_checkpoint_id, mount_base_sequence, "
    "last_sequence_number, owner_id, created_at, updated_at, visibility, pinned_at, "
    "archived_at, settings, branched_from_id, branched_after_sequence, branch_root_id"
)


def session_record(record: Mapping[str, Any]) -> Session:
    """A session from a raw row (``SESSION_COLUMNS``): every request that names a
    session reads it, and the ORM's query building cost more than the statement."""
    mount_id = record["mount_checkpoint_id"]
    mount = (
        Mount(checkpoint_id=mount_id, base_sequence=record["mount_base_sequence"] or 0)
        if mount_id is not None
        else None
    )
    return Session(
        id=record["id"],
        title=record["title"],
        space_id=record["space_id"],
        branch_name=record["branch_name"],
        active_provider=record["active_provider"],
        active_model=record["active_model"],
        seeded_from_id=record["seeded_from_id"],
        forked_from_id=record["forked_from_id"],
        memory_scope=MemoryScope(record["memory_scope"]),
        mount=mount,
        last_sequence_number=record["last_sequence_number"],
        owner_id=record["owner_id"],
        created_at=timestamp(record["created_at"]),
        updated_at=timestamp(record["updated_at"]),
        visibility=Visibility(record["visibility"]),
        pinned_at=_maybe_timestamp(record["pinned_at"]),
        archived_at=_maybe_timestamp(record["archived_at"]),
        settings=ChatSettings.from_json(json_value(record["settings"])),
        branched_from=_branch_point(record["branched_from_id"], record["branched_after_sequence"]),
        branch_root_id=record["branch_root_id"],
    )


def _branch_point(session_id: int | None, after: int | None) -> BranchPoint | None:
    return BranchPoint(session_id, after) if session_id is not None and after is not None else None


def turn(row: models.Turn) -> Turn:
    return Turn(
        id=row.id,
        session_id=row.session_id,  # type: ignore[attr-defined]
        role=Role(row.role),
        content=row.content,
        sequence_number=row.sequence_number,
        provider=row.provider,
        model=row.model,
        token_count=row.token_count,
        created_at=row.created_at,
        usage=Usage(
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
            cost=row.cost,
        ),
        interrupted=row.interrupted,
        reply_to_sequence=row.reply_to_sequence,
        idempotency_key=row.idempotency_key,
        author_id=row.author_id,
        author_token=row.author_token,
        finish_reason=FinishReason(row.finish_reason) if row.finish_reason else None,
        provider_finish_reason=row.provider_finish_reason,
        continues_sequence=row.continues_sequence,
        settings=_turn_settings(json_value(row.settings)),
    )


def turn_record(record: Mapping[str, Any]) -> Turn:
    """A turn from a raw row (the hot path reads the window without the ORM:
    building 200 model instances cost five times the query itself)."""
    return Turn(
        id=record["id"],
        session_id=record["session_id"],
        role=Role(record["role"]),
        content=record["content"],
        sequence_number=record["sequence_number"],
        provider=record["provider"],
        model=record["model"],
        token_count=record["token_count"],
        created_at=timestamp(record["created_at"]),
        usage=Usage(
            prompt_tokens=record["prompt_tokens"],
            completion_tokens=record["completion_tokens"],
            cost=record["cost"],
        ),
        interrupted=bool(record["interrupted"]),
        reply_to_sequence=record["reply_to_sequence"],
        idempotency_key=record["idempotency_key"],
        author_id=record["author_id"],
        author_token=record["author_token"],
        finish_reason=FinishReason(reason) if (reason := record["finish_reason"]) else None,
        provider_finish_reason=record["provider_finish_reason"],
        continues_sequence=record["continues_sequence"],
        settings=_turn_settings(json_value(record["settings"])),
    )


def json_value(value: Any) -> Any:
    """A JSON column as a raw query returns it: text on SQLite and asyncpg's jsonb."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def json_text(value: Any) -> str | None:
    """A value for a JSON column in a raw statement (text both drivers accept)."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _turn_settings(stored: Mapping[str, Any] | None) -> ChatSettings | None:
    return ChatSettings.from_json(stored) if stored else None


def timestamp(value: datetime | str) -> datetime:
    """A timestamp column as a raw query returns it: SQLite stores ISO 8601 text."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _maybe_timestamp(value: datetime | str | None) -> datetime | None:
    return None if value is None else timestamp(value)


def lineage_entry(record: Sequence[Any]) -> LineageEntry:
    """A row of ``LINEAGE_COLUMNS``, by position (a raw row, no dict built)."""
    return LineageEntry(
        id=record[0],
        hash=record[1],
        title=record[2],
        branch_name=record[3],
        parent_id=record[4],
        merge_parent_id=record[5],
        created_at=timestamp(record[6]),
    )


LINEAGE_COLUMNS = "id, hash, title, branch_name, parent_id, merge_parent_id, created_at"


# Every column of a checkpoint, in the order ``checkpoint_record`` reads them.
CHECKPOINT_COLUMNS = (
    "id, hash, space_id, parent_id, branch_name, title, objective, summary, decisions, "
    "tasks, open_questions, entities, item_ids, author_agent, source_session_id, "
    "source_first, source_last, base_sequence, created_at, merge_parent_id, author_id, "
    "author_token"
)


def _json(value: Any) -> Any:
    """A JSON column as a raw query returns it: text (SQLite, asyncpg's jsonb) or decoded."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _json_columns(values: Sequence[Any]) -> list[Any]:
    """Several JSON columns of a row, those that are text (each one JSON value,
    as stored) decoded in one ``json.loads``: the same values as one call
    each, whose fixed cost was most of a short list's."""
    texts = [value for value in values if type(value) is str]
    if len(texts) > 1:
        decoded = json.loads("[" + ",".join(texts) + "]")
        if len(decoded) == len(texts):  # else one was not one JSON value: below
            found = iter(decoded)
            return [next(found) if type(value) is str else _json(value) for value in values]
    return [_json(value) for value in values]


def checkpoint_record(record: Sequence[Any]) -> Checkpoint:
    """A checkpoint from a raw row of ``CHECKPOINT_COLUMNS``, by position: the
    same as ``checkpoint`` of the ORM row, without building the model instance
    (which cost more than the query in a page of checkpoints)."""
    first, last = record[15], record[16]
    decisions, tasks, open_questions, entities, item_ids = _json_columns(record[8:13])
    return Checkpoint(
        id=record[0],
        hash=record[1],
        space_id=record[2],
        parent_id=record[3],
        branch_name=record[4],
        content=CheckpointContent(
            title=record[5] or "",
            objective=record[6] or "",
            summary=record[7] or "",
            decisions=tuple(decisions or ()),
            tasks=tuple(tasks or ()),
            open_questions=tuple(open_questions or ()),
            entities=tuple(entities or ()),
            item_ids=_item_ids(item_ids),
        ),
        author_agent=record[13],
        source_session_id=record[14],
        source_turn_range=(
            TurnRange(first=first, last=last) if first is not None and last is not None else None
        ),
        base_sequence=record[17],
        created_at=timestamp(record[18]),
        merge_parent_id=record[19],
        author_id=record[20],
        author_token=record[21],
    )


def checkpoint(row: models.Checkpoint) -> Checkpoint:
    source_range = (
        TurnRange(first=row.source_first, last=row.source_last)
        if row.source_first is not None and row.source_last is not None
        else None
    )
    return Checkpoint(
        id=row.id,
        hash=row.hash,
        space_id=row.space_id,  # type: ignore[attr-defined]
        parent_id=row.parent_id,  # type: ignore[attr-defined]
        branch_name=row.branch_name,
        content=replace(
            CheckpointContent.from_columns({f.attr: getattr(row, f.attr) for f in CONTENT_FIELDS}),
            item_ids=_item_ids(row.item_ids),
        ),
        author_agent=row.author_agent,
        source_session_id=row.source_session_id,
        source_turn_range=source_range,
        base_sequence=row.base_sequence,
        created_at=row.created_at,
        merge_parent_id=row.merge_parent_id,  # type: ignore[attr-defined]
        author_id=row.author_id,
        author_token=row.author_token,
    )


def _item_ids(stored: Mapping[str, Any] | None) -> ItemIds | None:
    if stored is None:
        return None
    return ItemIds(**{f.attr: tuple(stored.get(f.attr) or ()) for f in CONTENT_LIST_FIELDS})
