"""`smriti import` of a file: another app's list of conversations read one
conversation at a time, each written in a transaction of its own.

A ChatGPT, Claude or Open WebUI export is a JSON list of conversations, and a
years-old account's is hundreds of megabytes: parsed whole it would take
several times its size in memory. ijson (a streaming JSON parser) yields the
list's items one by one, so the file is read twice, one conversation in memory
at a time:

1. every conversation is read and checked (``imports.conversation``) and its
   messages counted: a file that is malformed anywhere, or not JSON to its
   end, is refused with nothing written, as a whole document is; the counts
   are what progress measures against;
2. each conversation is imported as ``import_document`` imports it, in a
   transaction of its own (``transfer.import_export`` of that one session and
   its branches). An import stopped half-way (killed) leaves whole
   conversations; run again, each conversation already here (a space-less
   session of the same title and creation time: the rule every import
   follows) is not imported again, and the rest is.

Any other document (a Smriti export, one Open WebUI chat: a JSON object) is
read whole and imported by ``transfer.import_document``, in one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import ijson

from ..domain import imports
from ..domain.accounts import Actor
from ..domain.export_format import Export
from ..domain.types import Session, Space
from ..errors import ErrorCode, InputError
from ..providers import ProviderRegistry
from ..store import transfer as store
from . import policy
from .transfer import ImportReport, import_document

_WHITESPACE = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Where an import of a file is. ``reading``: the first pass (checking;
    ``conversations``/``messages`` are what it has found so far); then what has
    been imported of the totals the first pass counted."""

    reading: bool
    conversations_done: int
    conversations: int
    messages_done: int
    messages: int
    seconds: float  # since this pass began


Progress = Callable[[ImportProgress], None]


async def import_file(
    actor: Actor,
    file: IO[bytes],
    registry: ProviderRegistry,
    progress: Progress | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> ImportReport:
    """Import the document in ``file`` (a binary file that can seek); a JSON
    list of conversations a conversation at a time, reporting to ``progress``
    after each; anything else whole (UnicodeDecodeError for one not UTF-8)."""
    policy.allow(actor, "importSpace")
    first = _first_byte(file)
    file.seek(0)
    if first != b"[":
        return await import_document(actor, file.read().decode("utf-8"), registry)
    ref = registry.resolve(None, require_available=False)
    found, conversations, messages = _check(file, progress, clock)
    file.seek(0)
    spaces: list[tuple[Space, bool]] = []
    sessions: list[tuple[Session, bool]] = []
    branches: list[int] = []
    done_messages = 0
    started = clock()
    for index, item in enumerate(_items(file)):
        tree = imports.conversation(found, item, index)
        del item  # the file's objects, often larger than what is kept of them
        session, its_branches = imports.imported(
            found,
            tree,
            provider=ref.provider,
            model=ref.model,
            count_tokens=lambda content: registry.count_tokens(content, ref),
        )
        done = await store.import_export(
            actor.user_id, Export(spaces=(), sessions=(session,)), (its_branches,)
        )
        (one, created), *_ = done.sessions
        sessions.append((one, created))
        branches.append(len(its_branches) if created else 0)
        done_messages += len(tree.messages)
        if progress is not None:
            progress(
                ImportProgress(
                    False, index + 1, conversations, done_messages, messages, clock() - started
                )
            )
    return ImportReport(spaces, sessions, found.source, branches)


def _check(
    file: IO[bytes], progress: Progress | None, clock: Callable[[], float]
) -> tuple[imports.ListFormat, int, int]:
    """The first pass: the list's format, its conversations and their messages
    (those imported: a user's or an assistant's, with text), every one checked."""
    started = clock()
    found: imports.ListFormat | None = None
    conversations = messages = 0
    for index, item in enumerate(_items(file)):
        if found is None:
            found = imports.list_format(item)
        messages += len(imports.conversation(found, item, index).messages)
        conversations += 1
        if progress is not None:
            progress(ImportProgress(True, 0, conversations, 0, messages, clock() - started))
    if found is None:  # an empty list: no format says what it is
        raise imports.not_accepted()
    return found, conversations, messages


def _items(file: IO[bytes]) -> Iterator[Any]:
    """The list's items, one at a time; InputError (INVALID) where the file
    stops being JSON."""
    try:
        # Floats, not Decimals: the readers check times as int | float.
        yield from ijson.items(file, "item", use_float=True)
    except ijson.JSONError as exc:
        raise InputError(
            f"The document is not JSON ({_reason(exc)}).", code=ErrorCode.INVALID, field="document"
        ) from None


def _reason(exc: Exception) -> str:
    """yajl's message, on one line ("parse error: premature EOF" and the text near it)."""
    return " ".join(str(exc).split())[:200]


def _first_byte(file: IO[bytes]) -> bytes:
    """The document's first byte that is not JSON whitespace (b"" for none)."""
    while True:
        chunk = file.read(4096)
        if not chunk:
            return b""
        stripped = chunk.lstrip(_WHITESPACE)
        if stripped:
            return stripped[:1]
