"""The writing tools: each goes through the use case GraphQL's mutation uses,
so a read-only token is refused by the same rule (services/policy.py) with
the same code and words, and the author is the actor (the token's name for
an agent, as GraphQL's bylines show it).

Saving needs a session of the caller's in the space: `fork` makes one on a
new branch (the way an agent continues from a checkpoint)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, create_model, model_validator

from ..domain.accounts import Actor
from ..domain.carry import CarriedState
from ..domain.checkpoint_markdown import parse_checkpoint_markdown
from ..domain.merge import Conflict, Merge, MergedItem, Origin, Resolution
from ..domain.types import CONTENT_FIELDS, CONTENT_LIST_FIELDS, CheckpointContent
from ..errors import InputError
from ..services import checkpoints, merging, sessions, spaces
from ..services.base import Services
from . import shapes
from .schema import Answer, Arguments, Flag, Id, Says, Strings, Text, absent, advertised, choice
from .shapes import CheckpointJson, checkpoint_json, checkpoint_text
from .tool import Result, tool

_LISTS = {f.name: f.attr for f in CONTENT_LIST_FIELDS}
_LIST_NAMES = {f.attr: f.name for f in CONTENT_LIST_FIELDS}
# A conflict edited on both sides: keep the text of the branch merged into, or of
# the checkpoint merged in.
_TAKE = {"INTO": Origin.OURS, "FROM": Origin.THEIRS}
if TYPE_CHECKING:  # what mypy sees of the types built from the registry below
    ListName = str
    ListChoice = str
    TakeChoice = str
else:
    ListName = Literal[tuple(_LISTS)]
    ListChoice = choice(_LISTS, "a list")
    TakeChoice = choice(_TAKE, "INTO or FROM")

# --- create_space ----------------------------------------------------------------


class CreateSpace(Arguments):
    name: Annotated[Text, advertised(minLength=1)]
    description: Text | None = None


class SpaceMade(Answer):
    space: shapes.Space


@tool(
    "create_space",
    title="Create a space",
    description="Create a space (a project's conversations and its lineage of "
    "checkpoints), owned by you.",
    arguments=CreateSpace,
    answer=SpaceMade,
    writes=True,
)
async def create_space(_services: Services, actor: Actor, args: CreateSpace) -> Result:
    space = await spaces.create_space(actor, args.name, args.description)
    return {"space": shapes.space_json(space)}, f"Created space {space.id} {space.name}."


# --- fork ------------------------------------------------------------------------


class Fork(Arguments):
    checkpoint_id: Id
    branch: Text | None = None
    title: Text | None = None


class Forked(Answer):
    session_id: shapes.Id
    space_id: shapes.Id | None
    branch_name: str
    title: str


@tool(
    "fork",
    title="Fork from a checkpoint",
    description="Start a session continuing from a checkpoint, on a new branch of its "
    "space (named for you unless you give `branch`). Save checkpoints into the session "
    "it answers (`sessionId`). A viewer of the space gets a private session outside it.",
    arguments=Fork,
    answer=Forked,
    writes=True,
)
async def fork(services: Services, actor: Actor, args: Fork) -> Result:
    session = await sessions.fork(
        services, actor, args.checkpoint_id, branch_name=args.branch, title=args.title
    )
    where = f"branch {session.branch_name}" if session.space_id else "a private session"
    answer = {
        "sessionId": session.id,
        "spaceId": session.space_id,
        "branchName": session.branch_name,
        "title": session.title,
    }
    return answer, f"Forked into {where}: session {session.id}."


# --- save_checkpoint -------------------------------------------------------------

_DESCRIBED = {"title": "A short title (at most 200 characters)."}

# The checkpoint's fields from the registry, each left out unless given.
SaveCheckpoint = create_model(  # type: ignore[call-overload]
    "SaveCheckpoint",
    __base__=Arguments,
    session_id=(Id, ...),
    dry_run=(Flag, False),
    markdown=(
        Text | None,
        Field(None, description="The whole checkpoint as Markdown, instead of the fields."),
    ),
    **{
        f.attr: (
            (Strings if f in CONTENT_LIST_FIELDS else Text) | None,
            Field(None, alias=f.name, description=_DESCRIBED.get(f.attr)),
        )
        for f in CONTENT_FIELDS
    },
)


if TYPE_CHECKING:
    Carried = Answer
else:  # what the branch head carries into a new checkpoint
    Carried = create_model(
        "Carried",
        __base__=Answer,
        from_checkpoint_id=(shapes.Id | None, ...),
        objective=(str, ...),
        **{f.attr: (list[str], Field(alias=f.name)) for f in CONTENT_LIST_FIELDS},
    )


class Saved(Answer):
    saved: bool
    checkpoint: CheckpointJson = absent("What was saved.")
    content: shapes.CheckpointContent = absent("dryRun: what would be saved.")
    carried: Carried = absent("dryRun: what the branch head carries.")


def _carried_json(carried: CarriedState) -> dict[str, Any]:
    return {
        "fromCheckpointId": carried.checkpoint.id if carried.checkpoint else None,
        "objective": carried.objective,
        **{f.name: list(getattr(carried, f.attr)) for f in CONTENT_LIST_FIELDS},
    }


def _content(args: Any) -> CheckpointContent:
    """The structured fields, or the Markdown that holds them: not both. The
    use case validates what they say."""
    given = [f for f in CONTENT_FIELDS if args.given(f.attr)]
    if args.given("markdown"):
        if given:
            raise InputError(
                "Give the checkpoint as `markdown` or as fields, not both: "
                f"`{given[0].name}` is a field.",
                field=given[0].name,
            )
        return parse_checkpoint_markdown(args.markdown)
    if not args.given("title"):
        raise InputError("`title` is required.", field="title")
    values: dict[str, Any] = {
        f.attr: tuple(value) if isinstance(value := getattr(args, f.attr), list) else value
        for f in given
    }
    return CheckpointContent(**values)


async def _save(services: Services, actor: Actor, args: Any) -> Result:
    content = _content(args)
    if args.dry_run:
        checked, carried = await checkpoints.check(actor, args.session_id, content)
        answer = {"saved": False, "content": checked.by_name(), "carried": _carried_json(carried)}
        return answer, f"Valid, not saved: {checked.title}"
    saved = await checkpoints.create(
        services, actor, args.session_id, content, source_turn_range=None
    )
    return {"saved": True, "checkpoint": checkpoint_json(saved)}, checkpoint_text(saved)


save_checkpoint = tool(
    "save_checkpoint",
    title="Save a checkpoint",
    description="Save where the work stands as a checkpoint on the session's branch: "
    "a title, the objective, a summary, and the decisions, tasks, open questions and "
    "entities as they now stand (the whole lists, not only what changed). Give them "
    "as fields (`title` at least), or all as `markdown`: `# Title`, then `## Objective`, "
    "`## Summary` (text under each) and `## Decisions`, `## Tasks`, `## Open questions`, "
    "`## Entities` (one `- item` a line), as the export writes them. With "
    "`dryRun` nothing is saved: you get the checkpoint as it would be saved and the "
    "items the branch head carries, to compare.",
    arguments=SaveCheckpoint,
    answer=Saved,
    writes=True,
)(_save)


# --- merging ---------------------------------------------------------------------


class PreviewMerge(Arguments):
    space_id: Id
    into: Text
    from_id: Id


class MergeItem(Answer):
    text: str
    origin: Literal["ANCESTOR", "OURS", "THEIRS", "BOTH"]
    # A conflict edited differently on both sides: the other side's text.
    theirs: str = absent("Origin BOTH: the other side's text.")


class MergedField(Answer):
    items: list[MergeItem]
    conflicts: list[MergeItem]


if TYPE_CHECKING:
    MergedLists = Answer
else:  # each list field of the registry
    MergedLists = create_model(
        "MergedLists",
        __base__=Answer,
        **{f.attr: (MergedField, Field(alias=f.name)) for f in CONTENT_LIST_FIELDS},
    )


class Suggestion(Answer):
    title: str
    objective: str
    summary: str


class MergeWarning(Answer):
    field: ListName
    into_item_id: str
    into_text: str
    from_item_id: str
    from_text: str
    reason: str
    source: Literal["HEURISTIC", "MODEL"]


class Preview(Answer):
    into: str
    ours_id: shapes.Id
    theirs_id: shapes.Id
    ancestor_id: shapes.Id | None
    fast_forward: bool
    up_to_date: bool
    conflict_count: shapes.Count
    lists: MergedLists
    suggestion: Suggestion
    warnings: list[MergeWarning]


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


@tool(
    "preview_merge",
    title="Preview a merge",
    description="What merging checkpoint `fromId` into branch `into` would do, nothing "
    "written: a fast-forward, already contained, or a merge whose lists show each item's "
    "origin and the conflicts (an item one side removed and the other changed) you must "
    "keep or drop when you merge; `warnings`: likely contradictions between the sides' "
    "items (a word-level heuristic, to read: they never block the merge).",
    arguments=PreviewMerge,
    answer=Preview,
)
async def preview_merge(_services: Services, actor: Actor, args: PreviewMerge) -> Result:
    plan = await merging.preview(actor, args.space_id, args.into, args.from_id)
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


class ResolutionInput(Arguments):
    """{field, item, keep} or {field, item, take}."""

    field: ListChoice
    item: str
    keep: bool | None = None
    take: TakeChoice | None = None

    @model_validator(mode="after")
    def _keeps_or_takes(self) -> ResolutionInput:
        if self.keep is None and self.take is None:
            raise ValueError("keep or take")
        return self


Resolutions = Annotated[
    list[ResolutionInput],
    Says(
        "A resolution is {field: one of "
        + ", ".join(_LISTS)
        + ", item, keep} or {field, item, take: INTO or FROM}."
    ),
]


class MergeInput(Arguments):
    space_id: Id
    into: Text
    from_id: Id
    title: Text
    objective: Text | None = None
    summary: Text | None = None
    resolutions: Resolutions = Field(default_factory=list)


class Merged(Answer):
    fast_forward: bool
    checkpoint: CheckpointJson


@tool(
    "merge",
    title="Merge a checkpoint into a branch",
    description="Merge checkpoint `fromId` into branch `into` (or fast-forward it). Every "
    "conflict of preview_merge needs a resolution {field, item, keep}, or for one edited "
    "on both sides (origin BOTH) {field, item, take: INTO or FROM}; an unresolved one is "
    "refused (CONFLICT).",
    arguments=MergeInput,
    answer=Merged,
    writes=True,
)
async def merge(_services: Services, actor: Actor, args: MergeInput) -> Result:
    done = await merging.merge(
        actor,
        args.space_id,
        args.into,
        args.from_id,
        title=args.title,
        objective=args.objective,
        summary=args.summary,
        resolutions=[
            Resolution(
                _LISTS[one.field], one.item, one.keep, take=_TAKE[one.take] if one.take else None
            )
            for one in args.resolutions
        ],
    )
    answer = {"fastForward": done.fast_forward, "checkpoint": checkpoint_json(done.checkpoint)}
    return answer, checkpoint_text(done.checkpoint)


WRITING_TOOLS = (create_space, fork, save_checkpoint, preview_merge, merge)
