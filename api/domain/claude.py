"""A Claude data export's ``conversations.json`` (claude.ai: Settings →
Privacy → Export data) as space-less sessions.

A list of conversations ``{uuid, name, created_at, updated_at,
chat_messages}``; each message ``{uuid, sender: "human" | "assistant",
text, content: [{type: "text", text} | {type: "tool_use"} | …],
created_at, attachments: [{file_name, extracted_content}], files:
[{file_name}], parent_message_uuid}`` with ISO 8601 times. Newer exports
link each message to its parent (the first ones to a sentinel), so edits
and retries make a tree; older ones are one flat list in order. The export
does not say which branch was shown last (the web app's
``current_leaf_message_uuid`` is used when present): the leaf written last
is taken. It names no model either: replies show as from "claude".

An attachment's extracted text is what the model read, so it stays in the
user's turn, fenced under its name; a file the export does not hold is a
note. Nothing is ever fetched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from . import import_tree
from .export_format import NAME_CHARS, invalid
from .import_tree import Message, Node, a_list, an_object, iso_time, label, text
from .types import Role

PROVIDER = "claude"
ROOT = "00000000-0000-4000-8000-000000000000"  # the parent of a first message
_SENDERS = {"human": Role.USER, "assistant": Role.ASSISTANT}


def looks_like_claude(document: Any) -> bool:
    """A Claude export is a list of conversations, each with ``chat_messages``."""
    return isinstance(document, list) and bool(document) and all(map(is_conversation, document))


def is_conversation(value: Any) -> bool:
    """One conversation of a Claude export (an object with ``chat_messages``)."""
    return isinstance(value, Mapping) and "chat_messages" in value


def conversations(
    document: Any,
    *,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> import_tree.Read:
    if not isinstance(document, list):
        raise invalid("conversations", "a list of conversations")
    trees = [tree(c, f"conversations[{i}]") for i, c in enumerate(document)]
    return import_tree.read(
        trees, source=PROVIDER, provider=provider, model=model, count_tokens=count_tokens
    )


def tree(conversation: Any, path: str) -> import_tree.Conversation:
    if not isinstance(conversation, Mapping) or not isinstance(
        conversation.get("chat_messages"), list
    ):
        raise invalid(f"{path}.chat_messages", "a list of messages")
    started = iso_time(conversation.get("created_at"), f"{path}.created_at")
    if started is None:
        raise invalid(f"{path}.created_at", "an ISO 8601 time from 1970 to 9999")
    updated = iso_time(conversation.get("updated_at"), f"{path}.updated_at") or started
    found: list[tuple[str, Any, Message | None, datetime | None]] = []
    for index, item in enumerate(conversation["chat_messages"]):
        at = f"{path}.chat_messages[{index}]"
        message = an_object(item, at)
        uuid = label(message.get("uuid"), f"{at}.uuid", NAME_CHARS)
        if uuid is None:
            raise invalid(f"{at}.uuid", "a string")
        when = iso_time(message.get("created_at"), f"{at}.created_at")
        found.append((uuid, message.get("parent_message_uuid"), _message(message, at), when))
    if any(parent is not None for _, parent, _, _ in found):
        links = []
        for index, (uuid, parent, _, _) in enumerate(found):
            if parent is not None and not isinstance(parent, str):
                raise invalid(f"{path}.chat_messages[{index}].parent_message_uuid", "a string")
            links.append((uuid, None if parent in (None, ROOT) else parent))
    else:
        links = import_tree.chain(uuid for uuid, _, _, _ in found)
    nodes = [
        Node(uuid, parent, kept)
        for (uuid, parent), (_, _, kept, _) in zip(links, found, strict=True)
    ]
    times = {uuid: when for uuid, _, _, when in found}
    current = label(
        conversation.get("current_leaf_message_uuid"),
        f"{path}.current_leaf_message_uuid",
        NAME_CHARS,
    ) or import_tree.newest_leaf(nodes, lambda node: times[node.id])
    title = label(conversation.get("name"), f"{path}.name", None) or "Claude conversation"
    return import_tree.conversation(
        title=title,
        created_at=started,
        updated_at=updated,
        nodes=nodes,
        current_id=current,
        where=f"{path}.chat_messages",
    )


def _message(message: Mapping[str, Any], at: str) -> Message | None:
    role = _SENDERS.get(str(message.get("sender")))
    words = _words(message, at)
    included: list[tuple[str, str]] = []
    missing: list[str] = []
    for index, item in enumerate(a_list(message.get("attachments"), f"{at}.attachments")):
        where = f"{at}.attachments[{index}]"
        attachment = an_object(item, where)
        name = label(attachment.get("file_name"), f"{where}.file_name", NAME_CHARS) or "(no name)"
        content = text(attachment.get("extracted_content"), f"{where}.extracted_content")
        if content.strip():
            included.append((name, content))
        else:
            missing.append(name)
    for index, item in enumerate(a_list(message.get("files"), f"{at}.files")):
        where = f"{at}.files[{index}]"
        file = an_object(item, where)
        missing.append(
            label(file.get("file_name"), f"{where}.file_name", NAME_CHARS) or "(no name)"
        )
    words = import_tree.with_attachments(words, included, missing)
    if role is None or not words.strip():
        return None
    return Message(
        role=role,
        text=words,
        model=None,
        created_at=iso_time(message.get("created_at"), f"{at}.created_at"),
    )


def _words(message: Mapping[str, Any], at: str) -> str:
    """The text blocks of ``content`` (tool calls, thinking and the like are
    not part of the conversation's text); ``text`` when there are none."""
    blocks = a_list(message.get("content"), f"{at}.content")
    parts = []
    for index, item in enumerate(blocks):
        block = an_object(item, f"{at}.content[{index}]")
        if block.get("type") == "text":
            parts.append(text(block.get("text"), f"{at}.content[{index}].text"))
    joined = "\n\n".join(p for p in parts if p)
    return joined or text(message.get("text"), f"{at}.text")
