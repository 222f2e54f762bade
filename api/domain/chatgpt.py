"""A ChatGPT data export's ``conversations.json`` as space-less sessions.

Each conversation is a tree of messages (``mapping``: node id → ``{message,
parent, children}``); what the user last saw is the line from
``current_node`` up through ``parent`` to the root. That line, oldest first,
becomes the session's turns: user and assistant messages with text, each
keeping its original time as the turn's ``createdAt`` (system and tool
messages, hidden ones and empty ones are left out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from .export_format import LATEST, NAME_CHARS, Export, SessionExport, invalid
from .types import MAIN_BRANCH, MemoryScope, Role, Session, Turn
from .validation import TITLE_MAX_CHARS, is_text

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
PROVIDER = "chatgpt"  # what an imported reply's provider says it came from
_LAST_SECOND = LATEST.replace(microsecond=0).timestamp()


def looks_like_chatgpt(document: Any) -> bool:
    """A ChatGPT export is a list of conversations, each with a ``mapping``."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(c, Mapping) and "mapping" in c for c in document)
    )


def conversations(
    document: Any,
    *,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> Export:
    """The sessions a ``conversations.json`` describes (``provider``/``model``:
    what they go on talking to here)."""
    if not isinstance(document, list):
        raise invalid("conversations", "a list of conversations")
    sessions = tuple(
        _session(c, f"conversations[{i}]", provider, model, count_tokens)
        for i, c in enumerate(document)
    )
    return Export(spaces=(), sessions=sessions)


def _session(
    conversation: Any,
    path: str,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> SessionExport:
    if not isinstance(conversation, Mapping) or not isinstance(
        conversation.get("mapping"), Mapping
    ):
        raise invalid(f"{path}.mapping", "an object of message nodes")
    started = _time(conversation.get("create_time"), f"{path}.create_time")
    if started is None:
        raise invalid(f"{path}.create_time", "a time in seconds from 1970 to 9999")
    updated = _time(conversation.get("update_time"), f"{path}.update_time") or started
    turns: list[Turn] = []
    last_user: int | None = None
    for node_id, message in _current_line(conversation, path):
        at = f"{path}.mapping.{node_id}.message"
        author = _object(message.get("author"), f"{at}.author")
        metadata = _object(message.get("metadata"), f"{at}.metadata")
        role = _ROLES.get(str(author.get("role")))
        text = _text(message.get("content"), f"{at}.content")
        hidden = metadata.get("is_visually_hidden_from_conversation")
        if role is None or not text.strip() or hidden:
            continue
        sequence = len(turns) + 1
        when = _time(message.get("create_time"), f"{at}.create_time") or started
        slug = _label(metadata.get("model_slug"), f"{at}.metadata.model_slug", NAME_CHARS)
        turns.append(
            Turn(
                id=sequence,
                session_id=0,
                role=role,
                content=text,
                sequence_number=sequence,
                provider=PROVIDER if role is Role.ASSISTANT else None,
                model=slug if role is Role.ASSISTANT else None,
                token_count=count_tokens(text),
                created_at=when,
                reply_to_sequence=last_user if role is Role.ASSISTANT else None,
            )
        )
        if role is Role.USER:
            last_user = sequence
    title = _label(conversation.get("title"), f"{path}.title", None) or "ChatGPT conversation"
    title = title[:TITLE_MAX_CHARS]
    session = Session(
        id=0,
        title=title,
        space_id=None,
        branch_name=MAIN_BRANCH,
        active_provider=provider,
        active_model=model,
        seeded_from_id=None,
        forked_from_id=None,
        memory_scope=MemoryScope.LATEST_1,
        mount=None,
        last_sequence_number=len(turns),
        owner_id=0,
        created_at=started,
        updated_at=updated,
    )
    return SessionExport(session=session, turns=tuple(turns))


def _current_line(conversation: Mapping[str, Any], path: str) -> list[tuple[str, Any]]:
    """(node id, message) from the root down to ``current_node``."""
    mapping = conversation["mapping"]
    node_id = conversation.get("current_node")
    line: list[tuple[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        node = mapping.get(node_id) if isinstance(node_id, str) else None
        if not isinstance(node, Mapping) or node_id in seen:
            raise invalid(f"{path}.mapping", f"a tree holding node {node_id!r}")
        seen.add(node_id)
        if isinstance(node.get("message"), Mapping):
            line.append((node_id, node["message"]))
        node_id = node.get("parent")
    return line[::-1]


def _object(value: Any, path: str) -> Mapping[str, Any]:
    """An optional object of the export: {} when absent."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid(path, "an object")
    return value


def _label(value: Any, path: str, max_chars: int | None) -> str | None:
    """An optional one-line string (a title, a model's name)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not is_text(value):
        raise invalid(path, "a string")
    if max_chars is not None and len(value) > max_chars:
        raise invalid(path, f"at most {max_chars} characters")
    return value


def _text(content: Any, path: str) -> str:
    """A message's text ("" for content that is not text: images, tool calls)."""
    if not isinstance(content, Mapping):
        return ""
    if isinstance(content.get("parts"), list):
        text = "\n\n".join(p for p in content["parts"] if isinstance(p, str) and p)
    else:
        found = content.get("text")
        text = found if isinstance(found, str) else ""
    if not is_text(text):
        raise invalid(path, "text (no NUL, no lone surrogate)")
    return text


def _time(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        # NaN fails both comparisons; Infinity and 1e20 fail the second.
        or not 0 <= value <= _LAST_SECOND
    ):
        raise invalid(path, "a time in seconds from 1970 to 9999")
    return datetime.fromtimestamp(value, UTC)
