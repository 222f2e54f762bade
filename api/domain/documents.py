"""Readable documents of a session or a lineage: Markdown and Jupyter notebooks.

Pure renderers: they take domain values and return text (Markdown) or the
JSON of an nbformat 4.5 notebook. A session's checkpoints sit where they
were saved: after the turn whose sequence number is their base sequence.
Turn text is Markdown already and is kept as written, made safe to open in
any viewer (safe_markdown.py: no raw HTML, no links but plain http(s) and
mailto ones, no images; fenced code stays code); so is every other text a user
wrote, titles and names included. A notebook shows the user's turns and the
model's as Markdown cells (a reply is prose, not the output of a code cell) and
each checkpoint as a Markdown cell of its fields.

Dates in the text read as people write them ("1 May 2024, 12:00 UTC"); the
notebook's metadata (and the JSON export) keep the exact timestamps. A reply
whose lines were meant as lines keeps one line per line when rendered
(``block(..., hard_breaks=True)``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .hashing import utc_timestamp
from .safe_markdown import block, inline
from .types import (
    CONTENT_LIST_FIELDS,
    Checkpoint,
    FinishReason,
    Role,
    Session,
    Space,
    Turn,
)

Item = Turn | Checkpoint

_SPEAKER = {Role.USER: "You", Role.ASSISTANT: "Model", Role.SYSTEM: "Smriti"}


# What a file name may not hold on Linux, macOS or Windows (and what trips a shell).
_NOT_IN_FILE_NAMES = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{d}{n}" for d in ("COM", "LPT") for n in range(1, 10)]
)
FILE_STEM_MAX_CHARS = 80


def file_stem(title: str, fallback: str) -> str:
    """A name to save a document under: its title as the user wrote it, without the
    characters a file system refuses, spaces collapsed, at most 80 characters and
    without leading or trailing dots; ``fallback`` when nothing usable is left (an
    empty title, or one that is a Windows device name)."""
    stem = " ".join(_NOT_IN_FILE_NAMES.sub(" ", title).split())
    stem = stem[:FILE_STEM_MAX_CHARS].strip(" .")
    if not stem or stem.upper() in _WINDOWS_DEVICES:
        return fallback
    return stem


_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def readable_date(moment: datetime) -> str:
    """A moment as people write it, to the minute, in UTC: "1 May 2024, 12:00 UTC".

    Month names are English whatever the machine's locale (strftime's %B is not).
    A naive datetime is taken as UTC, as utc_timestamp does.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    return f"{utc.day} {_MONTHS[utc.month - 1]} {utc.year}, {utc:%H:%M} UTC"


@dataclass(frozen=True, slots=True)
class LineageBranch:
    name: str
    head_hash: str


def in_order(turns: Sequence[Turn], checkpoints: Sequence[Checkpoint]) -> list[Item]:
    """Turns by sequence number, each checkpoint after the turn it was saved at."""
    after: dict[int, list[Checkpoint]] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c.id):
        after.setdefault(checkpoint.base_sequence, []).append(checkpoint)
    items: list[Item] = list(after.pop(0, []))
    for turn in sorted(turns, key=lambda t: t.sequence_number):
        items.append(turn)
        items.extend(after.pop(turn.sequence_number, []))
    # Saved past the last turn still here (turns are never deleted, but be whole).
    for rest in sorted(after):
        items.extend(after[rest])
    return items


def turn_markdown(turn: Turn) -> str:
    who = _SPEAKER[turn.role]
    if turn.role is Role.ASSISTANT and turn.model:
        model = f"{turn.provider}/{turn.model}" if turn.provider else turn.model
        who = f"{who} ({inline(model)})"
    note = _finish_note(turn)
    heading = f"### {turn.sequence_number}. {who} · {readable_date(turn.created_at)}{note}"
    return f"{heading}\n\n{block(turn.content.strip(), hard_breaks=True)}\n"


# Why a reply ended, beside its heading (the web UI says the same); a reply that
# simply finished (STOP) gets no note.
_FINISH_NOTES = {
    FinishReason.LENGTH: "stopped: token limit",
    FinishReason.CONTENT_FILTER: "stopped: content filter",
    FinishReason.TOOL_CALLS: "stopped: tool call",
    FinishReason.INTERRUPTED: "interrupted",
    FinishReason.LOST_CONNECTION: "stopped: connection lost",
}


def _finish_note(turn: Turn) -> str:
    reason = turn.finish_reason
    if reason is None:  # saved before reasons were recorded
        return " · interrupted" if turn.interrupted else ""
    if reason is FinishReason.OTHER:
        word = inline(turn.provider_finish_reason) if turn.provider_finish_reason else "unknown"
        return f" · stopped: {word}"
    note = _FINISH_NOTES.get(reason)
    return f" · {note}" if note else ""


def checkpoint_markdown(checkpoint: Checkpoint, *, parent_hash: str | None = None) -> str:
    content = checkpoint.content
    lines = [
        f"### Checkpoint `{checkpoint.short_hash}` · {inline(content.title)}",
        "",
        f"- Branch: {inline(checkpoint.branch_name)}",
        f"- Saved: {readable_date(checkpoint.created_at)} by {inline(checkpoint.author_agent)}",
        f"- Hash: `{checkpoint.hash}`",
    ]
    if parent_hash is not None:
        lines.append(f"- Parent: `{parent_hash[:7]}`")
    if checkpoint.source_turn_range:
        span = checkpoint.source_turn_range
        lines.append(f"- From turns {span.first} to {span.last}")
    for label, text in (("Objective", content.objective), ("Summary", content.summary)):
        if "\n" in text.strip() or "\r" in text.strip():  # a block of its own: it may hold code
            lines += ["", f"**{label}:**", "", block(text.strip())]
        elif text:
            lines += ["", f"**{label}:** {inline(text)}"]
    for field in CONTENT_LIST_FIELDS:
        values: tuple[str, ...] = getattr(content, field.attr)
        if values:
            lines += ["", f"**{field.label}:**", "", *(f"- {inline(v)}" for v in values)]
    return "\n".join(lines) + "\n"


def _item_markdown(item: Item) -> str:
    return turn_markdown(item) if isinstance(item, Turn) else checkpoint_markdown(item)


def session_markdown(session: Session, items: Sequence[Item]) -> str:
    title = inline(session.title or f"Session {session.id}")
    model = inline(f"{session.active_provider}/{session.active_model}")
    header = (
        f"# {title}\n\n"
        f"Branch {inline(session.branch_name)} · model {model}"
        f" · started {readable_date(session.created_at)}\n"
    )
    return "\n".join([header, *(_item_markdown(i) for i in items)])


def lineage_markdown(
    space: Space, checkpoints: Sequence[Checkpoint], branches: Sequence[LineageBranch]
) -> str:
    """A space's checkpoints oldest first, each with its parent's hash."""
    hashes = {c.id: c.hash for c in checkpoints}
    lines = [f"# {inline(space.name)}", ""]
    if space.description.strip():
        lines += [block(space.description.strip()), ""]
    lines += ["## Branches", ""]
    lines += [f"- {inline(b.name)}: head `{b.head_hash[:7]}`" for b in branches] or ["(none)"]
    lines += ["", "## Checkpoints", ""]
    parts = ["\n".join(lines)]
    parts += [
        checkpoint_markdown(
            c, parent_hash=hashes.get(c.parent_id) if c.parent_id is not None else None
        )
        for c in checkpoints
    ]
    return "\n".join(parts)


def session_notebook(session: Session, items: Sequence[Item]) -> dict[str, Any]:
    """The session as an nbformat 4.5 notebook (a dict, ready for json.dumps)."""
    title = session.title or f"Session {session.id}"
    heading = f"# {inline(title)}\n"
    cells = [_cell(f"session-{session.id}", heading, {"smriti": {"session": session.id}})]
    for item in items:
        if isinstance(item, Turn):
            metadata = {
                "smriti": {
                    "role": item.role.value,
                    "sequenceNumber": item.sequence_number,
                    "createdAt": utc_timestamp(item.created_at),
                    "model": item.model,
                }
            }
            cells.append(_cell(f"turn-{item.sequence_number}", turn_markdown(item), metadata))
        else:
            metadata = {"smriti": {"checkpoint": item.hash, "branch": item.branch_name}}
            cells.append(_cell(f"checkpoint-{item.id}", checkpoint_markdown(item), metadata))
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        # A kernel every Jupyter has, so it opens the notebook without asking which
        # (every cell is Markdown: nothing runs).
        "metadata": {
            "title": title,
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        "cells": cells,
    }


def _cell(cell_id: str, text: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "cell_type": "markdown",
        "id": cell_id,
        "metadata": metadata,
        "source": text.splitlines(keepends=True),
    }
