"""Turn rows into domain objects: one mapper per entity, each reading a row of
its table spec (``tables``) by position, whichever statement read it (the
driver's row, a tuple; a row may carry more columns after the entity's)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..domain.accounts import Account, ApiToken
from ..domain.types import (
    CONTENT_LIST_FIELDS,
    CONTENT_TEXT_FIELDS,
    BranchPoint,
    ChatSettings,
    Checkpoint,
    CheckpointContent,
    FinishReason,
    ItemIds,
    LineageEntry,
    MemoryScope,
    Mount,
    Preset,
    Role,
    Session,
    Space,
    Turn,
    TurnRange,
    Usage,
    Visibility,
)
from .tables import API_TOKEN, CHECKPOINT, PRESET, SESSION, SPACE, TURN, USER

Row = Sequence[Any]

_SPACE = SPACE.position


def space(record: Row) -> Space:
    """A space from a row of ``tables.SPACE``."""
    p = _SPACE
    return Space(
        id=record[p["id"]],
        name=record[p["name"]],
        description=record[p["description"]],
        owner_id=record[p["owner_id"]],
        created_at=timestamp(record[p["created_at"]]),
        updated_at=timestamp(record[p["updated_at"]]),
        settings=ChatSettings.from_json(json_value(record[p["settings"]])),
    )


_SESSION = SESSION.position


def session(record: Row) -> Session:
    """A session from a row of ``tables.SESSION``: every request that names a
    session reads one."""
    p = _SESSION
    mount_id = record[p["mount_checkpoint_id"]]
    mount = (
        Mount(checkpoint_id=mount_id, base_sequence=record[p["mount_base_sequence"]] or 0)
        if mount_id is not None
        else None
    )
    return Session(
        id=record[p["id"]],
        title=record[p["title"]],
        space_id=record[p["space_id"]],
        branch_name=record[p["branch_name"]],
        active_provider=record[p["active_provider"]],
        active_model=record[p["active_model"]],
        seeded_from_id=record[p["seeded_from_id"]],
        forked_from_id=record[p["forked_from_id"]],
        memory_scope=MemoryScope(record[p["memory_scope"]]),
        mount=mount,
        last_sequence_number=record[p["last_sequence_number"]],
        owner_id=record[p["owner_id"]],
        created_at=timestamp(record[p["created_at"]]),
        updated_at=timestamp(record[p["updated_at"]]),
        visibility=Visibility(record[p["visibility"]]),
        pinned_at=maybe_timestamp(record[p["pinned_at"]]),
        archived_at=maybe_timestamp(record[p["archived_at"]]),
        settings=ChatSettings.from_json(json_value(record[p["settings"]])),
        branched_from=_branch_point(
            record[p["branched_from_id"]], record[p["branched_after_sequence"]]
        ),
        branch_root_id=record[p["branch_root_id"]],
    )


def _branch_point(session_id: int | None, after: int | None) -> BranchPoint | None:
    return BranchPoint(session_id, after) if session_id is not None and after is not None else None


_TURN = TURN.position


def turn(record: Row) -> Turn:
    """A turn from a row of ``tables.TURN`` (the hot path reads a window of
    them without the ORM: building 200 model instances cost five times the
    query itself)."""
    p = _TURN
    reason = record[p["finish_reason"]]
    return Turn(
        id=record[p["id"]],
        session_id=record[p["session_id"]],
        role=Role(record[p["role"]]),
        content=record[p["content"]],
        sequence_number=record[p["sequence_number"]],
        provider=record[p["provider"]],
        model=record[p["model"]],
        token_count=record[p["token_count"]],
        created_at=timestamp(record[p["created_at"]]),
        usage=Usage(
            prompt_tokens=record[p["prompt_tokens"]],
            completion_tokens=record[p["completion_tokens"]],
            cost=record[p["cost"]],
        ),
        interrupted=bool(record[p["interrupted"]]),
        reply_to_sequence=record[p["reply_to_sequence"]],
        idempotency_key=record[p["idempotency_key"]],
        author_id=record[p["author_id"]],
        author_token=record[p["author_token"]],
        finish_reason=FinishReason(reason) if reason else None,
        provider_finish_reason=record[p["provider_finish_reason"]],
        continues_sequence=record[p["continues_sequence"]],
        settings=_turn_settings(json_value(record[p["settings"]])),
    )


def json_value(value: Any) -> Any:
    """A JSON column as a raw query returns it: text on SQLite and asyncpg's jsonb."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _turn_settings(stored: Mapping[str, Any] | None) -> ChatSettings | None:
    return ChatSettings.from_json(stored) if stored else None


def timestamp(value: datetime | str) -> datetime:
    """A timestamp column as a raw query returns it: SQLite stores ISO 8601 text."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def maybe_timestamp(value: datetime | str | None) -> datetime | None:
    return None if value is None else timestamp(value)


# What a graph draws of a checkpoint: these columns of ``tables.CHECKPOINT``.
LINEAGE_COLUMNS = "id, hash, title, branch_name, parent_id, merge_parent_id, created_at"
assert set(LINEAGE_COLUMNS.split(", ")) <= set(CHECKPOINT.columns)


def lineage_entry(record: Row) -> LineageEntry:
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


_CHECKPOINT = CHECKPOINT.position
_TEXTS = [(f.attr, _CHECKPOINT[f.attr]) for f in CONTENT_TEXT_FIELDS]
# The list columns and item_ids, decoded together (``_json_columns``).
_LIST_NAMES = [f.attr for f in CONTENT_LIST_FIELDS]
# Their positions, found at the first read rather than on import: a list field
# added to the registry before its column (a test of the registry, or a
# migration not yet written) fails where a checkpoint is read, not every import.
_LISTS: list[int] = []


def checkpoint(record: Row) -> Checkpoint:
    """A checkpoint from a row of ``tables.CHECKPOINT`` (a page of them is read
    without model instances, which cost more than the query)."""
    p = _CHECKPOINT
    if not _LISTS:
        _LISTS.extend([*(p[name] for name in _LIST_NAMES), p["item_ids"]])
    first, last = record[p["source_first"]], record[p["source_last"]]
    *lists, item_ids = _json_columns([record[i] for i in _LISTS])
    fields: dict[str, Any] = {name: record[i] or "" for name, i in _TEXTS}
    fields.update((name, tuple(v or ())) for name, v in zip(_LIST_NAMES, lists, strict=True))
    content = CheckpointContent(**fields, item_ids=_item_ids(item_ids))
    return Checkpoint(
        id=record[p["id"]],
        hash=record[p["hash"]],
        space_id=record[p["space_id"]],
        parent_id=record[p["parent_id"]],
        branch_name=record[p["branch_name"]],
        content=content,
        author_agent=record[p["author_agent"]],
        source_session_id=record[p["source_session_id"]],
        source_turn_range=(
            TurnRange(first=first, last=last) if first is not None and last is not None else None
        ),
        base_sequence=record[p["base_sequence"]],
        created_at=timestamp(record[p["created_at"]]),
        merge_parent_id=record[p["merge_parent_id"]],
        author_id=record[p["author_id"]],
        author_token=record[p["author_token"]],
    )


def _item_ids(stored: Mapping[str, Any] | None) -> ItemIds | None:
    if stored is None:
        return None
    return ItemIds(**{f.attr: tuple(stored.get(f.attr) or ()) for f in CONTENT_LIST_FIELDS})


_USER = USER.position


def account(record: Row) -> Account:
    """An account from a row of ``tables.USER``."""
    p = _USER
    return Account(
        id=int(record[p["id"]]),
        name=record[p["name"]],
        is_admin=bool(record[p["is_admin"]]),
        disabled=bool(record[p["disabled"]]),
        has_password=record[p["password_hash"]] is not None,
        created_at=timestamp(record[p["created_at"]]),
    )


_API_TOKEN = API_TOKEN.position


def api_token(record: Row) -> ApiToken:
    """A token (never its hash) from a row of ``tables.API_TOKEN``."""
    p = _API_TOKEN
    return ApiToken(
        id=int(record[p["id"]]),
        user_id=int(record[p["user_id"]]),
        name=record[p["name"]],
        prefix=record[p["prefix"]],
        read_only=bool(record[p["read_only"]]),
        created_at=timestamp(record[p["created_at"]]),
        last_used_at=maybe_timestamp(record[p["last_used_at"]]),
        expires_at=maybe_timestamp(record[p["expires_at"]]),
        revoked_at=maybe_timestamp(record[p["revoked_at"]]),
    )


_PRESET = PRESET.position


def preset(record: Row) -> Preset:
    """A preset from a row of ``tables.PRESET``."""
    p = _PRESET
    return Preset(
        id=record[p["id"]],
        owner_id=record[p["owner_id"]],
        name=record[p["name"]],
        model=record[p["model"]],
        settings=ChatSettings.from_json(json_value(record[p["settings"]])),
        created_at=timestamp(record[p["created_at"]]),
        updated_at=timestamp(record[p["updated_at"]]),
    )
