"""The reading tools: arguments and answers declared as models (api/mcp/schema.py),
a description for a model, and a use case."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, create_model

from ..domain.accounts import Actor
from ..domain.brief import render_state
from ..domain.pages import PageRequest
from ..domain.search_query import Kind
from ..domain.types import CONTENT_LIST_FIELDS, MAIN_BRANCH, Checkpoint, Session, Space, Turn
from ..errors import InputError, NotFound
from ..services import checkpoints, reading, state, transfer
from ..services import search as search_service
from ..services.base import Services
from . import shapes
from .schema import MAX_PAGE, Answer, Arguments, Count, Id, Text, absent, advertised, choice, says
from .shapes import CheckpointJson, checkpoint_json, checkpoint_line, checkpoint_text
from .tool import Result, tool

# --- list_spaces ---------------------------------------------------------------


class ListSpaces(Arguments):
    first: Count = 50


class SpacesPage(Answer):
    spaces: list[shapes.Space]
    has_more: bool


@tool(
    "list_spaces",
    title="List spaces",
    description="List the Smriti spaces you can read (a space holds a project's "
    "conversations and its lineage of checkpoints). "
    "Use a space's id with the other tools.",
    arguments=ListSpaces,
    answer=SpacesPage,
)
async def list_spaces(_services: Services, actor: Actor, args: ListSpaces) -> Result:
    page = await reading.spaces_page(actor, PageRequest(first=args.first))
    spaces = [shapes.space_json(space) for space in page.items]
    text = "\n".join(f"{s['id']} {s['name']}" for s in spaces) or "No spaces."
    return {"spaces": spaces, "hasMore": page.has_next}, text


# --- space_state ---------------------------------------------------------------

SINCE = "`since` is a checkpoint id or an ISO 8601 time."


def _since(value: Any) -> int | datetime | None:
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
    raise ValueError(SINCE)


Since = Annotated[
    int | datetime | None,
    BeforeValidator(_since),
    WithJsonSchema(
        {
            "oneOf": [
                {"type": "integer", "minimum": 1},
                {"type": "string", "format": "date-time"},
            ],
            "description": "A checkpoint id, or a time.",
        }
    ),
    says("a checkpoint id or an ISO 8601 time"),
]


class SpaceState(Arguments):
    space_id: Id
    branch: Text = MAIN_BRANCH
    since: Since = None


class BranchHead(Answer):
    name: str
    head_id: shapes.Id


class StateAnswer(Answer):
    brief: str
    tokens: shapes.Count
    head_id: shapes.Id | None
    branches: list[BranchHead]
    changed_ids: list[shapes.Id]


@tool(
    "space_state",
    title="Where a space stands",
    description="A continuation brief to paste into a prompt: the branch head's "
    "objective, summary, decisions, tasks, open questions and entities, the other "
    "branches, and with `since` (a checkpoint id, or an ISO 8601 time) the checkpoints "
    "added on the branch since then and the items its lists gained or lost. `tokens` "
    "is its length in the default model's tokens.",
    arguments=SpaceState,
    answer=StateAnswer,
)
async def space_state(services: Services, actor: Actor, args: SpaceState) -> Result:
    found = await state.space_state(actor, args.space_id, branch=args.branch, since=args.since)
    brief = render_state(found)
    answer = {
        "brief": brief,
        "tokens": services.registry.count_tokens(brief),
        "headId": found.head.id if found.head else None,
        "branches": [{"name": name, "headId": tip.id} for name, tip in found.branches],
        "changedIds": [c.id for c in found.changed],
    }
    return answer, brief


# --- search --------------------------------------------------------------------

KINDS = {kind.name.lower(): kind for kind in Kind}
if TYPE_CHECKING:  # what mypy sees of the types built from Kind below
    KindName = str
    KindChoice = str
else:
    KindName = Literal[tuple(KINDS)]
    KindChoice = choice(KINDS, "a kind")


class Search(Arguments):
    query: Annotated[Text, advertised(minLength=1, description="What to look for.")]
    space_id: Annotated[Id | None, Field(description="Only this space.")] = None
    kinds: Annotated[
        Annotated[list[KindChoice], Field(min_length=1), says(f"a list of {', '.join(KINDS)}")]
        | None,
        Field(description="Only these kinds of object (default: all)."),
    ] = None
    first: Count = 10


class Hit(Answer):
    """How to follow a hit with the other tools: what its kind has."""

    kind: KindName
    id: shapes.Id
    session_id: shapes.Id = absent("A turn's or a session's.")
    sequence_number: shapes.Id = absent("A turn's, in its session.")
    checkpoint_id: shapes.Id = absent("A checkpoint's.")
    space_id: shapes.Id | None = absent(
        "A checkpoint's, a session's (null: in no space) or a space's."
    )
    snippet: str


class Hits(Answer):
    hits: list[Hit]
    has_more: bool


def _follow(found: Turn | Checkpoint | Session | Space) -> dict[str, Any]:
    if isinstance(found, Turn):
        return {"sessionId": found.session_id, "sequenceNumber": found.sequence_number}
    if isinstance(found, Checkpoint):
        return {"checkpointId": found.id, "spaceId": found.space_id}
    if isinstance(found, Session):
        return {"sessionId": found.id, "spaceId": found.space_id}
    return {"spaceId": found.id}


@tool(
    "search",
    title="Search",
    description="Full-text search over everything you can read: messages, checkpoints "
    "(their decisions, tasks, questions), sessions and spaces, best match first. Words "
    'in any order (all required), "a phrase" in quotes, word* for a prefix; at most 500 '
    "characters and 20 terms. Optionally only one space. Each hit says how to follow "
    "it: a turn's sessionId and sequenceNumber, a checkpoint's checkpointId (for "
    "show_checkpoint) and spaceId, a session's sessionId and spaceId, a space's spaceId.",
    arguments=Search,
    answer=Hits,
)
async def search(_services: Services, actor: Actor, args: Search) -> Result:
    hits = await search_service.search(
        actor,
        args.query,
        space_id=args.space_id,
        kinds=[KINDS[one] for one in args.kinds] if args.kinds else None,
        first=args.first,
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


# --- checkpoints ---------------------------------------------------------------


class ShowCheckpoint(Arguments):
    checkpoint_id: Id | None = None
    space_id: Id | None = None
    hash: Annotated[Text | None, advertised(minLength=4)] = None


class OneCheckpoint(Answer):
    checkpoint: CheckpointJson


@tool(
    "show_checkpoint",
    title="Show a checkpoint",
    description="One checkpoint in full: its objective, summary, decisions, tasks, open "
    "questions and entities, its branch and parents. Give `checkpointId`, or `spaceId` "
    "and `hash` (the hash or a unique prefix of at least 4 hex characters).",
    arguments=ShowCheckpoint,
    answer=OneCheckpoint,
)
async def show_checkpoint(_services: Services, actor: Actor, args: ShowCheckpoint) -> Result:
    if args.checkpoint_id is not None:
        found = await checkpoints.get_readable(actor, args.checkpoint_id)
    else:
        if args.space_id is None or args.hash is None:
            raise InputError("Give `checkpointId`, or `spaceId` and `hash`.", field="checkpointId")
        by_hash = await checkpoints.by_hash(actor, args.space_id, args.hash)
        if by_hash is None:
            raise NotFound("No such checkpoint.", field="hash")
        found = by_hash
    return {"checkpoint": checkpoint_json(found)}, checkpoint_text(found)


class ListCheckpoints(Arguments):
    space_id: Id
    branch: Text = MAIN_BRANCH
    first: Count = 20


class BranchLine(Answer):
    branch: str
    checkpoints: list[CheckpointJson]


@tool(
    "list_checkpoints",
    title="List a branch's checkpoints",
    description="The checkpoints of one branch of a space, newest (the branch head) "
    "first, back through its parents (a fork's line continues into the branch it "
    'came from). The branch is "main" unless you name another.',
    arguments=ListCheckpoints,
    answer=BranchLine,
)
async def list_checkpoints(_services: Services, actor: Actor, args: ListCheckpoints) -> Result:
    space_id, branch = args.space_id, args.branch
    spaces = await reading.spaces_by_id(actor, [space_id])
    if space_id not in spaces:
        raise NotFound("No such space.", field="spaceId")
    heads = dict((await reading.branches(actor, [space_id])).get(space_id, []))
    if branch not in heads:
        raise NotFound(f'No branch "{branch[:100]}" in this space.', field="branch")
    head = (await reading.checkpoints_by_id(actor, [heads[branch]]))[heads[branch]]
    line = [head, *await reading.ancestors(actor, head, args.first - 1)]
    text = "\n".join(checkpoint_line(c) for c in line)
    return {"branch": branch, "checkpoints": [checkpoint_json(c) for c in line]}, text


class CompareCheckpoints(Arguments):
    a: Annotated[Id, Field(description="A checkpoint id.")]
    b: Annotated[Id, Field(description="Another.")]


class Compared(Answer):
    only_a: list[str]
    only_b: list[str]
    shared: list[str]


# Each list field of the registry compared.
Comparison = create_model(  # type: ignore[call-overload]
    "Comparison",
    __base__=Answer,
    a=(CheckpointJson, ...),
    b=(CheckpointJson, ...),
    **{f.attr: (Compared, Field(alias=f.name)) for f in CONTENT_LIST_FIELDS},
    common_ancestor=(CheckpointJson | None, ...),
)


@tool(
    "compare_checkpoints",
    title="Compare two checkpoints",
    description="What two checkpoints (of any branches) share and where they differ: "
    "for decisions, tasks, open questions and entities, the items only in a, only in b, "
    "and in both (matched ignoring case, punctuation and spacing), and the nearest "
    "checkpoint both descend from (null when they share none).",
    arguments=CompareCheckpoints,
    answer=Comparison,
)
async def compare_checkpoints(
    _services: Services, actor: Actor, args: CompareCheckpoints
) -> Result:
    found = await checkpoints.compare(actor, args.a, args.b)
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
    lines = [f"a: {checkpoint_line(found.a)}", f"b: {checkpoint_line(found.b)}"]
    lines.append(
        f"common ancestor: {checkpoint_line(ancestor)}" if ancestor else "no common ancestor"
    )
    for f in CONTENT_LIST_FIELDS:
        compared = getattr(found, f.attr)
        for sign, items in (("-", compared.only_a), ("+", compared.only_b)):
            lines += [f"{f.label} {sign} {item}" for item in items]
    return answer, "\n".join(lines)


class VerifyLineage(Arguments):
    space_id: Id


class Broken(Answer):
    checkpoint_id: shapes.Id
    reason: Literal["HASH_MISMATCH", "MISSING_PARENT"]
    expected_hash: str | None


class Verified(Answer):
    ok: bool
    checked: shapes.Count
    first_broken: Broken | None


@tool(
    "verify_lineage",
    title="Verify a space's lineage",
    description="Recompute every checkpoint hash and parent link of a space, oldest "
    "first, and name the first checkpoint that does not verify (tampered with or "
    "missing its parent). ok is true when the whole lineage holds.",
    arguments=VerifyLineage,
    answer=Verified,
)
async def verify_lineage(_services: Services, actor: Actor, args: VerifyLineage) -> Result:
    result = await transfer.verify(actor, args.space_id)
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


TOOLS = (
    list_spaces,
    space_state,
    search,
    show_checkpoint,
    list_checkpoints,
    compare_checkpoints,
    verify_lineage,
)
__all__ = ["MAX_PAGE", "TOOLS"]
