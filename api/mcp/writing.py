"""The writing tools: each goes through the use case GraphQL's mutation uses,
so a read-only token is refused by the same rule (services/policy.py) with
the same code and words, and the author is the actor (the token's name for
an agent, as GraphQL's bylines show it).

Saving needs a session of the caller's in the space: `fork` makes one on a
new branch (the way an agent continues from a checkpoint)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.accounts import Actor
from ..domain.carry import CarriedState
from ..domain.checkpoint_markdown import parse_checkpoint_markdown
from ..domain.merge import Conflict, Merge, MergedItem, Origin, Resolution
from ..domain.types import CONTENT_FIELDS, CONTENT_LIST_FIELDS, CheckpointContent, Session
from ..errors import InputError
from ..services import checkpoints, merging, sessions, spaces
from ..services.base import Services
from .tools import (
    _CHECKPOINT,
    _ID,
    _STRINGS,
    Result,
    Tool,
    _id,
    _no_others,
    _object,
    _text,
    checkpoint_json,
    checkpoint_text,
    space_json,
)

_BY_NAME = {f.name: f.attr for f in CONTENT_FIELDS}
_LISTS = {f.name: f.attr for f in CONTENT_LIST_FIELDS}
_LIST_NAMES = {f.attr: f.name for f in CONTENT_LIST_FIELDS}


def _optional_text(args: Mapping[str, Any], name: str) -> str | None:
    return None if args.get(name) is None else _text(args, name)


def _strings(args: Mapping[str, Any], name: str) -> list[str]:
    value = args.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(f"`{name}` is a list of strings.", field=name)
    return value


def _flag(args: Mapping[str, Any], name: str) -> bool:
    value = args.get(name, False)
    if not isinstance(value, bool):
        raise InputError(f"`{name}` is true or false.", field=name)
    return value


def _content(args: Mapping[str, Any]) -> CheckpointContent:
    """The checkpoint's fields as given; validated by the use case."""
    given: dict[str, Any] = {"title": _text(args, "title")}
    for name, attr in _BY_NAME.items():
        if name == "title" or name not in args:
            continue
        given[attr] = tuple(_strings(args, name)) if name in _LISTS else _text(args, name)
    return CheckpointContent(**given)


def _carried_json(carried: CarriedState) -> dict[str, Any]:
    return {
        "fromCheckpointId": carried.checkpoint.id if carried.checkpoint else None,
        "objective": carried.objective,
        "decisions": list(carried.decisions),
        "tasks": list(carried.tasks),
        "openQuestions": list(carried.open_questions),
        "entities": list(carried.entities),
    }


def _session_json(session: Session) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "spaceId": session.space_id,
        "branchName": session.branch_name,
        "title": session.title,
    }


def _merge_json(merge: Merge) -> dict[str, Any]:
    """Each list as previewMerge shows it: the proposed items, and apart the
    conflicts to keep or drop."""

    def items(entries: tuple[MergedItem, ...]) -> list[dict[str, str]]:
        return [{"text": e.text, "origin": e.origin.value} for e in entries]

    def conflicts(entries: tuple[Conflict, ...]) -> list[dict[str, str]]:
        # The text a side kept and that side; edited differently on both: BOTH
        # with each side's text (a resolution then says which to take).
        found: list[dict[str, str]] = []
        for c in entries:
            if c.ours is not None and c.theirs is not None:
                found.append({"text": c.ours, "origin": "BOTH", "theirs": c.theirs})
            elif c.ours is not None:
                found.append({"text": c.ours, "origin": "OURS"})
            else:
                found.append({"text": c.theirs or "", "origin": "THEIRS"})
        return found

    return {
        name: {
            "items": items(merge.field(attr).items),
            "conflicts": conflicts(merge.field(attr).conflicts),
        }
        for name, attr in _LISTS.items()
    }


# --- the tools ---------------------------------------------------------------


async def create_space(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"name", "description"})
    space = await spaces.create_space(
        actor, _text(args, "name"), _optional_text(args, "description")
    )
    return {"space": space_json(space)}, f"Created space {space.id} {space.name}."


async def fork(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"checkpointId", "branch", "title"})
    checkpoint_id = _id(args, "checkpointId")
    assert checkpoint_id is not None
    session = await sessions.fork(
        services,
        actor,
        checkpoint_id,
        branch_name=_optional_text(args, "branch"),
        title=_optional_text(args, "title"),
    )
    where = f"branch {session.branch_name}" if session.space_id else "a private session"
    return _session_json(session), f"Forked into {where}: session {session.id}."


def _content_or_markdown(args: Mapping[str, Any]) -> CheckpointContent:
    """The structured fields, or the Markdown that holds them: not both."""
    if "markdown" not in args:
        return _content(args)
    given = next((name for name in _BY_NAME if name in args), None)
    if given is not None:
        raise InputError(
            f"Give the checkpoint as `markdown` or as fields, not both: `{given}` is a field.",
            field=given,
        )
    return parse_checkpoint_markdown(_text(args, "markdown"))


async def save_checkpoint(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"sessionId", "dryRun", "markdown", *_BY_NAME})
    session_id = _id(args, "sessionId")
    assert session_id is not None
    content = _content_or_markdown(args)
    if _flag(args, "dryRun"):
        checked, carried = await checkpoints.check(actor, session_id, content)
        answer = {"saved": False, "content": checked.by_name(), "carried": _carried_json(carried)}
        return answer, f"Valid, not saved: {checked.title}"
    saved = await checkpoints.create(services, actor, session_id, content, source_turn_range=None)
    return {"saved": True, "checkpoint": checkpoint_json(saved)}, checkpoint_text(saved)


async def preview_merge(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId", "into", "fromId"})
    space_id, from_id = _id(args, "spaceId"), _id(args, "fromId")
    assert space_id is not None and from_id is not None
    plan = await merging.preview(actor, space_id, _text(args, "into"), from_id)
    answer = {
        "into": plan.into,
        "oursId": plan.ours.id,
        "theirsId": plan.theirs.id,
        "ancestorId": plan.ancestor.id if plan.ancestor else None,
        "fastForward": plan.fast_forward,
        "upToDate": plan.up_to_date,
        "conflictCount": plan.merge.conflict_count,
        "lists": _merge_json(plan.merge),
        "suggestion": {
            "title": plan.suggestion.title,
            "objective": plan.suggestion.objective,
            "summary": plan.suggestion.summary,
        },
        # previewMerge's warnings (the word-level heuristic's: no model is asked here).
        "warnings": [
            {
                "field": _LIST_NAMES[w.field],
                "intoItemId": w.into_id,
                "intoText": w.into_text,
                "fromItemId": w.from_id,
                "fromText": w.from_text,
                "reason": w.reason,
                "source": w.source.value,
            }
            for w in plan.warnings
        ],
    }
    if plan.up_to_date:
        text = f'"{plan.into}" already contains checkpoint {plan.theirs.id}.'
    elif plan.fast_forward:
        text = f'"{plan.into}" would fast-forward to checkpoint {plan.theirs.id}.'
    else:
        text = f"A merge with {plan.merge.conflict_count} conflict(s) to resolve."
        if plan.warnings:
            text += f" {len(plan.warnings)} likely contradiction(s) to read (warnings)."
    return answer, text


def _resolutions(args: Mapping[str, Any]) -> list[Resolution]:
    given = args.get("resolutions", [])
    if not isinstance(given, list):
        raise InputError("`resolutions` is a list.", field="resolutions")
    found = []
    for one in given:
        if (
            not isinstance(one, dict)
            or not isinstance(one.get("item"), str)
            or not isinstance(one.get("keep", True), bool)
            or one.get("take", "INTO") not in _TAKE
            or ("keep" not in one and "take" not in one)
            or one.get("field") not in _LISTS
        ):
            raise InputError(
                "A resolution is {field: one of "
                + ", ".join(_LISTS)
                + ", item, keep} or {field, item, take: INTO or FROM}.",
                field="resolutions",
            )
        take = _TAKE[one["take"]] if "take" in one else None
        found.append(Resolution(_LISTS[one["field"]], one["item"], one.get("keep"), take=take))
    return found


# A conflict edited on both sides: keep the text of the branch merged into, or of
# the checkpoint merged in.
_TAKE = {"INTO": Origin.OURS, "FROM": Origin.THEIRS}


async def merge(_services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId", "into", "fromId", "title", "objective", "summary", "resolutions"})
    space_id, from_id = _id(args, "spaceId"), _id(args, "fromId")
    assert space_id is not None and from_id is not None
    done = await merging.merge(
        actor,
        space_id,
        _text(args, "into"),
        from_id,
        title=_text(args, "title"),
        objective=_optional_text(args, "objective"),
        summary=_optional_text(args, "summary"),
        resolutions=_resolutions(args),
    )
    answer = {"fastForward": done.fast_forward, "checkpoint": checkpoint_json(done.checkpoint)}
    return answer, checkpoint_text(done.checkpoint)


_TEXT = {"type": "string"}
_CONTENT_INPUT = {
    "title": {**_TEXT, "description": "A short title (at most 200 characters)."},
    "objective": _TEXT,
    "summary": _TEXT,
    "decisions": _STRINGS,
    "tasks": _STRINGS,
    "openQuestions": _STRINGS,
    "entities": _STRINGS,
}
_CONTENT_OUTPUT = {
    "type": "object",
    "properties": {name: (_STRINGS if name in _LISTS else _TEXT) for name in _BY_NAME},
}
_MERGE_ITEMS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "text": _TEXT,
            "origin": {"enum": ["ANCESTOR", "OURS", "THEIRS", "BOTH"]},
            # A conflict edited differently on both sides: the other side's text.
            "theirs": _TEXT,
        },
        "required": ["text", "origin"],
    },
}
_MERGED_FIELD = _object({"items": _MERGE_ITEMS, "conflicts": _MERGE_ITEMS}, ["items", "conflicts"])
_NULLABLE_ID = {"type": ["integer", "null"]}
_MERGE_WARNING = _object(
    {
        "field": {"enum": list(_LISTS)},
        "intoItemId": _TEXT,
        "intoText": _TEXT,
        "fromItemId": _TEXT,
        "fromText": _TEXT,
        "reason": _TEXT,
        "source": {"enum": ["HEURISTIC", "MODEL"]},
    },
    ["field", "intoItemId", "intoText", "fromItemId", "fromText", "reason", "source"],
)

WRITING_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="create_space",
        title="Create a space",
        description="Create a space (a project's conversations and its lineage of "
        "checkpoints), owned by you.",
        input_schema=_object(
            {"name": {"type": "string", "minLength": 1}, "description": _TEXT}, ["name"]
        ),
        output_schema=_object({"space": {"type": "object"}}, ["space"]),
        run=create_space,
        writes=True,
    ),
    Tool(
        name="fork",
        title="Fork from a checkpoint",
        description="Start a session continuing from a checkpoint, on a new branch of its "
        "space (named for you unless you give `branch`). Save checkpoints into the session "
        "it answers (`sessionId`). A viewer of the space gets a private session outside it.",
        input_schema=_object(
            {"checkpointId": _ID, "branch": _TEXT, "title": _TEXT}, ["checkpointId"]
        ),
        output_schema=_object(
            {
                "sessionId": _ID,
                "spaceId": _NULLABLE_ID,
                "branchName": _TEXT,
                "title": _TEXT,
            },
            ["sessionId", "spaceId", "branchName", "title"],
        ),
        run=fork,
        writes=True,
    ),
    Tool(
        name="save_checkpoint",
        title="Save a checkpoint",
        description="Save where the work stands as a checkpoint on the session's branch: "
        "a title, the objective, a summary, and the decisions, tasks, open questions and "
        "entities as they now stand (the whole lists, not only what changed). Give them "
        "as fields (`title` at least), or all as `markdown`: `# Title`, then `## Objective`, "
        "`## Summary` (text under each) and `## Decisions`, `## Tasks`, `## Open questions`, "
        "`## Entities` (one `- item` a line), as the export writes them. With "
        "`dryRun` nothing is saved: you get the checkpoint as it would be saved and the "
        "items the branch head carries, to compare.",
        input_schema=_object(
            {
                "sessionId": _ID,
                "dryRun": {"type": "boolean", "default": False},
                "markdown": {
                    **_TEXT,
                    "description": "The whole checkpoint as Markdown, instead of the fields.",
                },
                **_CONTENT_INPUT,
            },
            ["sessionId"],
        ),
        output_schema={
            "type": "object",
            "properties": {
                "saved": {"type": "boolean"},
                "checkpoint": _CHECKPOINT,
                "content": _CONTENT_OUTPUT,
                "carried": {"type": "object"},
            },
            "required": ["saved"],
        },
        run=save_checkpoint,
        writes=True,
    ),
    Tool(
        name="preview_merge",
        title="Preview a merge",
        description="What merging checkpoint `fromId` into branch `into` would do, nothing "
        "written: a fast-forward, already contained, or a merge whose lists show each item's "
        "origin and the conflicts (an item one side removed and the other changed) you must "
        "keep or drop when you merge; `warnings`: likely contradictions between the sides' "
        "items (a word-level heuristic, to read: they never block the merge).",
        input_schema=_object(
            {"spaceId": _ID, "into": _TEXT, "fromId": _ID}, ["spaceId", "into", "fromId"]
        ),
        output_schema=_object(
            {
                "into": _TEXT,
                "oursId": _ID,
                "theirsId": _ID,
                "ancestorId": _NULLABLE_ID,
                "fastForward": {"type": "boolean"},
                "upToDate": {"type": "boolean"},
                "conflictCount": {"type": "integer", "minimum": 0},
                "lists": {
                    "type": "object",
                    "properties": {name: _MERGED_FIELD for name in _LISTS},
                },
                "suggestion": {"type": "object"},
                "warnings": {"type": "array", "items": _MERGE_WARNING},
            },
            [
                "into",
                "oursId",
                "theirsId",
                "fastForward",
                "upToDate",
                "conflictCount",
                "lists",
                "warnings",
            ],
        ),
        run=preview_merge,
        writes=False,
    ),
    Tool(
        name="merge",
        title="Merge a checkpoint into a branch",
        description="Merge checkpoint `fromId` into branch `into` (or fast-forward it). Every "
        "conflict of preview_merge needs a resolution {field, item, keep}, or for one edited "
        "on both sides (origin BOTH) {field, item, take: INTO or FROM}; an unresolved one is "
        "refused (CONFLICT).",
        input_schema=_object(
            {
                "spaceId": _ID,
                "into": _TEXT,
                "fromId": _ID,
                "title": _TEXT,
                "objective": _TEXT,
                "summary": _TEXT,
                "resolutions": {
                    "type": "array",
                    "items": _object(
                        {
                            "field": {"enum": list(_LISTS)},
                            "item": _TEXT,
                            "keep": {"type": "boolean"},
                            "take": {"enum": list(_TAKE)},
                        },
                        ["field", "item"],
                    ),
                },
            },
            ["spaceId", "into", "fromId", "title"],
        ),
        output_schema=_object(
            {"fastForward": {"type": "boolean"}, "checkpoint": _CHECKPOINT},
            ["fastForward", "checkpoint"],
        ),
        run=merge,
        writes=True,
    ),
)
