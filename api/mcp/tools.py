"""The reading tools: a JSON schema, a description for a model, and a use case.

Each tool takes the actor first and calls api/services, never the store; it
answers a JSON object (the structured result) and a short text rendering of
it. Ids are the numbers GraphQL's global ids stand for (what `smriti verify
--space` takes). A mistake raises the typed errors of api/errors.py, which the
server turns into tool errors with GraphQL's codes and words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..domain import identity
from ..domain.accounts import Actor
from ..domain.brief import render_state
from ..domain.pages import PageRequest
from ..domain.search_query import Kind
from ..domain.types import CONTENT_LIST_FIELDS, MAIN_BRANCH, Checkpoint, Session, Space, Turn
from ..errors import InputError, NotFound, SmritiError
from ..services import checkpoints, reading, state, transfer
from ..services import search as search_service
from ..services.base import Services

MAX_PAGE = 100

Result = tuple[dict[str, Any], str]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Callable[[Services, Actor, Mapping[str, Any]], Awaitable[Result]]
    writes: bool = False  # refused for a read-only token, as GraphQL's mutations are


class ToolFailure(Exception):
    """A typed error after something was written: the tool error carries
    ``done`` beside GraphQL's code and words (send_message's kept user turn)."""

    def __init__(self, error: SmritiError, done: dict[str, Any]) -> None:
        super().__init__(error.message)
        self.error = error
        self.done = done


# --- arguments ---------------------------------------------------------------


def _id(args: Mapping[str, Any], name: str, *, required: bool = True) -> int | None:
    value = args.get(name)
    if value is None:
        if required:
            raise InputError(f"`{name}` is required.", field=name)
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"`{name}` is a positive whole number.", field=name)
    return value


def _text(args: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise InputError(f"`{name}` is a string.", field=name)
    return value


def _count(args: Mapping[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE:
        raise InputError(f"`{name}` is a whole number from 1 to {MAX_PAGE}.", field=name)
    return value


def _no_others(args: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise InputError(f"Unknown argument `{unknown[0]}`.", field=unknown[0])


# --- results -----------------------------------------------------------------


def space_json(space: Space) -> dict[str, Any]:
    return {
        "id": space.id,
        "name": space.name,
        "description": space.description,
        "updatedAt": space.updated_at.isoformat(),
    }


# A list field's attribute → the key of its items with their ids (decisions →
# decisionItems), as GraphQL's Checkpoint and createCheckpoint's input name them.
_ITEMS_KEYS = {
    "decisions": "decisionItems",
    "tasks": "taskItems",
    "open_questions": "openQuestionItems",
    "entities": "entityItems",
}


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
            for attr, key in _ITEMS_KEYS.items()
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
    for heading, items in (
        ("Decisions", content.decisions),
        ("Tasks", content.tasks),
        ("Open questions", content.open_questions),
    ):
        if items:
            lines += ["", f"{heading}:", *(f"- {item}" for item in items)]
    return "\n".join(lines)


def _line(checkpoint: Checkpoint) -> str:
    where = f"{checkpoint.id} {checkpoint.hash[:12]} [{checkpoint.branch_name}]"
    return f"{where} {checkpoint.content.title}"


_ID = {"type": "integer", "minimum": 1}
_STRINGS = {"type": "array", "items": {"type": "string"}}
# A list's items with their ids (GraphQL's CheckpointItem).
_ITEMS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
        "required": ["id", "text"],
    },
}
_CHECKPOINT = {
    "type": "object",
    "properties": {
        "id": _ID,
        "hash": {"type": "string"},
        "spaceId": _ID,
        "parentId": {"type": ["integer", "null"]},
        "mergeParentId": {"type": ["integer", "null"]},
        "branchName": {"type": "string"},
        "title": {"type": "string"},
        "objective": {"type": "string"},
        "summary": {"type": "string"},
        "decisions": _STRINGS,
        "tasks": _STRINGS,
        "openQuestions": _STRINGS,
        "entities": _STRINGS,
        **{key: _ITEMS for key in _ITEMS_KEYS.values()},
        "authorAgent": {"type": "string"},
        "createdAt": {"type": "string", "format": "date-time"},
    },
    "required": ["id", "hash", "spaceId", "branchName", "title", "createdAt"],
}


_COMPARED = {
    "type": "object",
    "properties": {"onlyA": _STRINGS, "onlyB": _STRINGS, "shared": _STRINGS},
    "required": ["onlyA", "onlyB", "shared"],
}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


# --- the tools ---------------------------------------------------------------


async def list_spaces(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"first"})
    page = await reading.spaces_page(actor, PageRequest(first=_count(args, "first", 50)))
    spaces = [space_json(space) for space in page.items]
    text = "\n".join(f"{s['id']} {s['name']}" for s in spaces) or "No spaces."
    return {"spaces": spaces, "hasMore": page.has_next}, text


def _since(args: Mapping[str, Any]) -> int | datetime | None:
    value = args.get("since")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return at if at.tzinfo else at.replace(tzinfo=UTC)
    raise InputError("`since` is a checkpoint id or an ISO 8601 time.", field="since")


async def space_state(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId", "branch", "since"})
    space_id = _id(args, "spaceId")
    assert space_id is not None
    found = await state.space_state(
        actor, space_id, branch=_text(args, "branch", MAIN_BRANCH), since=_since(args)
    )
    brief = render_state(found)
    answer = {
        "brief": brief,
        "tokens": services.registry.count_tokens(brief),
        "headId": found.head.id if found.head else None,
        "branches": [{"name": name, "headId": tip.id} for name, tip in found.branches],
        "changedIds": [c.id for c in found.changed],
    }
    return answer, brief


_KINDS = {kind.name.lower(): kind for kind in Kind}


def _kinds(args: Mapping[str, Any]) -> list[Kind] | None:
    value = args.get("kinds")
    if value is None:
        return None
    if not isinstance(value, list) or not value or any(one not in _KINDS for one in value):
        raise InputError(f"`kinds` is a list of {', '.join(_KINDS)}.", field="kinds")
    return [_KINDS[one] for one in value]


async def search(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"query", "spaceId", "kinds", "first"})
    hits = await search_service.search(
        actor,
        _text(args, "query", ""),
        space_id=_id(args, "spaceId", required=False),
        kinds=_kinds(args),
        first=_count(args, "first", 10),
        offset=0,
    )
    found = [
        {
            "kind": hit.kind.name.lower(),
            "id": hit.found.id,
            **_follow(hit.found),
            "snippet": hit.snippet.text,
        }
        for hit in hits.hits
    ]
    text = "\n".join(f"{h['kind']} {h['id']}: {h['snippet']}" for h in found) or "No matches."
    return {"hits": found, "hasMore": hits.has_next}, text


def _follow(found: Turn | Checkpoint | Session | Space) -> dict[str, Any]:
    """What an agent needs to follow a hit with the other tools."""
    if isinstance(found, Turn):
        return {"sessionId": found.session_id, "sequenceNumber": found.sequence_number}
    if isinstance(found, Checkpoint):
        return {"checkpointId": found.id, "spaceId": found.space_id}
    if isinstance(found, Session):
        return {"sessionId": found.id, "spaceId": found.space_id}
    return {"spaceId": found.id}


async def show_checkpoint(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"checkpointId", "spaceId", "hash"})
    checkpoint_id = _id(args, "checkpointId", required=False)
    if checkpoint_id is not None:
        found = await checkpoints.get_readable(actor, checkpoint_id)
    else:
        space_id = _id(args, "spaceId", required=False)
        if space_id is None or "hash" not in args:
            raise InputError("Give `checkpointId`, or `spaceId` and `hash`.", field="checkpointId")
        by_hash = await checkpoints.by_hash(actor, space_id, _text(args, "hash"))
        if by_hash is None:
            raise NotFound("No such checkpoint.", field="hash")
        found = by_hash
    return {"checkpoint": checkpoint_json(found)}, checkpoint_text(found)


async def list_checkpoints(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId", "branch", "first"})
    space_id = _id(args, "spaceId")
    assert space_id is not None
    branch = _text(args, "branch", MAIN_BRANCH)
    first = _count(args, "first", 20)
    spaces = await reading.spaces_by_id(actor, [space_id])
    if space_id not in spaces:
        raise NotFound("No such space.", field="spaceId")
    heads = dict((await reading.branches(actor, [space_id])).get(space_id, []))
    if branch not in heads:
        raise NotFound(f'No branch "{branch[:100]}" in this space.', field="branch")
    head = (await reading.checkpoints_by_id(actor, [heads[branch]]))[heads[branch]]
    line = [head, *await reading.ancestors(actor, head, first - 1)]
    text = "\n".join(_line(c) for c in line)
    return {"branch": branch, "checkpoints": [checkpoint_json(c) for c in line]}, text


async def compare_checkpoints(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"a", "b"})
    a_id, b_id = _id(args, "a"), _id(args, "b")
    assert a_id is not None and b_id is not None
    found = await checkpoints.compare(actor, a_id, b_id)
    ancestor = found.common_ancestor
    answer: dict[str, Any] = {
        "a": checkpoint_json(found.a),
        "b": checkpoint_json(found.b),
        **{
            f.name: {
                "onlyA": list(getattr(found, f.attr).only_a),
                "onlyB": list(getattr(found, f.attr).only_b),
                "shared": list(getattr(found, f.attr).shared),
            }
            for f in CONTENT_LIST_FIELDS
        },
        "commonAncestor": checkpoint_json(ancestor) if ancestor else None,
    }
    lines = [f"a: {_line(found.a)}", f"b: {_line(found.b)}"]
    lines.append(f"common ancestor: {_line(ancestor)}" if ancestor else "no common ancestor")
    for f in CONTENT_LIST_FIELDS:
        compared = getattr(found, f.attr)
        for sign, items in (("-", compared.only_a), ("+", compared.only_b)):
            lines += [f"{f.label} {sign} {item}" for item in items]
    return answer, "\n".join(lines)


async def verify_lineage(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId"})
    space_id = _id(args, "spaceId")
    assert space_id is not None
    result = await transfer.verify(actor, space_id)
    broken = result.broken
    answer = {
        "ok": result.ok,
        "checked": result.checked,
        "firstBroken": {
            "checkpointId": broken.checkpoint.id,
            "reason": broken.reason.value,
            "expectedHash": broken.expected_hash,
        }
        if broken
        else None,
    }
    if broken is None:
        return answer, f"ok: {result.checked} checkpoints verify."
    return answer, (
        f"broken: checkpoint {broken.checkpoint.id} ({broken.reason.value}) "
        f"after {result.checked - 1} that verify."
    )


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="list_spaces",
        title="List spaces",
        description="List the Smriti spaces you can read (a space holds a project's "
        "conversations and its lineage of checkpoints). "
        "Use a space's id with the other tools.",
        input_schema=_object(
            {"first": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 50}},
            [],
        ),
        output_schema=_object(
            {
                "spaces": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": _ID,
                            "name": {"type": "string"},
                            "description": {"type": "string"},
                            "updatedAt": {"type": "string", "format": "date-time"},
                        },
                        "required": ["id", "name", "description", "updatedAt"],
                    },
                },
                "hasMore": {"type": "boolean"},
            },
            ["spaces", "hasMore"],
        ),
        run=list_spaces,
    ),
    Tool(
        name="space_state",
        title="Where a space stands",
        description="A continuation brief to paste into a prompt: the branch head's "
        "objective, summary, decisions, tasks, open questions and entities, the other "
        "branches, and with `since` (a checkpoint id, or an ISO 8601 time) the checkpoints "
        "added on the branch since then and the items its lists gained or lost. `tokens` "
        "is its length in the default model's tokens.",
        input_schema=_object(
            {
                "spaceId": _ID,
                "branch": {"type": "string", "default": MAIN_BRANCH},
                "since": {
                    "oneOf": [_ID, {"type": "string", "format": "date-time"}],
                    "description": "A checkpoint id, or a time.",
                },
            },
            ["spaceId"],
        ),
        output_schema=_object(
            {
                "brief": {"type": "string"},
                "tokens": {"type": "integer", "minimum": 0},
                "headId": {**_ID, "type": ["integer", "null"]},
                "branches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "headId": _ID},
                        "required": ["name", "headId"],
                    },
                },
                "changedIds": {"type": "array", "items": _ID},
            },
            ["brief", "tokens", "headId", "branches", "changedIds"],
        ),
        run=space_state,
    ),
    Tool(
        name="search",
        title="Search",
        description="Full-text search over everything you can read: messages, checkpoints "
        "(their decisions, tasks, questions), sessions and spaces, best match first. Words "
        'in any order (all required), "a phrase" in quotes, word* for a prefix; at most 500 '
        "characters and 20 terms. Optionally only one space. Each hit says how to follow "
        "it: a turn's sessionId and sequenceNumber, a checkpoint's checkpointId (for "
        "show_checkpoint) and spaceId, a session's sessionId and spaceId, a space's spaceId.",
        input_schema=_object(
            {
                "query": {"type": "string", "minLength": 1, "description": "What to look for."},
                "spaceId": {**_ID, "description": "Only this space."},
                "kinds": {
                    "type": "array",
                    "items": {"enum": [kind.name.lower() for kind in Kind]},
                    "minItems": 1,
                    "description": "Only these kinds of object (default: all).",
                },
                "first": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 10},
            },
            ["query"],
        ),
        output_schema=_object(
            {
                "hits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "kind": {"enum": [kind.name.lower() for kind in Kind]},
                            "id": _ID,
                            "sessionId": {**_ID, "description": "A turn's or a session's."},
                            "sequenceNumber": {**_ID, "description": "A turn's, in its session."},
                            "checkpointId": {**_ID, "description": "A checkpoint's."},
                            "spaceId": {
                                "type": ["integer", "null"],
                                "description": "A checkpoint's, a session's (null: in no "
                                "space) or a space's.",
                            },
                            "snippet": {"type": "string"},
                        },
                        "required": ["kind", "id", "snippet"],
                    },
                },
                "hasMore": {"type": "boolean"},
            },
            ["hits", "hasMore"],
        ),
        run=search,
    ),
    Tool(
        name="show_checkpoint",
        title="Show a checkpoint",
        description="One checkpoint in full: its objective, summary, decisions, tasks, open "
        "questions and entities, its branch and parents. Give `checkpointId`, or `spaceId` "
        "and `hash` (the hash or a unique prefix of at least 4 hex characters).",
        input_schema=_object(
            {
                "checkpointId": _ID,
                "spaceId": _ID,
                "hash": {"type": "string", "minLength": 4},
            },
            [],
        ),
        output_schema=_object({"checkpoint": _CHECKPOINT}, ["checkpoint"]),
        run=show_checkpoint,
    ),
    Tool(
        name="list_checkpoints",
        title="List a branch's checkpoints",
        description="The checkpoints of one branch of a space, newest (the branch head) "
        "first, back through its parents (a fork's line continues into the branch it "
        'came from). The branch is "main" unless you name another.',
        input_schema=_object(
            {
                "spaceId": _ID,
                "branch": {"type": "string", "default": MAIN_BRANCH},
                "first": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 20},
            },
            ["spaceId"],
        ),
        output_schema=_object(
            {"branch": {"type": "string"}, "checkpoints": {"type": "array", "items": _CHECKPOINT}},
            ["branch", "checkpoints"],
        ),
        run=list_checkpoints,
    ),
    Tool(
        name="compare_checkpoints",
        title="Compare two checkpoints",
        description="What two checkpoints (of any branches) share and where they differ: "
        "for decisions, tasks, open questions and entities, the items only in a, only in b, "
        "and in both (matched ignoring case, punctuation and spacing), and the nearest "
        "checkpoint both descend from (null when they share none).",
        input_schema=_object(
            {
                "a": {**_ID, "description": "A checkpoint id."},
                "b": {**_ID, "description": "Another."},
            },
            ["a", "b"],
        ),
        output_schema=_object(
            {
                "a": _CHECKPOINT,
                "b": _CHECKPOINT,
                **{f.name: _COMPARED for f in CONTENT_LIST_FIELDS},
                "commonAncestor": {**_CHECKPOINT, "type": ["object", "null"]},
            },
            ["a", "b", *(f.name for f in CONTENT_LIST_FIELDS), "commonAncestor"],
        ),
        run=compare_checkpoints,
    ),
    Tool(
        name="verify_lineage",
        title="Verify a space's lineage",
        description="Recompute every checkpoint hash and parent link of a space, oldest "
        "first, and name the first checkpoint that does not verify (tampered with or "
        "missing its parent). ok is true when the whole lineage holds.",
        input_schema=_object({"spaceId": _ID}, ["spaceId"]),
        output_schema=_object(
            {
                "ok": {"type": "boolean"},
                "checked": {"type": "integer", "minimum": 0},
                "firstBroken": {
                    "type": ["object", "null"],
                    "properties": {
                        "checkpointId": _ID,
                        "reason": {"enum": ["HASH_MISMATCH", "MISSING_PARENT"]},
                        "expectedHash": {"type": ["string", "null"]},
                    },
                },
            },
            ["ok", "checked", "firstBroken"],
        ),
        run=verify_lineage,
    ),
)
