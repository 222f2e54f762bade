"""An Open WebUI chat export (Settings → Chats → Export, or a chat's own
Download → Export chat (.json)) as space-less sessions.

The full export is a list of ``{id, user_id, title, chat, created_at,
updated_at (seconds), archived, pinned, meta, folder_id}``; one chat's
export is one such object, or the bare ``chat``. A ``chat`` is ``{title,
models, history: {messages: {id: {id, parentId, childrenIds, role, content,
timestamp (seconds), model, files}}, currentId}, messages: [the current
line], timestamp (milliseconds)}``: regenerating or editing makes siblings,
and ``currentId`` ends the line last shown. A reply's model is the one Open
WebUI names (``openwebui/<model>``); a file a message carried is not in the
export and stays a note (never fetched).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import import_tree
from .export_format import NAME_CHARS, invalid
from .import_tree import Message, Node, a_list, an_object, label, seconds, text
from .types import Role

PROVIDER = "openwebui"
_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


def _is_chat(value: Any) -> bool:
    return isinstance(value, Mapping) and (
        isinstance(value.get("history"), Mapping) or isinstance(value.get("messages"), list)
    )


def is_entry(value: Any) -> bool:
    return isinstance(value, Mapping) and _is_chat(value.get("chat"))


def looks_like_openwebui(document: Any) -> bool:
    """A list of exported chats, one exported chat, or one bare chat."""
    if isinstance(document, list):
        return bool(document) and all(is_entry(entry) for entry in document)
    return is_entry(document) or (
        isinstance(document, Mapping) and "format" not in document and _is_chat(document)
    )


def conversations(
    document: Any,
    *,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> import_tree.Read:
    if isinstance(document, list):
        trees = [entry_tree(c, f"chats[{i}]") for i, c in enumerate(document)]
    elif is_entry(document):
        trees = [entry_tree(document, "chat")]
    else:
        trees = [tree(document, "chat", None, None, None)]
    return import_tree.read(
        trees, source=PROVIDER, provider=provider, model=model, count_tokens=count_tokens
    )


def entry_tree(entry: Any, path: str) -> import_tree.Conversation:
    if not is_entry(entry):
        raise invalid(f"{path}.chat", "a chat with its history")
    return tree(
        entry["chat"],
        f"{path}.chat",
        label(entry.get("title"), f"{path}.title", None),
        seconds(entry.get("created_at"), f"{path}.created_at"),
        seconds(entry.get("updated_at"), f"{path}.updated_at"),
    )


def tree(
    chat: Mapping[str, Any],
    path: str,
    title: str | None,
    created: Any,
    updated: Any,
) -> import_tree.Conversation:
    history = an_object(chat.get("history"), f"{path}.history")
    if isinstance(history.get("messages"), Mapping):
        where = f"{path}.history.messages"
        found = list(history["messages"].items())
        current = history.get("currentId")
        parents = [an_object(m, f"{where}.{key}").get("parentId") for key, m in found]
    else:
        where = f"{path}.messages"
        listed = a_list(chat.get("messages"), where)
        found = [(str(index), m) for index, m in enumerate(listed)]
        current = found[-1][0] if found else None
        parents = [p for _, p in import_tree.chain(key for key, _ in found)]
    nodes = []
    for (key, item), parent in zip(found, parents, strict=True):
        if parent is not None and not isinstance(parent, str):
            raise invalid(f"{where}.{key}.parentId", "a message id")
        nodes.append(
            Node(key, parent, _message(an_object(item, f"{where}.{key}"), f"{where}.{key}"))
        )
    times = [node.message.created_at for node in nodes if node.message and node.message.created_at]
    started = (
        created
        or seconds(chat.get("timestamp"), f"{path}.timestamp", per_second=1000)
        or min(times, default=None)
    )
    if started is None:
        raise invalid(f"{path}.timestamp", "a time in milliseconds from 1970 to 9999")
    name = title or label(chat.get("title"), f"{path}.title", None) or "Open WebUI chat"
    return import_tree.conversation(
        title=name,
        created_at=started,
        updated_at=updated or max(times, default=started),
        nodes=nodes,
        current_id=current if isinstance(current, str) else None,
        where=where,
    )


def _message(message: Mapping[str, Any], at: str) -> Message | None:
    role = _ROLES.get(str(message.get("role")))
    words = (
        text(message.get("content"), f"{at}.content")
        if isinstance(message.get("content"), str)
        else ""
    )
    missing = []
    for index, item in enumerate(a_list(message.get("files"), f"{at}.files")):
        where = f"{at}.files[{index}]"
        file = an_object(item, where)
        inner = an_object(file.get("file"), f"{where}.file")
        name = label(file.get("name"), f"{where}.name", NAME_CHARS) or label(
            inner.get("filename"), f"{where}.file.filename", NAME_CHARS
        )
        missing.append(name or ("(an image)" if file.get("type") == "image" else "(no name)"))
    words = import_tree.with_attachments(words, (), missing)
    when = seconds(message.get("timestamp"), f"{at}.timestamp")
    model = label(message.get("model"), f"{at}.model", NAME_CHARS)
    if role is None or not words.strip():
        return None
    return Message(
        role=role,
        text=words,
        model=model if role is Role.ASSISTANT else None,
        created_at=when,
    )
