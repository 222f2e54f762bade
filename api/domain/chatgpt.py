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

from api.domain.export_format import Export, SessionExport, invalid
from api.domain.types import MAIN_BRANCH, MemoryScope, Role, Session, Turn
from api.domain.validation import TITLE_MAX_CHARS

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
PROVIDER = "chatgpt"  # what an imported reply's provider says it came from


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
        raise invalid(f"{path}.create_time", "a time in seconds since 1970")
    updated = _time(conversation.get("update_time"), f"{path}.update_time") or started
    turns: list[Turn] = []
    last_user: int | None = None
    for node_id, message in _current_line(conversation, path):
        role = _ROLES.get(str((message.get("author") or {}).get("role")))
        text = _text(message.get("content"))
        hidden = (message.get("metadata") or {}).get("is_visually_hidden_from_conversation")
        if role is None or not text.strip() or hidden:
            continue
        sequence = len(turns) + 1
        when = _time(message.get("create_time"), f"{path}.mapping.{node_id}.message") or started
        slug = (message.get("metadata") or {}).get("model_slug")
        turns.append(
            Turn(
                id=sequence,
                session_id=0,
                role=role,
                content=text,
                sequence_number=sequence,
                provider=PROVIDER if role is Role.ASSISTANT else None,
                model=str(slug) if role is Role.ASSISTANT and slug else None,
                token_count=count_tokens(text),
                created_at=when,
                reply_to_sequence=last_user if role is Role.ASSISTANT else None,
            )
        )
        if role is Role.USER:
            last_user = sequence
    title = str(conversation.get("title") or "ChatGPT conversation")[:TITLE_MAX_CHARS]
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


def _text(content: Any) -> str:
    if not isinstance(content, Mapping):
        return ""
    if isinstance(content.get("parts"), list):
        return "\n\n".join(p for p in content["parts"] if isinstance(p, str) and p)
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _time(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise invalid(path, "a time in seconds since 1970")
    return datetime.fromtimestamp(value, UTC)
