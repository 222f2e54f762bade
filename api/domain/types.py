"""Domain objects: plain, immutable values that every layer agrees on.

The store builds them from rows, the context engine reasons about them, the
GraphQL layer turns them into types. None of them knows about a database,
a provider or a schema.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar


class Role(enum.StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    SYSTEM = "SYSTEM"


class MemoryScope(enum.StrEnum):
    LATEST_1 = "LATEST_1"
    LATEST_3 = "LATEST_3"

    @property
    def depth(self) -> int:
        """How many checkpoints of a chain the model sees (N in
        docs/architecture.md#context-modes)."""
        return {MemoryScope.LATEST_1: 1, MemoryScope.LATEST_3: 3}[self]


class ContextMode(enum.StrEnum):
    FRESH = "FRESH"
    HEAD = "HEAD"
    MOUNTED = "MOUNTED"


MAIN_BRANCH = "main"


class SpaceRole(enum.StrEnum):
    """A member's role in a space; each includes what the ones below it may do."""

    OWNER = "OWNER"  # everything: members, rename, delete
    EDITOR = "EDITOR"  # sessions in the space, checkpoints, forks, merges
    VIEWER = "VIEWER"  # reads the lineage; mounts and forks it into their own sessions

    def allows(self, needed: SpaceRole) -> bool:
        return _RANK[self] >= _RANK[needed]


_RANK = {SpaceRole.VIEWER: 0, SpaceRole.EDITOR: 1, SpaceRole.OWNER: 2}


class Visibility(enum.StrEnum):
    PRIVATE = "PRIVATE"  # its author only
    SPACE = "SPACE"  # and the members of its space


class FinishReason(enum.StrEnum):
    """Why a reply ended: what the provider said, or what happened to its stream."""

    STOP = "STOP"  # the model finished its answer
    LENGTH = "LENGTH"  # the token limit for the answer (max_tokens) cut it off
    CONTENT_FILTER = "CONTENT_FILTER"  # the provider's filter stopped it
    TOOL_CALLS = "TOOL_CALLS"  # the model asked to call a tool
    INTERRUPTED = "INTERRUPTED"  # stopped on our side: the user, the client gone, a shutdown
    LOST_CONNECTION = "LOST_CONNECTION"  # the provider's stream broke off mid-answer
    OTHER = "OTHER"  # a reason none of these names (the provider's word is kept beside it)

    @property
    def cut_off(self) -> bool:
        """The reply is incomplete and can be continued: what ``Turn.interrupted`` says."""
        return self in _CUT_OFF


_CUT_OFF = frozenset({FinishReason.LENGTH, FinishReason.INTERRUPTED, FinishReason.LOST_CONNECTION})
# The longest provider word kept for OTHER (the column's size); longer is cut.
PROVIDER_FINISH_REASON_CHARS = 100


@dataclass(frozen=True, slots=True)
class Finish:
    """How a reply ended: the reason, and for OTHER the provider's own word
    (None when it gave none)."""

    reason: FinishReason
    provider_reason: str | None = None

    @classmethod
    def other(cls, word: str | None) -> Finish:
        return cls(FinishReason.OTHER, word[:PROVIDER_FINISH_REASON_CHARS] if word else None)


@dataclass(frozen=True, slots=True)
class Authorship:
    """Who writes a turn or a checkpoint: the user, and the API token's name
    when the request came with one."""

    user_id: int
    token_name: str | None = None


@dataclass(frozen=True, slots=True)
class Member:
    space_id: int
    user_id: int
    user_name: str
    role: SpaceRole
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None


# Attribute → the GraphQL and JSON name (the stored column, the export).
SETTINGS_NAMES = {
    "instructions": "instructions",
    "temperature": "temperature",
    "top_p": "topP",
    "max_output_tokens": "maxOutputTokens",
    "stop": "stop",
}


@dataclass(frozen=True, slots=True)
class ModelParameters:
    """What is sent to the model beside the messages; None: the provider's default."""

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    stop: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Instructions and parameters of a session or a space (api.domain.chat_settings);
    a field that is None is not set."""

    instructions: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    stop: tuple[str, ...] | None = None

    @property
    def parameters(self) -> ModelParameters:
        return ModelParameters(self.temperature, self.top_p, self.max_output_tokens, self.stop)

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    def to_json(self) -> dict[str, Any] | None:
        """The set fields by GraphQL name (the stored form); None when none is set."""
        found = {
            SETTINGS_NAMES[f.name]: list(value) if isinstance(value, tuple) else value
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None
        }
        return found or None

    @classmethod
    def from_json(cls, stored: Mapping[str, Any] | None) -> ChatSettings:
        """From ``to_json``'s form; unknown keys are ignored, None is no settings."""
        if not stored:
            return cls()
        values = {attr: stored.get(name) for attr, name in SETTINGS_NAMES.items()}
        stop = values["stop"]
        values["stop"] = tuple(stop) if stop is not None else None
        return cls(**values)


NO_SETTINGS = ChatSettings()


@dataclass(frozen=True, slots=True)
class Preset:
    """A user's named model + settings (unique name per user)."""

    id: int
    owner_id: int
    name: str
    model: str  # "provider/model"
    settings: ChatSettings
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Space:
    id: int
    name: str
    description: str
    owner_id: int
    created_at: datetime
    updated_at: datetime
    # Defaults for the space's sessions (instructions, parameters).
    settings: ChatSettings = NO_SETTINGS


@dataclass(frozen=True, slots=True)
class Mount:
    checkpoint_id: int
    base_sequence: int


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """Where a conversation branch left its origin: it holds copies of the
    origin's turns 1..after_sequence, then turns of its own."""

    session_id: int
    after_sequence: int


@dataclass(frozen=True, slots=True)
class Session:
    id: int
    title: str
    space_id: int | None
    branch_name: str
    active_provider: str
    active_model: str
    seeded_from_id: int | None
    forked_from_id: int | None
    memory_scope: MemoryScope
    mount: Mount | None
    last_sequence_number: int
    owner_id: int
    created_at: datetime
    updated_at: datetime
    visibility: Visibility = Visibility.PRIVATE
    # When it was pinned / archived (None: it is not).
    pinned_at: datetime | None = None
    archived_at: datetime | None = None
    # The session's own settings; what is not set comes from its space.
    settings: ChatSettings = NO_SETTINGS
    # A conversation branch: where it left its origin (api.domain.branching);
    # its family's first session (None: a session of no branch, or the root).
    branched_from: BranchPoint | None = None
    branch_root_id: int | None = None

    @property
    def family_root_id(self) -> int:
        return self.branch_root_id if self.branch_root_id is not None else self.id


@dataclass(frozen=True, slots=True)
class Turn:
    id: int
    session_id: int
    role: Role
    content: str
    sequence_number: int
    provider: str | None
    model: str | None
    token_count: int
    created_at: datetime
    usage: Usage = field(default_factory=Usage)
    # Incomplete: finish_reason.cut_off for replies saved with a reason; as
    # recorded for older ones (a stream stopped or broken off).
    interrupted: bool = False
    reply_to_sequence: int | None = None
    idempotency_key: str | None = None
    # Null for turns written before authorship was recorded: the session's owner.
    author_id: int | None = None
    author_token: str | None = None
    # Why a reply ended; None for other turns and replies saved before it was
    # recorded (migration 0010). The provider's word only with OTHER.
    finish_reason: FinishReason | None = None
    provider_finish_reason: str | None = None
    # A continuation (continueReply): the sequence number of the cut-off reply
    # it continues; reply_to_sequence stays the user turn both answer.
    continues_sequence: int | None = None
    # A reply: the settings it was asked with (None: none were set, or saved
    # before they were recorded, migration 0014).
    settings: ChatSettings | None = None


@dataclass(frozen=True, slots=True)
class TurnRange:
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class ContentField:
    """One field of a checkpoint's content, as each layer spells it.

    A list field is the unit a checkpoint grows by: its entry here is all the
    code needs (every layer iterates CONTENT_LIST_FIELDS), and a migration adds
    its column. Only ``attr``, ``name``, ``label`` and ``about`` have to be
    written; the rest default from them.
    """

    attr: str  # the CheckpointContent attribute and the database column: "open_questions"
    name: str  # the GraphQL field, the export's and the hash's key: "openQuestions"
    label: str  # a heading for people: "Open questions"
    # What the field holds, said once for the API's and the model's readers.
    about: str = ""
    # How the API's descriptions name the field ("Open tasks"): the label by default.
    phrase: str = ""
    # The heading of its items in a checkpoint shown to the chat model:
    # "" is the label and a colon; None leaves the field out of that prompt.
    prompt: str | None = ""
    # The web form's word for ticking an item off, which leaves it out of the
    # next checkpoint ("Done" for a task); None: its items are not ticked off.
    done: str | None = None

    @property
    def item_attr(self) -> str:
        """Its items with their ids, as an attribute: open_questions → open_question_items."""
        plural = self.attr
        stem = plural[:-3] + "y" if plural.endswith("ies") else plural.removesuffix("s")
        return f"{stem}_items"

    @property
    def item_name(self) -> str:
        """Its items with their ids, in GraphQL: open_questions → openQuestionItems."""
        first, *rest = self.item_attr.split("_")
        return first + "".join(word.title() for word in rest)

    @property
    def member(self) -> str:
        """Its GraphQL enum value (CheckpointListField): open_questions → OPEN_QUESTIONS."""
        return self.attr.upper()

    @property
    def api_phrase(self) -> str:
        return self.phrase or self.label

    @property
    def prompt_heading(self) -> str | None:
        return f"{self.label}:" if self.prompt == "" else self.prompt


# The checkpoint's content fields, written once: the store, the export and
# import, the hash, the prompts, the GraphQL types, the MCP tools and the web UI
# iterate these (tests/test_checkpoint_fields.py checks that every layer holds
# exactly them). Order is display order, and the hash's list order.
CONTENT_TEXT_FIELDS = (
    ContentField("title", "title", "Title", "A one-line name (the seed's message)."),
    ContentField(
        "objective", "objective", "Objective", "What the conversation is trying to achieve."
    ),
    ContentField("summary", "summary", "Summary", "What was understood so far."),
)
CONTENT_LIST_FIELDS = (
    ContentField(
        "decisions",
        "decisions",
        "Decisions",
        "Explicit choices that were made.",
        prompt="Key Decisions:",
    ),
    ContentField(
        "tasks",
        "tasks",
        "Tasks",
        "Open tasks.",
        phrase="Open tasks",
        prompt="Open Tasks:",
        done="Done",
    ),
    ContentField(
        "open_questions",
        "openQuestions",
        "Open questions",
        "Questions still unanswered.",
        prompt="Open Questions:",
        done="Resolved",
    ),
    ContentField(
        "entities", "entities", "Entities", "People, places and things discussed.", prompt=None
    ),
)
CONTENT_FIELDS = (*CONTENT_TEXT_FIELDS, *CONTENT_LIST_FIELDS)


def list_field(attr: str) -> ContentField:
    """The list field with attribute name ``attr`` (KeyError for none)."""
    for f in CONTENT_LIST_FIELDS:
        if f.attr == attr:
            return f
    raise KeyError(attr)


def quoted_names(fields: Iterable[ContentField]) -> str:
    """The fields' GraphQL names as a prompt lists them: '"a", "b" and "c"'."""
    names = [f'"{f.name}"' for f in fields]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


V = TypeVar("V")


class ByListField(Generic[V]):
    """A value holding one ``V`` per list field, read as attributes
    (``content.open_questions``) so that no class spells the list fields out.

    Subclasses are frozen dataclasses with a ``lists`` field: the pairs
    (attribute, value) in CONTENT_LIST_FIELDS order, built by ``gather_lists``.
    """

    __slots__ = ()

    if TYPE_CHECKING:
        lists: tuple[tuple[str, V], ...]

    def __getattr__(self, attr: str) -> V:
        # Only reached when ordinary lookup fails: a list field, or a mistake.
        if attr != "lists" and not attr.startswith("__"):
            for key, value in self.lists:
                if key == attr:
                    return value
        raise AttributeError(f"{type(self).__name__} has no attribute {attr!r}")

    def by_attr(self) -> dict[str, V]:
        return dict(self.lists)


def gather_lists(
    given: Mapping[str, V],
    earlier: tuple[tuple[str, V], ...] | None,
    default: Callable[[], V] | None,
    owner: str,
) -> tuple[tuple[str, V], ...]:
    """The pairs of a ``ByListField``: ``given`` by attribute, over ``earlier``
    (what ``dataclasses.replace`` passes), else ``default()``."""
    attrs = [f.attr for f in CONTENT_LIST_FIELDS]
    unknown = set(given) - set(attrs)
    if unknown:
        raise TypeError(f"{owner} has no list field {sorted(unknown)[0]!r}")
    before = dict(earlier or ())
    pairs: list[tuple[str, V]] = []
    for attr in attrs:
        if attr in given:
            pairs.append((attr, given[attr]))
        elif attr in before:
            pairs.append((attr, before[attr]))
        elif default is not None:
            pairs.append((attr, default()))
        else:
            raise TypeError(f"{owner} needs the list field {attr!r}")
    return tuple(pairs)


@dataclass(frozen=True, slots=True, init=False)
class ItemIds(ByListField[tuple[str, ...]]):
    """Per list field, the identity of each item: the same length and order
    as the field's texts. ``ItemIds(decisions=("…",))``; a field not given
    has none."""

    lists: tuple[tuple[str, tuple[str, ...]], ...]

    def __init__(
        self,
        *,
        lists: Any = None,  # the pairs, as dataclasses.replace passes them back
        **by_attr: Iterable[str],
    ) -> None:
        given = {attr: tuple(ids) for attr, ids in by_attr.items()}
        object.__setattr__(self, "lists", gather_lists(given, lists, tuple, "ItemIds"))

    def by_name(self) -> dict[str, list[str]]:
        """Keyed by GraphQL name (the hash's and the export's ``itemIds``)."""
        return {f.name: list(getattr(self, f.attr)) for f in CONTENT_LIST_FIELDS}

    def columns(self) -> dict[str, list[str]]:
        """Keyed by attribute name (the stored column)."""
        return {f.attr: list(getattr(self, f.attr)) for f in CONTENT_LIST_FIELDS}


@dataclass(frozen=True, slots=True, init=False)
class CheckpointContent(ByListField[tuple[str, ...]]):
    """The part of a checkpoint a user writes (or a draft proposes): the
    text fields as attributes, and each list field (``decisions=("…",)``,
    read as ``content.decisions``) held in ``lists``."""

    title: str
    objective: str
    summary: str
    lists: tuple[tuple[str, tuple[str, ...]], ...]
    # Each list item's identity (``api.domain.identity``), beside the texts;
    # None for a checkpoint saved before items had identities (its ids are
    # implicit, derived from its hash) and for content not yet saved.
    item_ids: ItemIds | None

    def __init__(
        self,
        title: str,
        objective: str = "",
        summary: str = "",
        *,
        item_ids: ItemIds | None = None,
        lists: Any = None,  # the pairs, as dataclasses.replace passes them back
        **by_attr: Iterable[str],
    ) -> None:
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "objective", objective)
        object.__setattr__(self, "summary", summary)
        given = {attr: tuple(items) for attr, items in by_attr.items()}
        object.__setattr__(self, "lists", gather_lists(given, lists, tuple, "CheckpointContent"))
        object.__setattr__(self, "item_ids", item_ids)

    def columns(self) -> dict[str, Any]:
        """Every field by attribute name, lists as lists: a row's columns, a GraphQL
        type's arguments."""
        found: dict[str, Any] = {f.attr: getattr(self, f.attr) for f in CONTENT_TEXT_FIELDS}
        found.update({f.attr: list(getattr(self, f.attr)) for f in CONTENT_LIST_FIELDS})
        return found

    def by_name(self) -> dict[str, Any]:
        """Every field by its GraphQL name, lists as lists (the export, the hash)."""
        columns = self.columns()
        return {f.name: columns[f.attr] for f in CONTENT_FIELDS}

    @classmethod
    def from_columns(cls, values: Mapping[str, Any]) -> CheckpointContent:
        """From values keyed by attribute name (a row, an input); a list field
        that is None or missing is empty, and so is a missing text field."""
        lists = {f.attr: tuple(values.get(f.attr) or ()) for f in CONTENT_LIST_FIELDS}
        return cls(
            values.get("title") or "",
            values.get("objective") or "",
            values.get("summary") or "",
            lists=gather_lists(lists, None, None, cls.__name__),
        )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    id: int
    hash: str
    space_id: int
    parent_id: int | None
    branch_name: str
    content: CheckpointContent
    author_agent: str
    source_session_id: int | None
    source_turn_range: TurnRange | None
    # The source session's lastSequenceNumber when this checkpoint was saved:
    # turns of that session after it are "after the checkpoint" (HEAD mode).
    base_sequence: int
    created_at: datetime
    # The second parent of a merge checkpoint (the checkpoint merged in); None
    # otherwise. `parent_id` stays the line the checkpoint continues.
    merge_parent_id: int | None = None
    # Null for checkpoints saved before authorship was recorded: the space's
    # creator. Not part of the hash.
    author_id: int | None = None
    author_token: str | None = None

    @property
    def short_hash(self) -> str:
        return self.hash[:7]


@dataclass(frozen=True, slots=True)
class LineageEntry:
    """A checkpoint as a drawing of the lineage needs it: its links and its
    title, none of its content."""

    id: int
    hash: str
    title: str
    branch_name: str
    parent_id: int | None
    merge_parent_id: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message as a provider receives it."""

    role: str  # "system" | "user" | "assistant"
    content: str
