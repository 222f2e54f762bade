"""A ChatGPT data export's ``conversations.json`` as space-less sessions.

Each conversation is a tree of messages (``mapping``: node id → ``{message,
parent, children}``); what the user last saw is the line from
``current_node`` up through ``parent`` to the root. That line, oldest first,
becomes the session's turns (``import_tree``): user and assistant messages
with text, each keeping its original time as the turn's ``createdAt``
(system and tool messages, hidden ones and empty ones are left out); every
other line becomes a conversation branch of it. A file a message attached is not
in conversations.json: it stays a note on the message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import import_tree
from .export_format import NAME_CHARS, invalid
from .import_tree import Message, Node, an_object, label, seconds
from .types import Role
from .validation import is_text

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
PROVIDER = "chatgpt"  # what an imported reply's provider says it came from


def looks_like_chatgpt(document: Any) -> bool:
    """A ChatGPT export is a list of conversations, each with a ``mapping``."""
    return isinstance(document, list) and bool(document) and all(map(is_conversation, document))


def is_conversation(value: Any) -> bool:
    """One conversation of a ChatGPT export (an object with a ``mapping``)."""
    return isinstance(value, Mapping) and "mapping" in value


def conversations(
    document: Any,
    *,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> import_tree.Read:
    """The sessions a ``conversations.json`` describes (``provider``/``model``:
    what they go on talking to here)."""
    if not isinstance(document, list):
        raise invalid("conversations", "a list of conversations")
    trees = [tree(c, f"conversations[{i}]") for i, c in enumerate(document)]
    return import_tree.read(
        trees, source=PROVIDER, provider=provider, model=model, count_tokens=count_tokens
    )


def tree(conversation: Any, path: str) -> import_tree.Conversation:
    if not isinstance(conversation, Mapping) or not isinstance(
        conversation.get("mapping"), Mapping
    ):
        raise invalid(f"{path}.mapping", "an object of message nodes")
    started = seconds(conversation.get("create_time"), f"{path}.create_time")
    if started is None:
        raise invalid(f"{path}.create_time", "a time in seconds from 1970 to 9999")
    updated = seconds(conversation.get("update_time"), f"{path}.update_time") or started
    nodes = []
    for node_id, node in conversation["mapping"].items():
        if not isinstance(node, Mapping):
            raise invalid(f"{path}.mapping.{node_id}", "a message node")
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise invalid(f"{path}.mapping.{node_id}.parent", "a node id")
        message = node.get("message")
        kept = (
            _message(message, f"{path}.mapping.{node_id}.message")
            if isinstance(message, Mapping)
            else None
        )
        nodes.append(Node(node_id, parent, kept))
    current = conversation.get("current_node")
    title = label(conversation.get("title"), f"{path}.title", None) or "ChatGPT conversation"
    return import_tree.conversation(
        title=title,
        created_at=started,
        updated_at=updated,
        nodes=nodes,
        current_id=current if isinstance(current, str) else None,
        where=f"{path}.mapping",
    )


def _message(message: Mapping[str, Any], at: str) -> Message | None:
    """A message to import, or None (not a user's or an assistant's, hidden, empty)."""
    author = an_object(message.get("author"), f"{at}.author")
    metadata = an_object(message.get("metadata"), f"{at}.metadata")
    role = _ROLES.get(str(author.get("role")))
    text = _text(message.get("content"), f"{at}.content")
    when = seconds(message.get("create_time"), f"{at}.create_time")
    slug = label(metadata.get("model_slug"), f"{at}.metadata.model_slug", NAME_CHARS)
    if role is Role.USER:
        text = import_tree.with_attachments(text, (), _attachments(metadata, at))
    if role is None or not text.strip() or metadata.get("is_visually_hidden_from_conversation"):
        return None
    return Message(
        role=role,
        text=text,
        model=slug if role is Role.ASSISTANT else None,
        created_at=when,
    )


def _attachments(metadata: Mapping[str, Any], at: str) -> list[str]:
    """The names of the files a message attached (the export holds none of them)."""
    found = import_tree.a_list(metadata.get("attachments"), f"{at}.metadata.attachments")
    names = []
    for index, item in enumerate(found):
        where = f"{at}.metadata.attachments[{index}]"
        name = label(an_object(item, where).get("name"), f"{where}.name", NAME_CHARS)
        names.append(name or "(a file without a name)")
    return names


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
