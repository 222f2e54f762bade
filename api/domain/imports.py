"""Which format an uploaded document is, and what it says.

One entry point reads a Smriti JSON export, a ChatGPT or a Claude data
export's conversations.json, or an Open WebUI chat export; anything else is
INVALID naming the formats accepted.

The three other apps' exports are lists of conversations, and may be hundreds
of megabytes: ``ListFormat`` reads such a list one conversation at a time
(``list_format`` from its first item, ``conversation`` for each, ``imported``
for what one becomes), for a reader that never holds the whole list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ErrorCode, InputError
from . import chatgpt, claude, import_tree, openwebui
from .export_format import SessionExport, from_document
from .import_tree import BranchImport, Conversation, Read

SMRITI = "smriti"
ACCEPTED = (
    "a Smriti JSON export, the conversations.json of a ChatGPT or a Claude data export, "
    "or an Open WebUI chat export"
)
_SMRITI_KEYS = ("format", "version", "spaces", "sessions")
_READERS = (
    (chatgpt.looks_like_chatgpt, chatgpt.conversations),
    (claude.looks_like_claude, claude.conversations),
    (openwebui.looks_like_openwebui, openwebui.conversations),
)


def read(document: Any, *, provider: str, model: str, count_tokens: Callable[[str], int]) -> Read:
    """What ``document`` holds; sessions from another app go on talking to
    ``provider``/``model``. A Smriti export's sessions have no ``branches`` to add."""
    for looks_like, conversations in _READERS:
        if looks_like(document):
            return conversations(
                document, provider=provider, model=model, count_tokens=count_tokens
            )
    if isinstance(document, Mapping) and any(key in document for key in _SMRITI_KEYS):
        export = from_document(document)
        return Read(source=SMRITI, export=export, branches=((),) * len(export.sessions))
    raise not_accepted()


def not_accepted() -> InputError:
    return InputError(
        f"This document is none of the formats Smriti imports: {ACCEPTED}.",
        code=ErrorCode.INVALID,
        field="document",
    )


@dataclass(frozen=True, slots=True)
class ListFormat:
    """An app whose export is a list of conversations, read an item at a time."""

    source: str  # "chatgpt", "claude" or "openwebui"
    items: str  # what its reader calls the list in a field's path
    is_item: Callable[[Any], bool]
    tree: Callable[[Any, str], Conversation]


LIST_FORMATS = (
    ListFormat(chatgpt.PROVIDER, "conversations", chatgpt.is_conversation, chatgpt.tree),
    ListFormat(claude.PROVIDER, "conversations", claude.is_conversation, claude.tree),
    ListFormat(openwebui.PROVIDER, "chats", openwebui.is_entry, openwebui.entry_tree),
)


def list_format(first: Any) -> ListFormat:
    """The format of a list whose first item is ``first`` (tried in ``read``'s
    order); INVALID, as ``read`` says it, when it is none of them."""
    for found in LIST_FORMATS:
        if found.is_item(first):
            return found
    raise not_accepted()


def conversation(found: ListFormat, item: Any, index: int) -> Conversation:
    """The list's item at ``index``, read and checked as ``read`` checks it
    (each item must be of the list's format, as ``read`` requires of them all)."""
    if not found.is_item(item):
        raise not_accepted()
    return found.tree(item, f"{found.items}[{index}]")


def imported(
    found: ListFormat,
    tree: Conversation,
    *,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> tuple[SessionExport, tuple[BranchImport, ...]]:
    """What one conversation becomes, as ``read`` makes it of each."""
    one = import_tree.read(
        (tree,), source=found.source, provider=provider, model=model, count_tokens=count_tokens
    )
    return one.export.sessions[0], one.branches[0]
