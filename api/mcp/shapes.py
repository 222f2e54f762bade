"""What the tools answer about the objects they share (a space, a checkpoint,
a turn, a session and its settings): each as a model, for the output schemas,
and as the JSON the tools put in their answers. Ids are the numbers GraphQL's
global ids stand for (what `smriti verify --space` takes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, create_model
from pydantic.alias_generators import to_camel

from ..domain import identity
from ..domain.types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    ChatSettings,
    Checkpoint,
    FinishReason,
    MemoryScope,
    Session,
    Turn,
)
from ..domain.types import Space as DomainSpace
from .schema import Answer

Id = Annotated[int, Field(ge=1)]
Count = Annotated[int, Field(ge=0)]
Time = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
if TYPE_CHECKING:  # what mypy sees of the types built from the enums below
    Scope = str
    Finish = str
else:
    Scope = Literal[tuple(MemoryScope.__members__)]
    Finish = Literal[tuple(FinishReason.__members__)]


class Space(Answer):
    id: Id
    name: str
    description: str
    updated_at: Time


def space_json(space: DomainSpace) -> dict[str, Any]:
    return {
        "id": space.id,
        "name": space.name,
        "description": space.description,
        "updatedAt": space.updated_at.isoformat(),
    }


# --- checkpoints -------------------------------------------------------------

# A list field's attribute → the key of its items with their ids (decisions →
# decisionItems), as GraphQL's Checkpoint and createCheckpoint's input name them.
ITEMS_KEYS = {f.attr: f.item_name for f in CONTENT_LIST_FIELDS}


class Item(Answer):
    """A list's item with its id (GraphQL's CheckpointItem)."""

    id: str
    text: str


def _content_fields() -> dict[str, Any]:
    """The checkpoint's content, from the registry: each text and each list
    under its name, and each list's items under its `…Items` key."""
    found: dict[str, Any] = {
        f.attr: (list[str] if f in CONTENT_LIST_FIELDS else str, Field(alias=f.name))
        for f in CONTENT_FIELDS
    }
    for f in CONTENT_LIST_FIELDS:
        found[f"{f.attr}_items"] = (list[Item], Field(alias=ITEMS_KEYS[f.attr]))
    return found


if TYPE_CHECKING:  # what mypy sees of the models built from the registry below
    CheckpointContent = Answer
    CheckpointJson = Answer
else:
    CheckpointContent = create_model(
        "CheckpointContent",
        __base__=Answer,
        **{attr: spec for attr, spec in _content_fields().items() if not attr.endswith("_items")},
    )
    CheckpointJson = create_model(
        "Checkpoint",
        __base__=Answer,
        id=(Id, ...),
        hash=(str, ...),
        space_id=(Id, ...),
        parent_id=(Id | None, ...),
        merge_parent_id=(Id | None, ...),
        branch_name=(str, ...),
        **_content_fields(),
        author_agent=(str, ...),
        created_at=(Time, ...),
    )


def checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    """The checkpoint's fields; each list twice: its texts (as before items had ids)
    and `…Items`, the same items in the same order with their ids."""
    ids = identity.item_ids(checkpoint)
    return {
        "id": checkpoint.id,
        "hash": checkpoint.hash,
        "spaceId": checkpoint.space_id,
        "parentId": checkpoint.parent_id,
        "mergeParentId": checkpoint.merge_parent_id,
        "branchName": checkpoint.branch_name,
        **checkpoint.content.by_name(),
        **{
            key: [{"id": i, "text": t} for i, t in identity.items(checkpoint.content, ids, attr)]
            for attr, key in ITEMS_KEYS.items()
        },
        "authorAgent": checkpoint.author_agent,
        "createdAt": checkpoint.created_at.isoformat(),
    }


def checkpoint_text(checkpoint: Checkpoint) -> str:
    content = checkpoint.content
    lines = [
        f"# {content.title}",
        f"checkpoint {checkpoint.id} · {checkpoint.hash[:12]} · "
        f"branch {checkpoint.branch_name} · {checkpoint.created_at:%Y-%m-%d %H:%M}",
    ]
    if content.objective:
        lines += ["", f"Objective: {content.objective}"]
    if content.summary:
        lines += ["", content.summary]
    # The lists the chat model is shown (the registry leaves entities out), as people name them.
    for f in CONTENT_LIST_FIELDS:
        items = getattr(content, f.attr)
        if f.prompt is not None and items:
            lines += ["", f"{f.label}:", *(f"- {item}" for item in items)]
    return "\n".join(lines)


def checkpoint_line(checkpoint: Checkpoint) -> str:
    where = f"{checkpoint.id} {checkpoint.hash[:12]} [{checkpoint.branch_name}]"
    return f"{where} {checkpoint.content.title}"


# --- turns and sessions ------------------------------------------------------


class TurnJson(Answer):
    id: Id
    session_id: Id
    sequence_number: Id
    role: Literal["USER", "ASSISTANT", "SYSTEM"]
    content: str
    model: str | None
    finish_reason: Finish | None
    created_at: Time


def turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.id,
        "sessionId": turn.session_id,
        "sequenceNumber": turn.sequence_number,
        "role": turn.role.value,
        "content": turn.content,
        "model": f"{turn.provider}/{turn.model}" if turn.provider else turn.model,
        "finishReason": turn.finish_reason.value if turn.finish_reason else None,
        "createdAt": turn.created_at.isoformat(),
    }


class SessionJson(Answer):
    session_id: Id
    space_id: Id | None
    branch_name: str
    title: str
    model: str
    memory_scope: Scope


def session_json(session: Session) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "spaceId": session.space_id,
        "branchName": session.branch_name,
        "title": session.title,
        "model": f"{session.active_provider}/{session.active_model}",
        "memoryScope": session.memory_scope.value,
    }


class Settings(Answer):
    """A session's own instructions and parameters (GraphQL's ChatSettings);
    null: not set."""

    instructions: str | None
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    stop: list[str] | None


def settings_json(settings: ChatSettings) -> dict[str, Any]:
    return {
        to_camel(attr): list(value)
        if isinstance(value := getattr(settings, attr), tuple)
        else value
        for attr in Settings.model_fields
    }


class BranchPoint(Answer):
    session_id: Id
    after_sequence: Count


class BranchedSession(SessionJson):
    """A session with its own settings and where it left its origin (null:
    not a conversation branch)."""

    settings: Settings
    branched_from: BranchPoint | None


def branched_json(session: Session) -> dict[str, Any]:
    point = session.branched_from
    return {
        **session_json(session),
        "settings": settings_json(session.settings),
        "branchedFrom": {"sessionId": point.session_id, "afterSequence": point.after_sequence}
        if point
        else None,
    }


class Exchange(Answer):
    """A message sent and its reply (null when the model answered nothing)."""

    user_turn: TurnJson
    reply: TurnJson | None
    finish_reason: Finish | None


def exchange_json(user_turn: dict[str, Any], reply: Turn | None) -> dict[str, Any]:
    return {
        "userTurn": user_turn,
        "reply": turn_json(reply) if reply else None,
        "finishReason": reply.finish_reason.value if reply and reply.finish_reason else None,
    }
