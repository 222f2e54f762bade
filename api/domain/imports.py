"""Which format an uploaded document is, and what it says.

One entry point reads a Smriti JSON export, a ChatGPT or a Claude data
export's conversations.json, or an Open WebUI chat export; anything else is
INVALID naming the formats accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ErrorCode, InputError
from . import chatgpt, claude, openwebui
from .export_format import from_document
from .import_tree import Read

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
    raise InputError(
        f"This document is none of the formats Smriti imports: {ACCEPTED}.",
        code=ErrorCode.INVALID,
        field="document",
    )
