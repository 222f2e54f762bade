"""Checks on what users (and models) hand us, before anything is written.

Every function returns the value to store or raises ``InputError`` with the
GraphQL name of the offending field. ``clean_checkpoint_fields`` is shared by
``createCheckpoint`` (a user's input, checked strictly) and by the draft
parser (a model's proposal, tidied leniently), so the two can never disagree
about what a valid checkpoint is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..errors import ErrorCode, InputError
from .types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    MAIN_BRANCH,
    CheckpointContent,
)

TITLE_MAX_CHARS = 200
NAME_MAX_CHARS = 200
DESCRIPTION_MAX_CHARS = 2000
OBJECTIVE_MAX_CHARS = 2000
SUMMARY_MAX_CHARS = 20_000
LIST_MAX_ITEMS = 50
ITEM_MAX_CHARS = 1000
IDEMPOTENCY_KEY_MAX_CHARS = 200

# Checkpoint fields by GraphQL name, in the order they are shown (api/domain/types.py).
LIST_FIELDS = tuple(f.name for f in CONTENT_LIST_FIELDS)
CHECKPOINT_FIELDS = tuple(f.name for f in CONTENT_FIELDS)

_BRANCH_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
_NOT_TEXT = "{what} contains characters that are not valid text (NUL or a lone surrogate)."


class FieldProblem(ValueError):
    """A checkpoint field that cannot be used; each caller raises its own error type."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def validate_content(content: str, *, max_bytes: int) -> str:
    """A message's content, unchanged, if it may be sent.

    Whitespace is the user's: nothing is stripped, only checked.
    """
    validate_draft_content(content, max_bytes=max_bytes)
    if not content.strip():
        raise InputError("The message is empty.", code=ErrorCode.EMPTY_CONTENT, field="content")
    return content


def validate_draft_content(content: str, *, max_bytes: int) -> str:
    """A message that is not sent yet (``contextPreview``): may be empty, within the limit."""
    size = len(content.encode("utf-8", "replace"))
    if size > max_bytes:
        raise InputError(
            f"The message is {size} bytes; the limit is {max_bytes} bytes.",
            code=ErrorCode.CONTENT_TOO_LARGE,
            field="content",
        )
    if not is_text(content):
        raise InputError(_NOT_TEXT.format(what="The message"), field="content")
    return content


def validate_description(description: str, *, field: str = "description") -> str:
    """A space's description: any text (may be empty) up to 2,000 characters."""
    return _validate_text(
        description, field=field, what="A description", max_chars=DESCRIPTION_MAX_CHARS
    )


def validate_idempotency_key(key: str, *, field: str = "idempotencyKey") -> str:
    """An idempotency key: 1 to 200 characters of text.

    The key is the client's and may be a secret of theirs: messages never repeat it.
    """
    if not key:
        raise InputError("An idempotency key cannot be empty.", field=field)
    return _validate_text(
        key, field=field, what="An idempotency key", max_chars=IDEMPOTENCY_KEY_MAX_CHARS
    )


def validate_branch_name(name: str, *, field: str = "branchName") -> str:
    """A new branch's name: 1-100 of letters, digits, ``. _ / -``; not "main"."""
    # Case-insensitive so that "Main" cannot pose as the default branch.
    if name.casefold() == MAIN_BRANCH:
        raise InputError(
            f'"{MAIN_BRANCH}" is the default branch; choose another name.',
            code=ErrorCode.BRANCH_RESERVED,
            field=field,
        )
    if not _BRANCH_NAME.fullmatch(name):
        raise InputError(
            "A branch name is 1 to 100 characters: letters, digits, '.', '_', '/' "
            "and '-', starting with a letter or digit.",
            code=ErrorCode.INVALID,
            field=field,
        )
    return name


def validate_title(title: str, *, field: str = "title") -> str:
    """A session or checkpoint title: stripped, non-empty, at most 200 characters."""
    return _validate_label(title, field=field, what="A title", max_chars=TITLE_MAX_CHARS)


def fork_title(checkpoint_title: str) -> str:
    """A fork's default title, "Fork of <checkpoint title>", cut to the title limit."""
    return f"Fork of {checkpoint_title}"[:TITLE_MAX_CHARS].rstrip()


def validate_name(name: str, *, field: str = "name") -> str:
    """A space's name: stripped, non-empty, at most 200 characters."""
    return _validate_label(name, field=field, what="A name", max_chars=NAME_MAX_CHARS)


def validate_checkpoint_content(
    *,
    title: str,
    objective: str | None = None,
    summary: str | None = None,
    **lists: Sequence[str] | None,
) -> CheckpointContent:
    """The content ``createCheckpoint`` saves, each list field by attribute name
    (``decisions=[…]``); omitted fields are empty."""
    unknown = set(lists) - {f.attr for f in CONTENT_LIST_FIELDS}
    if unknown:
        raise TypeError(f"no checkpoint list field {sorted(unknown)[0]!r}")
    given: dict[str, object] = {"title": title, "objective": objective, "summary": summary}
    given.update({f.attr: lists.get(f.attr) for f in CONTENT_LIST_FIELDS})
    empty = {f.attr: [] if f in CONTENT_LIST_FIELDS else "" for f in CONTENT_FIELDS}
    fields = {
        f.name: empty[f.attr] if given[f.attr] is None else given[f.attr] for f in CONTENT_FIELDS
    }
    try:
        return clean_checkpoint_fields(fields, lenient=False)
    except FieldProblem as problem:
        raise InputError(problem.message, code=ErrorCode.INVALID, field=problem.field) from None


def clean_checkpoint_fields(fields: Mapping[str, object], *, lenient: bool) -> CheckpointContent:
    """Check and tidy the checkpoint fields (CONTENT_FIELDS), keyed by GraphQL name.

    In both modes strings are stripped, list items deduplicated (first spelling
    and order kept) and a blank title refused. Strictly (a user's input) a
    blank item or a value over a limit is refused; leniently (a model's draft,
    which the user edits before saving) blank items are dropped and long
    values cut to the limits. Raises ``FieldProblem``.
    """
    title = _string(fields, "title")
    if lenient:
        title = title[:TITLE_MAX_CHARS].strip()
    if not title:
        raise FieldProblem("title", "A checkpoint needs a title.")
    if len(title) > TITLE_MAX_CHARS:
        raise FieldProblem("title", f"A title is at most {TITLE_MAX_CHARS} characters.")
    return CheckpointContent.from_columns(
        {
            "title": title,
            "objective": _limited(fields, "objective", OBJECTIVE_MAX_CHARS, lenient=lenient),
            "summary": _limited(fields, "summary", SUMMARY_MAX_CHARS, lenient=lenient),
            **{f.attr: _items(fields, f.name, lenient=lenient) for f in CONTENT_LIST_FIELDS},
        }
    )


def _json_type_name(value: object) -> str:
    """How a JSON reader would name the type of ``value`` (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _string(fields: Mapping[str, object], name: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise FieldProblem(name, f"{name} must be a string, not {_json_type_name(value)}.")
    if not is_text(value):
        raise FieldProblem(name, _NOT_TEXT.format(what=name))
    return value.strip()


def _limited(fields: Mapping[str, object], name: str, max_chars: int, *, lenient: bool) -> str:
    value = _string(fields, name)
    if lenient:
        return value[:max_chars].strip()
    if len(value) > max_chars:
        raise FieldProblem(name, f"{name} is at most {max_chars} characters.")
    return value


def _items(fields: Mapping[str, object], name: str, *, lenient: bool) -> tuple[str, ...]:
    value = fields[name]
    # A bare string is a Sequence[str] too; it is not a list of items.
    if not isinstance(value, list | tuple):
        raise FieldProblem(name, f"{name} must be a list of strings, not {_json_type_name(value)}.")
    # Counted before any item is looked at: a list of millions is refused at once.
    if not lenient and len(value) > LIST_MAX_ITEMS:
        raise FieldProblem(
            name, f"{name} holds at most {LIST_MAX_ITEMS} items; it has {len(value)}."
        )
    kept: list[str] = []
    seen: set[str] = set()
    for position, raw in enumerate(value):
        if not isinstance(raw, str):
            raise FieldProblem(
                name, f"{name}[{position}] must be a string, not {_json_type_name(raw)}."
            )
        if not is_text(raw):
            raise FieldProblem(name, _NOT_TEXT.format(what=f"{name}[{position}]"))
        item = raw.strip()
        if lenient:
            item = item[:ITEM_MAX_CHARS].strip()
        if not item:
            if lenient:
                continue
            raise FieldProblem(name, f"{name}[{position}] is empty.")
        if len(item) > ITEM_MAX_CHARS:
            raise FieldProblem(
                name, f"{name}[{position}] is longer than {ITEM_MAX_CHARS} characters."
            )
        if item not in seen:
            seen.add(item)
            kept.append(item)
    if len(kept) > LIST_MAX_ITEMS:
        if not lenient:
            raise FieldProblem(name, f"{name} holds at most {LIST_MAX_ITEMS} items.")
        kept = kept[:LIST_MAX_ITEMS]
    return tuple(kept)


def _validate_label(value: str, *, field: str, what: str, max_chars: int) -> str:
    label = _validate_text(value.strip(), field=field, what=what, max_chars=max_chars)
    if not label:
        raise InputError(f"{what} cannot be empty.", code=ErrorCode.INVALID, field=field)
    return label


def _validate_text(value: str, *, field: str, what: str, max_chars: int) -> str:
    """``value`` unchanged if it is at most ``max_chars`` of text (length checked first)."""
    if len(value) > max_chars:
        raise InputError(
            f"{what} is at most {max_chars} characters.", code=ErrorCode.INVALID, field=field
        )
    if not is_text(value):
        raise InputError(_NOT_TEXT.format(what=what), field=field)
    return value


def is_text(value: str) -> bool:
    # NUL is refused by PostgreSQL text columns and a lone surrogate cannot be
    # encoded as UTF-8 (nor hashed): both would otherwise fail later, on write,
    # as a server error instead of a field error.
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
