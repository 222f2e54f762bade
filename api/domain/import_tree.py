"""Another app's conversation as a tree of messages, and the session it becomes.

ChatGPT, Claude and Open WebUI all keep a conversation as a tree: editing a
message or asking for another answer adds a sibling, and the app shows one
line from the root to a leaf (the one last visited). Each format's reader
(``chatgpt``, ``claude``, ``openwebui``) turns its file into ``Node``s —
``message=None`` for what is not imported (system and tool messages, hidden
or empty ones) — and ``conversation`` links them into a ``Conversation`` of
the messages kept, each hanging from its nearest kept ancestor.

``current_line`` is what becomes the session's turns (``session``);
``lines`` gives every root-to-leaf path with the position where it leaves
the current line; ``branches`` makes each other line a conversation branch
of the session (issue 21), so an import keeps every branch as alternatives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .export_format import EARLIEST, LATEST, Export, SessionExport, invalid
from .types import MAIN_BRANCH, MemoryScope, Role, Session, Turn
from .validation import TITLE_MAX_CHARS, is_text


@dataclass(frozen=True, slots=True)
class Message:
    role: Role  # USER or ASSISTANT: nothing else is imported
    text: str  # with its attachment notes (``attachment_note``), never empty
    model: str | None  # the app's name for the model that wrote a reply
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class Node:
    """One message of a file as its reader found it."""

    id: str
    parent_id: str | None
    message: Message | None  # None: a message that is not imported


@dataclass(frozen=True, slots=True)
class Kept:
    """A message of the tree, hanging from its nearest kept ancestor."""

    id: str
    parent_id: str | None
    message: Message


@dataclass(frozen=True, slots=True)
class Conversation:
    """What one conversation of a file says, read and checked."""

    title: str
    created_at: datetime
    updated_at: datetime
    messages: tuple[Kept, ...]  # in the file's order
    current_id: str | None  # the kept message ending the line last shown


@dataclass(frozen=True, slots=True)
class Line:
    """A path from a root to a leaf (message ids), and where it leaves the
    current line: the index of its first message that is not on it (the
    length of the prefix the two share)."""

    ids: tuple[str, ...]
    leaves_at: int


def conversation(
    *,
    title: str,
    created_at: datetime,
    updated_at: datetime,
    nodes: Sequence[Node],
    current_id: str | None,
    where: str,
) -> Conversation:
    """Link ``nodes`` into a tree of the messages kept. A parent that is not
    in the file, a loop, or a current id that is not a node is INVALID at
    ``where`` (the field holding the messages)."""
    by_id = {node.id: node for node in nodes}

    def kept_ancestor(node_id: str | None) -> str | None:
        seen: set[str] = set()
        while node_id is not None:
            node = by_id.get(node_id)
            if node is None or node_id in seen:
                raise invalid(where, f"a tree holding node {node_id!r}")
            seen.add(node_id)
            if node.message is not None:
                return node_id
            node_id = node.parent_id
        return None

    messages = tuple(
        Kept(node.id, kept_ancestor(node.parent_id), node.message)
        for node in nodes
        if node.message is not None
    )
    # Every message must reach a root: a loop of kept messages is no tree.
    parents = {kept.id: kept.parent_id for kept in messages}
    rooted: set[str] = set()
    for kept in messages:
        walked: set[str] = set()
        up: str | None = kept.id
        while up is not None and up not in rooted:
            if up in walked:
                raise invalid(where, f"a tree holding node {up!r}")
            walked.add(up)
            up = parents[up]
        rooted.update(walked)
    return Conversation(
        title=title,
        created_at=created_at,
        updated_at=updated_at,
        messages=messages,
        current_id=kept_ancestor(current_id),
    )


def newest_leaf(nodes: Sequence[Node], created: Callable[[Node], datetime | None]) -> str | None:
    """For a file that does not say which line was shown: the leaf written
    last (the last one in the file among equals)."""
    parents = {node.parent_id for node in nodes}
    best: tuple[datetime, int] | None = None
    found: str | None = None
    for index, node in enumerate(nodes):
        when = created(node)
        if node.id in parents or when is None:
            continue
        if best is None or (when, index) >= best:
            best, found = (when, index), node.id
    if found is None and nodes:
        return nodes[-1].id
    return found


def chain(ids: Iterable[str]) -> list[tuple[str, str | None]]:
    """A flat list (an older export without parent links): each message's
    parent is the one before it."""
    linked: list[tuple[str, str | None]] = []
    previous: str | None = None
    for one in ids:
        linked.append((one, previous))
        previous = one
    return linked


def current_line(tree: Conversation) -> tuple[Kept, ...]:
    """The kept messages from the root down to the current one."""
    by_id = {kept.id: kept for kept in tree.messages}
    line: list[Kept] = []
    node_id = tree.current_id
    while node_id is not None:
        kept = by_id[node_id]
        line.append(kept)
        node_id = kept.parent_id
    return tuple(line[::-1])


def lines(tree: Conversation) -> tuple[Line, ...]:
    """Every path from a root to a leaf, in the file's order, each with the
    position where it leaves the current line (its length when it is the
    current line itself)."""
    children: dict[str | None, list[str]] = {}
    parents: dict[str, str | None] = {}
    for kept in tree.messages:
        children.setdefault(kept.parent_id, []).append(kept.id)
        parents[kept.id] = kept.parent_id
    current = tuple(kept.id for kept in current_line(tree))
    found: list[Line] = []
    # The leaves depth first, without recursion (a conversation may be
    # thousands deep), then each one's path up: work in the size of the answer.
    stack = list(reversed(children.get(None, [])))
    while stack:
        node_id = stack.pop()
        below = children.get(node_id)
        if below:
            stack.extend(reversed(below))
            continue
        path: list[str] = []
        up: str | None = node_id
        while up is not None:
            path.append(up)
            up = parents[up]
        path.reverse()
        shared = 0
        while shared < min(len(path), len(current)) and path[shared] == current[shared]:
            shared += 1
        found.append(Line(ids=tuple(path), leaves_at=shared))
    return tuple(found)


def other_lines(tree: Conversation) -> tuple[Line, ...]:
    """The lines that are not the current one (the branches an import of
    the current line leaves out)."""
    current = tuple(kept.id for kept in current_line(tree))
    return tuple(line for line in lines(tree) if line.ids != current)


def count_other_lines(tree: Conversation) -> int:
    """``len(other_lines(tree))`` in time linear in the messages (the lines
    themselves may hold quadratically many: a long spine, a leaf off each
    message): one line per leaf, less the current line when it ends at one."""
    has_children = {kept.parent_id for kept in tree.messages}
    leaves = sum(1 for kept in tree.messages if kept.id not in has_children)
    current_is_leaf = tree.current_id is not None and tree.current_id not in has_children
    return leaves - (1 if current_is_leaf else 0)


def _turns(
    line: Sequence[Kept],
    *,
    default_time: datetime,
    source: str,
    count_tokens: Callable[[str], int],
    start: int = 0,
) -> tuple[Turn, ...]:
    """The turns at positions ``start + 1``.. of a line of kept messages
    (each reply answering the last user message before it on the line)."""
    turns: list[Turn] = []
    last_user: int | None = None
    for index, kept in enumerate(line):
        message = kept.message
        sequence = index + 1
        reply = message.role is Role.ASSISTANT
        if sequence > start:
            turns.append(
                Turn(
                    id=sequence,
                    session_id=0,
                    role=message.role,
                    content=message.text,
                    sequence_number=sequence,
                    provider=source if reply else None,
                    model=message.model if reply else None,
                    token_count=count_tokens(message.text),
                    created_at=message.created_at or default_time,
                    reply_to_sequence=last_user if reply else None,
                )
            )
        if not reply:
            last_user = sequence
    return tuple(turns)


def session(
    tree: Conversation,
    *,
    source: str,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> SessionExport:
    """The current line as a session in no space: user and assistant turns
    keeping each message's time (the conversation's start when it has none);
    a reply's provider is ``source`` (the app it came from) and its model the
    one that app named. ``provider``/``model``: what it goes on talking to."""
    turns = _turns(
        current_line(tree),
        default_time=tree.created_at,
        source=source,
        count_tokens=count_tokens,
    )
    return SessionExport(
        session=Session(
            id=0,
            title=tree.title[:TITLE_MAX_CHARS],
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
            created_at=tree.created_at,
            updated_at=tree.updated_at,
        ),
        turns=turns,
    )


@dataclass(frozen=True, slots=True)
class BranchImport:
    """Another line of a conversation, to import as a conversation branch:
    of the session ``origin`` (0: the current line's; i: the i-th branch of
    the same list, from 1), after its turn ``after``, then its own ``turns``
    (positions after + 1..)."""

    origin: int
    after: int
    turns: tuple[Turn, ...]
    created_at: datetime
    updated_at: datetime


def branches(
    tree: Conversation, *, source: str, count_tokens: Callable[[str], int]
) -> tuple[BranchImport, ...]:
    """Every line but the current one, as branches, in the file's order.
    Each is branched from the line already imported that it shares the
    longest prefix with, after that
    prefix: then each message is the own turn of exactly one session (the
    first line holding it), and the alternatives at a position are exactly
    the sibling messages there. A branch starts when its first own message
    was written (the conversation's start when it has none) and was last
    updated with its last one, neither after the conversation was: the sidebar
    shows a family as its member updated last, which is to be the line the
    app showed."""
    by_id = {kept.id: kept for kept in tree.messages}
    current = tuple(kept.id for kept in current_line(tree))
    # Each message imported so far -> (its session: 0 the current line, i
    # the i-th branch). The session of a line's deepest message already
    # imported is the one it shares the longest prefix with.
    owner: dict[str, int] = dict.fromkeys(current, 0)
    last = max(tree.updated_at, tree.created_at)
    found: list[BranchImport] = []
    for line in lines(tree):
        if line.ids == current:
            continue
        shared = 0
        while shared < len(line.ids) and line.ids[shared] in owner:
            shared += 1
        if shared == len(line.ids):
            continue  # wholly imported already (a prefix of the current line)
        origin = owner[line.ids[shared - 1]] if shared else 0
        number = len(found) + 1
        owner.update(dict.fromkeys(line.ids[shared:], number))
        kept = [by_id[one] for one in line.ids]
        turns = _turns(
            kept,
            default_time=tree.created_at,
            source=source,
            count_tokens=count_tokens,
            start=shared,
        )
        found.append(
            BranchImport(
                origin=origin,
                after=shared,
                turns=turns,
                created_at=min(turns[0].created_at, last),
                updated_at=min(max(turns[-1].created_at, turns[0].created_at), last),
            )
        )
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Read:
    """A file of another app, read: the sessions to import, and for each (in
    the same order) the other lines of its conversation, to import as its
    branches."""

    source: str
    export: Export
    branches: tuple[tuple[BranchImport, ...], ...]


def read(
    trees: Sequence[Conversation],
    *,
    source: str,
    provider: str,
    model: str,
    count_tokens: Callable[[str], int],
) -> Read:
    sessions = tuple(
        session(tree, source=source, provider=provider, model=model, count_tokens=count_tokens)
        for tree in trees
    )
    return Read(
        source=source,
        export=Export(spaces=(), sessions=sessions),
        branches=tuple(branches(tree, source=source, count_tokens=count_tokens) for tree in trees),
    )


def fence(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def with_attachments(text: str, included: Sequence[tuple[str, str]], missing: Sequence[str]) -> str:
    """A user message's text with what it carried, marked as such: each
    attachment whose text the export holds (what the model read), in a fence
    under its name; each one the export does not hold, as a note. Nothing is
    ever fetched."""
    parts = [text] if text.strip() else []
    for name, content in included:
        mark = fence(content)
        parts.append(
            f"[attachment {name}, its text as the export holds it]\n{mark}\n{content}\n{mark}"
        )
    parts.extend(f"[attachment {name} not included in the export]" for name in missing)
    return "\n\n".join(parts)


# --- reading a field of another app's file ----------------------------------

_LAST_SECOND = LATEST.replace(microsecond=0).timestamp()


def an_object(value: Any, path: str) -> Mapping[str, Any]:
    """An optional object of the file: {} when absent."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid(path, "an object")
    return value


def a_list(value: Any, path: str) -> list[Any]:
    """An optional list of the file: [] when absent."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid(path, "a list")
    return value


def label(value: Any, path: str, max_chars: int | None) -> str | None:
    """An optional one-line string (a title, a model's or a file's name)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not is_text(value):
        raise invalid(path, "a string")
    if max_chars is not None and len(value) > max_chars:
        raise invalid(path, f"at most {max_chars} characters")
    return value


def text(value: Any, path: str) -> str:
    """An optional text ("" when absent)."""
    if value is None:
        return ""
    if not isinstance(value, str) or not is_text(value):
        raise invalid(path, "text (no NUL, no lone surrogate)")
    return value


def seconds(value: Any, path: str, *, per_second: int = 1) -> datetime | None:
    """An optional time in seconds from 1970 (``per_second=1000``: in milliseconds)."""
    if value is None:
        return None
    unit = "milliseconds" if per_second == 1000 else "seconds"
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        # NaN fails both comparisons; Infinity and 1e20 fail the second.
        or not 0 <= value / per_second <= _LAST_SECOND
    ):
        raise invalid(path, f"a time in {unit} from 1970 to 9999")
    return datetime.fromtimestamp(value / per_second, UTC)


def iso_time(value: Any, path: str) -> datetime | None:
    """An optional ISO 8601 time ("2024-05-01T12:00:00.000000Z"; UTC when it
    names no zone)."""
    if value is None:
        return None
    expected = "an ISO 8601 time from 1970 to 9999"
    if not isinstance(value, str) or len(value) > 64:
        raise invalid(path, expected)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(path, expected) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    if not EARLIEST <= moment <= LATEST:
        raise invalid(path, expected)
    return moment
