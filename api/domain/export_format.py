"""The lossless JSON export of spaces: building it, reading it back, checking it.

One document, ``{"format": "smriti-export", "version": 1, ...}``, holds spaces
(each with its branches, checkpoints and sessions with their turns) and
sessions that belong to no space. Every stored field is kept, ids included:
ids say how things refer to each other inside the document (a checkpoint's
parent, a session's mount, a branch's head); an import gives them new ids
and maps every reference. Hashes are kept as they are and verified on
import against ``hashSpaceId``, the space id they were sealed with (a hash
covers its space id; see hashing.py). ``mergeParentId`` names a merge's
merged-in checkpoint (null for any other). A turn's ``finishReason``,
``providerFinishReason`` and ``continuesSequence`` came later: a document
without them reads them as null. So did a checkpoint's ``itemIds`` (its
items' identities, part of its hash): absent or null, the checkpoint was
saved before items had ids, and its ids are derived from its hash. A session's
``pinnedAt``, ``archivedAt``, ``tags`` and ``branchedFrom`` came with conversation
branches (issue 21): absent, it is not pinned, archived, tagged or a branch.
``branchedFrom`` names an earlier session of the same list (the space's, or
the space-less ones) and the last of its turns the branch holds: the branch's
turns up to there are written out in full, as the origin's (so the file reads
whole, and a server that knows no branches imports it as separate sessions),
and the import makes them copies of the origin's, as a branch holds them. The
JSON Schema of this format is docs/export.schema.json.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ..errors import ErrorCode, InputError
from .chat_settings import ANY_MODEL_OUTPUT_LIMIT, validate
from .hashing import FIRST_FIELDS, utc_timestamp
from .identity import ID_PATTERN
from .tags import validate_tags
from .types import (
    CONTENT_LIST_FIELDS,
    CONTENT_TEXT_FIELDS,
    NO_SETTINGS,
    PROVIDER_FINISH_REASON_CHARS,
    SETTINGS_NAMES,
    BranchPoint,
    ChatSettings,
    Checkpoint,
    CheckpointContent,
    FinishReason,
    ItemIds,
    MemoryScope,
    Mount,
    Role,
    Session,
    Space,
    Turn,
    TurnRange,
    Usage,
)
from .validation import is_text
from .verification import verify_lineage

FORMAT = "smriti-export"
VERSION = 1
_NO_OWNER = 0  # a parsed document's objects belong to nobody until imported
# The database's column sizes (api/store/models.py): longer text is refused here,
# as data, rather than by PostgreSQL as an unexpected error.
NAME_CHARS = 200
BRANCH_CHARS = 100
# Every number is range-checked before anything is written. Counts and sequence
# numbers are GraphQL Ints (32-bit signed) and integer columns; ids are the
# database's 64-bit keys (only references inside the document, but a space's
# hashSpaceId is kept); a cost is a GraphQL Float, which must be finite.
INT_MAX = 2**31 - 1
ID_MAX = 2**63 - 1
COST_MAX = 1e9
# Times a database and a GraphQL DateTime can both hold, and ISO 8601 can write.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
# How deep a document may nest (the format itself needs 6 levels).
MAX_NESTING = 64


@dataclass(frozen=True, slots=True)
class Branch:
    name: str
    head_id: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class SessionExport:
    session: Session
    turns: tuple[Turn, ...]
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SpaceExport:
    space: Space
    hash_space_id: int
    branches: tuple[Branch, ...]
    checkpoints: tuple[Checkpoint, ...]  # oldest first
    sessions: tuple[SessionExport, ...]


@dataclass(frozen=True, slots=True)
class Export:
    spaces: tuple[SpaceExport, ...]
    sessions: tuple[SessionExport, ...]  # those in no space


# --- writing ---------------------------------------------------------------


def to_document(export: Export, *, exported_at: datetime) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": utc_timestamp(exported_at),
        "spaces": [_space(s) for s in export.spaces],
        "sessions": [_session(s) for s in export.sessions],
    }


class DocumentWriter:
    """The JSON export a space or a session at a time, for writing as it is read:
    the chunks join to exactly what ``json.dumps(to_document(...),
    ensure_ascii=False, indent=1)`` writes, without holding the whole document.

    Call ``head()``, ``space()`` for each space, ``sessions()``, ``session()``
    for each space-less session, then ``tail()``.
    """

    # Items sit two levels deep (the document, then its list), one space a level.
    _ITEM_BREAK = "\n  "

    def __init__(self, exported_at: datetime) -> None:
        self.exported_at = exported_at
        self._items = 0

    def head(self) -> str:
        opening = json.dumps(
            {"format": FORMAT, "version": VERSION, "exportedAt": utc_timestamp(self.exported_at)},
            ensure_ascii=False,
            indent=1,
        )
        return opening[: -len("\n}")] + ',\n "spaces": ['

    def space(self, item: SpaceExport) -> str:
        return self._item(_space(item))

    def sessions(self) -> str:
        return self._close() + ',\n "sessions": ['

    def session(self, item: SessionExport) -> str:
        return self._item(_session(item))

    def tail(self) -> str:
        return self._close() + "\n}\n"

    def _item(self, value: dict[str, Any]) -> str:
        text = json.dumps(value, ensure_ascii=False, indent=1)
        # JSON text holds no raw newline inside a string: every line break is layout.
        lead = ("," if self._items else "") + self._ITEM_BREAK
        self._items += 1
        return lead + text.replace("\n", self._ITEM_BREAK)

    def _close(self) -> str:
        closing = "\n ]" if self._items else "]"
        self._items = 0
        return closing


def _space(item: SpaceExport) -> dict[str, Any]:
    space = item.space
    return {
        "id": space.id,
        "hashSpaceId": item.hash_space_id,
        "name": space.name,
        "description": space.description,
        "createdAt": utc_timestamp(space.created_at),
        "updatedAt": utc_timestamp(space.updated_at),
        "branches": [
            {
                "name": b.name,
                "headId": b.head_id,
                "createdAt": utc_timestamp(b.created_at),
                "updatedAt": utc_timestamp(b.updated_at),
            }
            for b in item.branches
        ],
        "checkpoints": [_checkpoint(c) for c in item.checkpoints],
        "sessions": [_session(s) for s in item.sessions],
        "settings": space.settings.to_json(),
    }


def _checkpoint(checkpoint: Checkpoint) -> dict[str, Any]:
    content = checkpoint.content
    source = checkpoint.source_turn_range
    return {
        "id": checkpoint.id,
        "hash": checkpoint.hash,
        "parentId": checkpoint.parent_id,
        "mergeParentId": checkpoint.merge_parent_id,
        "branchName": checkpoint.branch_name,
        **content.by_name(),
        "itemIds": content.item_ids.by_name() if content.item_ids is not None else None,
        "authorAgent": checkpoint.author_agent,
        "sourceSessionId": checkpoint.source_session_id,
        "sourceTurnRange": {"first": source.first, "last": source.last} if source else None,
        "baseSequence": checkpoint.base_sequence,
        "createdAt": utc_timestamp(checkpoint.created_at),
    }


def _session(item: SessionExport) -> dict[str, Any]:
    session = item.session
    mount = session.mount
    return {
        "id": session.id,
        "title": session.title,
        "branchName": session.branch_name,
        "activeProvider": session.active_provider,
        "activeModel": session.active_model,
        "seededFromId": session.seeded_from_id,
        "forkedFromId": session.forked_from_id,
        "memoryScope": session.memory_scope.value,
        "mount": (
            {"checkpointId": mount.checkpoint_id, "baseSequence": mount.base_sequence}
            if mount
            else None
        ),
        "lastSequenceNumber": session.last_sequence_number,
        "createdAt": utc_timestamp(session.created_at),
        "updatedAt": utc_timestamp(session.updated_at),
        "turns": [_turn(t) for t in item.turns],
        "settings": session.settings.to_json(),
        "pinnedAt": _maybe_time(session.pinned_at),
        "archivedAt": _maybe_time(session.archived_at),
        "tags": list(item.tags),
        "branchedFrom": (
            {"sessionId": point.session_id, "afterSequence": point.after_sequence}
            if (point := session.branched_from) is not None
            else None
        ),
    }


def _maybe_time(moment: datetime | None) -> str | None:
    return utc_timestamp(moment) if moment is not None else None


def _turn(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.id,
        "sequenceNumber": turn.sequence_number,
        "role": turn.role.value,
        "content": turn.content,
        "provider": turn.provider,
        "model": turn.model,
        "tokenCount": turn.token_count,
        "promptTokens": turn.usage.prompt_tokens,
        "completionTokens": turn.usage.completion_tokens,
        "cost": turn.usage.cost,
        "interrupted": turn.interrupted,
        "replyToSequence": turn.reply_to_sequence,
        "continuesSequence": turn.continues_sequence,
        "idempotencyKey": turn.idempotency_key,
        "createdAt": utc_timestamp(turn.created_at),
        "finishReason": turn.finish_reason.value if turn.finish_reason else None,
        "providerFinishReason": turn.provider_finish_reason,
        "settings": turn.settings.to_json() if turn.settings else None,
    }


# --- reading ---------------------------------------------------------------


class _Reader:
    """Typed access to one JSON object, with its path for error messages."""

    def __init__(self, value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise invalid(path, "an object")
        self.value = value
        self.path = path

    def _get(self, key: str) -> Any:
        if key not in self.value:
            raise invalid(f"{self.path}.{key}", "present")
        return self.value[key]

    def later(self, key: str) -> bool:
        """Whether ``key``, a field added after the format's first release, has a
        value: absent (an older export) reads as null."""
        return self.value.get(key) is not None

    def text(self, key: str, *, max_chars: int | None = None) -> str:
        found = self._get(key)
        if not isinstance(found, str):
            raise invalid(f"{self.path}.{key}", "a string")
        if max_chars is not None and len(found) > max_chars:
            raise invalid(f"{self.path}.{key}", f"at most {max_chars} characters")
        if not is_text(found):
            raise invalid(f"{self.path}.{key}", "text (no NUL, no lone surrogate)")
        return found

    def opt_text(self, key: str, *, max_chars: int | None = None) -> str | None:
        return None if self._get(key) is None else self.text(key, max_chars=max_chars)

    def integer(self, key: str, *, minimum: int = 0, maximum: int = INT_MAX) -> int:
        found = self._get(key)
        if not isinstance(found, int) or isinstance(found, bool):
            raise invalid(f"{self.path}.{key}", "an integer")
        if not minimum <= found <= maximum:
            raise invalid(f"{self.path}.{key}", f"an integer from {minimum} to {maximum}")
        return found

    def opt_integer(self, key: str, *, minimum: int = 0, maximum: int = INT_MAX) -> int | None:
        if self._get(key) is None:
            return None
        return self.integer(key, minimum=minimum, maximum=maximum)

    def identifier(self, key: str) -> int:
        """An id: a positive 64-bit integer."""
        return self.integer(key, minimum=1, maximum=ID_MAX)

    def opt_identifier(self, key: str) -> int | None:
        return self.opt_integer(key, minimum=1, maximum=ID_MAX)

    def opt_number(self, key: str, *, maximum: float) -> float | None:
        found = self._get(key)
        if found is None:
            return None
        if not isinstance(found, int | float) or isinstance(found, bool):
            raise invalid(f"{self.path}.{key}", "a number")
        # NaN fails both comparisons; an integer too large for a float is over the maximum.
        if not (isinstance(found, int) or math.isfinite(found)) or not 0 <= found <= maximum:
            raise invalid(f"{self.path}.{key}", f"a number from 0 to {maximum:g}")
        return float(found)

    def flag(self, key: str) -> bool:
        found = self._get(key)
        if not isinstance(found, bool):
            raise invalid(f"{self.path}.{key}", "true or false")
        return found

    def time(self, key: str) -> datetime:
        text = self.text(key)
        try:
            moment = datetime.fromisoformat(text)
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            moment.astimezone(UTC)  # year 1 east of UTC, year 9999 west of it: out of range
        except (ValueError, OverflowError):
            raise invalid(f"{self.path}.{key}", "an ISO 8601 time") from None
        if not EARLIEST <= moment <= LATEST:
            raise invalid(f"{self.path}.{key}", "a time from 1970 to 9999")
        return moment

    def strings(self, key: str) -> tuple[str, ...]:
        found = self._get(key)
        if not isinstance(found, list) or not all(isinstance(s, str) for s in found):
            raise invalid(f"{self.path}.{key}", "a list of strings")
        for index, item in enumerate(found):
            if not is_text(item):
                raise invalid(f"{self.path}.{key}[{index}]", "text (no NUL, no lone surrogate)")
        return tuple(found)

    def objects(self, key: str) -> list[_Reader]:
        found = self._get(key)
        if not isinstance(found, list):
            raise invalid(f"{self.path}.{key}", "a list")
        return [_Reader(item, f"{self.path}.{key}[{i}]") for i, item in enumerate(found)]

    def opt_object(self, key: str) -> _Reader | None:
        found = self._get(key)
        return None if found is None else _Reader(found, f"{self.path}.{key}")


def read_json(text: str) -> Any:
    """The JSON value of an uploaded document, or InputError (INVALID) naming
    where it cannot be read. A number too long to be one is kept as a value past
    every range (so the field that holds it is named when it is checked); a
    document may nest at most MAX_NESTING levels."""
    try:
        document = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"The document is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).",
            code=ErrorCode.INVALID,
            field="document",
        ) from None
    except RecursionError:
        raise _too_deep(_deep_path(text)) from None
    deep = _deep_value(document)
    if deep is not None:
        raise _too_deep(deep)
    return document


_HUGE = 10**30  # beyond every range this format has


def _integer(literal: str) -> int:
    # int() refuses literals over 4,300 digits (ValueError, not a JSON error).
    if len(literal) > 30:
        return -_HUGE if literal.startswith("-") else _HUGE
    return int(literal)


def _root(value_kind: str) -> str:
    # A ChatGPT export is a list of conversations; a Smriti export an object.
    return "conversations" if value_kind == "[" else "document"


def _too_deep(path: str) -> InputError:
    return invalid(path, f"at most {MAX_NESTING} levels deep")


def _deep_value(document: Any) -> str | None:
    """The path of the first object or list nested deeper than MAX_NESTING."""
    root = _root("[" if isinstance(document, list) else "{")
    pending: list[tuple[Any, str, int]] = [(document, root, 1)]
    while pending:
        value, path, depth = pending.pop()
        if depth > MAX_NESTING:
            return path
        if isinstance(value, dict):
            children = [(v, f"{path}.{k}") for k, v in value.items()]
        else:
            children = [(v, f"{path}[{i}]") for i, v in enumerate(value)]
        pending.extend(
            (v, p, depth + 1) for v, p in reversed(children) if isinstance(v, dict | list)
        )
    return None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def _deep_path(text: str) -> str:
    """Where ``text`` first nests deeper than MAX_NESTING, read from its tokens:
    for a document too deep for the parser itself."""
    kinds: list[str] = []  # "[" or "{" per open container
    at: list[str | int] = []  # per open container: the key or index being read
    key = ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            if len(kinds) == MAX_NESTING:
                return _root(kinds[0]) + "".join(
                    f"[{p}]" if isinstance(p, int) else f".{p}" for p in at
                )
            kinds.append(token)
            at.append(0 if token == "[" else "")
        elif token in ("]", "}"):
            if kinds:
                kinds.pop()
                at.pop()
        elif token == ",":
            if kinds and kinds[-1] == "[":
                at[-1] = int(at[-1]) + 1
        elif token == ":":
            if at:
                at[-1] = key
        else:
            try:
                key = json.loads(token)
            except json.JSONDecodeError:
                key = token[1:-1]
    return "document"


def invalid(path: str, expected: str) -> InputError:
    """The INVALID error for a document field that is not what it must be."""
    return InputError(f"{path} must be {expected}.", code=ErrorCode.INVALID, field=path)


def from_document(document: Any) -> Export:
    """The export a document describes, checked: its shape, its references
    and every checkpoint hash (InputError TAMPERED names the first bad one)."""
    root = _Reader(document, "document")
    if root.value.get("format") != FORMAT:
        raise invalid("document.format", f'"{FORMAT}"')
    if root.value.get("version") != VERSION:
        raise InputError(
            f"This server reads export version {VERSION}, not {root.value.get('version')!r}.",
            code=ErrorCode.INVALID,
            field="document.version",
        )
    export = Export(
        spaces=tuple(_read_space(s) for s in root.objects("spaces")),
        sessions=tuple(_read_session(s, None, ()) for s in root.objects("sessions")),
    )
    _check_branches(export.sessions, "document.sessions")
    for index, item in enumerate(export.spaces):
        _check_space(item, f"document.spaces[{index}]")
    return export


def _read_space(reader: _Reader) -> SpaceExport:
    space_id = reader.identifier("id")
    branch_name_of: dict[int, str] = {}
    checkpoints = tuple(_read_checkpoint(c, space_id) for c in reader.objects("checkpoints"))
    for checkpoint in checkpoints:
        branch_name_of[checkpoint.id] = checkpoint.branch_name
    ids = tuple(c.id for c in checkpoints)
    return SpaceExport(
        space=Space(
            id=space_id,
            name=reader.text("name", max_chars=NAME_CHARS),
            description=reader.text("description"),
            owner_id=_NO_OWNER,
            created_at=reader.time("createdAt"),
            updated_at=reader.time("updatedAt"),
            settings=_read_settings(reader) or NO_SETTINGS,
        ),
        hash_space_id=reader.identifier("hashSpaceId"),
        branches=tuple(
            Branch(
                name=b.text("name", max_chars=BRANCH_CHARS),
                head_id=_known(b, "headId", ids),
                created_at=b.time("createdAt"),
                updated_at=b.time("updatedAt"),
            )
            for b in reader.objects("branches")
        ),
        checkpoints=checkpoints,
        sessions=tuple(_read_session(s, space_id, ids) for s in reader.objects("sessions")),
    )


def _known(reader: _Reader, key: str, ids: Sequence[int]) -> int:
    found = reader.identifier(key)
    if found not in ids:
        raise InputError(
            f"{reader.path}.{key} names checkpoint {found}, which the document does not hold.",
            code=ErrorCode.INVALID,
            field=f"{reader.path}.{key}",
        )
    return found


def _read_checkpoint(reader: _Reader, space_id: int) -> Checkpoint:
    source = reader.opt_object("sourceTurnRange")
    span = None
    if source is not None:
        span = TurnRange(first=source.integer("first", minimum=1), last=source.integer("last"))
        if span.last < span.first:
            raise invalid(f"{source.path}.last", f"at least first ({span.first})")
    return Checkpoint(
        id=reader.identifier("id"),
        hash=reader.text("hash", max_chars=64),
        space_id=space_id,
        parent_id=reader.opt_identifier("parentId"),
        merge_parent_id=reader.opt_identifier("mergeParentId"),
        branch_name=reader.text("branchName", max_chars=BRANCH_CHARS),
        content=_read_content(reader),
        author_agent=reader.text("authorAgent", max_chars=NAME_CHARS),
        source_session_id=reader.opt_identifier("sourceSessionId"),
        source_turn_range=span,
        base_sequence=reader.integer("baseSequence"),
        created_at=reader.time("createdAt"),
    )


def _read_content(reader: _Reader) -> CheckpointContent:
    # A list field added after the format's first release may be absent (an
    # older export): then it has no items, as its hash says (FIRST_FIELDS).
    def strings(name: str, of: _Reader) -> tuple[str, ...]:
        return of.strings(name) if name in FIRST_FIELDS or of.later(name) else ()

    content = CheckpointContent.from_columns(
        {
            **{
                f.attr: reader.text(f.name, max_chars=NAME_CHARS if f.attr == "title" else None)
                for f in CONTENT_TEXT_FIELDS
            },
            **{f.attr: strings(f.name, reader) for f in CONTENT_LIST_FIELDS},
        }
    )
    # Absent or null: saved before items had ids (an older export too).
    if not reader.later("itemIds"):
        return content
    ids = reader.opt_object("itemIds")
    assert ids is not None
    found: dict[str, tuple[str, ...]] = {}
    for f in CONTENT_LIST_FIELDS:
        values = strings(f.name, ids)
        path = f"{ids.path}.{f.name}"
        if len(values) != len(getattr(content, f.attr)):
            raise invalid(path, f"as many ids as {reader.path}.{f.name} has items")
        if any(not ID_PATTERN.fullmatch(v) for v in values):
            raise invalid(path, "ids of 1 to 64 letters, digits, '-' or '_'")
        _unique(values, path, "item id")
        found[f.attr] = values
    return replace(content, item_ids=ItemIds(**found))


def _read_session(reader: _Reader, space_id: int | None, ids: Sequence[int]) -> SessionExport:
    def checkpoint_ref(key: str) -> int | None:
        return None if reader.opt_identifier(key) is None else _known(reader, key, ids)

    mount = reader.opt_object("mount")
    session_id = reader.identifier("id")
    turns = tuple(_read_turn(t, session_id) for t in reader.objects("turns"))
    # The next message takes lastSequenceNumber + 1: anything but the last turn's
    # number would collide with a turn, or overflow (2^31 - 1 fits an Int, its
    # successor does not).
    last = reader.integer("lastSequenceNumber")
    highest = max((t.sequence_number for t in turns), default=0)
    if last != highest:
        raise invalid(
            f"{reader.path}.lastSequenceNumber",
            f"{highest}, the highest sequenceNumber of its turns",
        )
    try:
        scope = MemoryScope(reader.text("memoryScope"))
    except ValueError:
        raise invalid(f"{reader.path}.memoryScope", "LATEST_1 or LATEST_3") from None
    session = Session(
        id=session_id,
        title=reader.text("title", max_chars=NAME_CHARS),
        space_id=space_id,
        branch_name=reader.text("branchName", max_chars=BRANCH_CHARS),
        active_provider=reader.text("activeProvider", max_chars=BRANCH_CHARS),
        active_model=reader.text("activeModel", max_chars=NAME_CHARS),
        seeded_from_id=checkpoint_ref("seededFromId"),
        forked_from_id=checkpoint_ref("forkedFromId"),
        memory_scope=scope,
        mount=(
            Mount(
                checkpoint_id=_known(mount, "checkpointId", ids),
                base_sequence=mount.integer("baseSequence", maximum=last),
            )
            if mount
            else None
        ),
        last_sequence_number=last,
        owner_id=_NO_OWNER,
        created_at=reader.time("createdAt"),
        updated_at=reader.time("updatedAt"),
        settings=_read_settings(reader) or NO_SETTINGS,
        pinned_at=reader.time("pinnedAt") if reader.later("pinnedAt") else None,
        archived_at=reader.time("archivedAt") if reader.later("archivedAt") else None,
        branched_from=_read_branch_point(reader, last),
    )
    _unique([t.sequence_number for t in turns], f"{reader.path}.turns", "sequence number")
    keys = [t.idempotency_key for t in turns if t.idempotency_key is not None]
    _unique(keys, f"{reader.path}.turns", "idempotency key")
    continued = [t.continues_sequence for t in turns if t.continues_sequence is not None]
    _unique(continued, f"{reader.path}.turns", "continuesSequence")
    tags: tuple[str, ...] = ()
    if reader.later("tags"):
        path = f"{reader.path}.tags"
        tags = tuple(tag for tag, _ in validate_tags(reader.strings("tags"), field=path))
    return SessionExport(session=session, turns=turns, tags=tags)


def _read_branch_point(reader: _Reader, last: int) -> BranchPoint | None:
    if not reader.later("branchedFrom"):
        return None
    point = reader.opt_object("branchedFrom")
    assert point is not None
    return BranchPoint(
        session_id=point.identifier("sessionId"),
        after_sequence=point.integer("afterSequence", maximum=last),
    )


def _check_branches(sessions: Sequence[SessionExport], path: str) -> None:
    """Each branch names an earlier session of its list, and holds that
    session's turns up to its branch point, as they are there."""
    earlier: dict[int, SessionExport] = {}
    for index, item in enumerate(sessions):
        point = item.session.branched_from
        if point is not None:
            where = f"{path}[{index}].branchedFrom"
            origin = earlier.get(point.session_id)
            if origin is None:
                raise invalid(f"{where}.sessionId", "the id of an earlier session of its list")
            after = point.after_sequence
            if after > origin.session.last_sequence_number:
                raise invalid(
                    f"{where}.afterSequence",
                    f"at most its origin's lastSequenceNumber "
                    f"({origin.session.last_sequence_number})",
                )
            if _held(item, after) != _held(origin, after):
                raise invalid(
                    f"{path}[{index}].turns", f"the turns of its origin up to {after}, unchanged"
                )
        earlier[item.session.id] = item


def _held(item: SessionExport, after: int) -> list[Turn]:
    """Its turns 1..after, as a branch's copies compare with its origin's."""
    return [replace(t, id=0, session_id=0) for t in item.turns if t.sequence_number <= after]


def _unique(values: Sequence[object], path: str, what: str) -> None:
    if len(set(values)) != len(values):
        raise invalid(path, f"without a repeated {what}")


def _read_turn(reader: _Reader, session_id: int) -> Turn:
    try:
        role = Role(reader.text("role"))
    except ValueError:
        raise invalid(f"{reader.path}.role", "USER, ASSISTANT or SYSTEM") from None
    sequence_number = reader.integer("sequenceNumber", minimum=1)
    finish_reason = _finish_reason(reader, role)
    continues = None
    if reader.later("continuesSequence"):
        continues = reader.integer("continuesSequence", minimum=1)
        if continues >= sequence_number:  # a continuation follows what it continues
            raise invalid(f"{reader.path}.continuesSequence", "below sequenceNumber")
    return Turn(
        id=reader.identifier("id"),
        session_id=session_id,
        role=role,
        content=reader.text("content"),
        sequence_number=sequence_number,
        provider=reader.opt_text("provider", max_chars=BRANCH_CHARS),
        model=reader.opt_text("model", max_chars=NAME_CHARS),
        token_count=reader.integer("tokenCount"),
        created_at=reader.time("createdAt"),
        usage=Usage(
            prompt_tokens=reader.opt_integer("promptTokens"),
            completion_tokens=reader.opt_integer("completionTokens"),
            cost=reader.opt_number("cost", maximum=COST_MAX),
        ),
        interrupted=_interrupted(reader, finish_reason),
        reply_to_sequence=reader.opt_integer("replyToSequence", minimum=1),
        idempotency_key=reader.opt_text("idempotencyKey", max_chars=NAME_CHARS),
        finish_reason=finish_reason,
        provider_finish_reason=_provider_finish_reason(reader, finish_reason),
        continues_sequence=continues,
        settings=_read_settings(reader),
    )


def _read_settings(reader: _Reader) -> ChatSettings | None:
    """``settings`` (instructions and parameters; absent in older exports: none),
    typed and within the bounds a session's are (any model's output limit)."""
    if not reader.later("settings"):
        return None
    found = reader.opt_object("settings")
    assert found is not None
    path = found.path
    values = found.value
    for key in values:
        if key not in _SETTINGS_KEYS:
            raise invalid(f"{path}.{key}", f"one of {', '.join(_SETTINGS_KEYS)}")

    def number(key: str) -> float | None:
        value = values.get(key)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise invalid(f"{path}.{key}", "a number")
        return None if value is None else float(value)

    instructions = values.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid(f"{path}.instructions", "a string")
    tokens = values.get("maxOutputTokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool)):
        raise invalid(f"{path}.maxOutputTokens", "an integer")
    stop = values.get("stop")
    if stop is not None and (
        not isinstance(stop, list) or not all(isinstance(item, str) for item in stop)
    ):
        raise invalid(f"{path}.stop", "a list of strings")
    settings = ChatSettings(
        instructions=instructions,
        temperature=number("temperature"),
        top_p=number("topP"),
        max_output_tokens=tokens,
        stop=tuple(stop) if stop is not None else None,
    )
    checked = validate(settings, output_limit=ANY_MODEL_OUTPUT_LIMIT, field=path)
    return None if checked.empty else checked


_SETTINGS_KEYS = tuple(SETTINGS_NAMES.values())
_FINISH_REASONS = ", ".join(r.value for r in FinishReason)


def _finish_reason(reader: _Reader, role: Role) -> FinishReason | None:
    if not reader.later("finishReason"):
        return None
    path = f"{reader.path}.finishReason"
    if role is not Role.ASSISTANT:
        raise invalid(path, f"null for a {role.value} turn")
    try:
        return FinishReason(reader.text("finishReason"))
    except ValueError:
        raise invalid(path, f"one of {_FINISH_REASONS}, or null") from None


def _interrupted(reader: _Reader, reason: FinishReason | None) -> bool:
    """The flag, which must agree with the reason when there is one (a turn is
    interrupted exactly when its reason left it cut off)."""
    flag = reader.flag("interrupted")
    if reason is not None and flag is not reason.cut_off:
        expected = "true" if reason.cut_off else "false"
        raise invalid(f"{reader.path}.interrupted", f"{expected} when finishReason is {reason}")
    return flag


def _provider_finish_reason(reader: _Reader, reason: FinishReason | None) -> str | None:
    if not reader.later("providerFinishReason"):
        return None
    if reason is not FinishReason.OTHER:
        raise invalid(f"{reader.path}.providerFinishReason", "null unless finishReason is OTHER")
    return reader.text("providerFinishReason", max_chars=PROVIDER_FINISH_REASON_CHARS)


def _check_space(item: SpaceExport, path: str) -> None:
    _unique([b.name for b in item.branches], f"{path}.branches", "name")
    _unique([s.session.id for s in item.sessions], f"{path}.sessions", "id")
    _check_branches(item.sessions, f"{path}.sessions")
    ids = [c.id for c in item.checkpoints]
    if len(set(ids)) != len(ids) or ids != sorted(ids):
        raise invalid(f"{path}.checkpoints", "in creation order, each id once")
    result = verify_lineage(item.checkpoints, hash_space_id=item.hash_space_id)
    if result.broken is not None:
        bad = result.broken.checkpoint
        index = result.checked - 1
        raise InputError(
            f'Checkpoint {bad.id} ("{bad.content.title}", {bad.hash[:12]}) does not verify '
            f"({result.broken.reason.value}): the file was changed after export; "
            "nothing was imported.",
            code=ErrorCode.TAMPERED,
            field=f"{path}.checkpoints[{index}]",
        )
