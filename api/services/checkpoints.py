"""Saving, drafting, mounting, forking and comparing checkpoints."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..domain.accounts import Actor
from ..domain.carry import CarriedState, carry_forward
from ..domain.compare import Comparison, compare_checkpoints
from ..domain.context import ContextPlan
from ..domain.extraction import build_extraction_messages, parse_draft
from ..domain.hashing import checkpoint_hash, normalize_hash_prefix
from ..domain.identity import ID_CHARS, assign_ids, given_ids
from ..domain.types import (
    Checkpoint,
    CheckpointContent,
    Session,
    TurnRange,
)
from ..domain.validation import (
    validate_checkpoint_content,
)
from ..errors import ErrorCode, InputError
from ..store import checkpoints
from . import access, policy
from .base import Services
from .chat import session_model
from .context import resolve_context

# Per list field (attribute name), each item's (id or None, text).
GivenItems = Mapping[str, Sequence[tuple[str | None, str]]]

# How far compareCheckpoints walks up to find a common ancestor.
COMPARE_DEPTH = 100_000


@dataclass(frozen=True)
class Draft:
    content: CheckpointContent  # extracted from the window, and nothing else
    source_turn_range: TurnRange | None
    model: str
    carried: CarriedState  # the parent-to-be's items, kept apart


async def get_readable(
    actor: Actor, checkpoint_id: int, *, field: str = "checkpointId"
) -> Checkpoint:
    """A checkpoint of a space the actor is a member of."""
    policy.allow(actor, "checkpoint")
    return (await access.checkpoint(actor, checkpoint_id, field=field))[0]


async def create(
    services: Services,
    actor: Actor,
    session_id: int,
    content: CheckpointContent,
    *,
    source_turn_range: TurnRange | None,
    author_agent: str = "user",
    items: GivenItems | None = None,
) -> Checkpoint:
    """Save a checkpoint from the actor's session into its space, as the
    policy's createCheckpoint allows.

    ``items``: per list field (attribute name) sent as items, each item's
    (id or None, text) in order; ``content`` holds their texts. The ids are
    given, kept or made as ``identity.assign_ids`` says."""
    session, content = await _saveable(actor, session_id, content, items)
    assert session.space_id is not None
    last = session.last_sequence_number
    if source_turn_range is not None:
        if not 1 <= source_turn_range.first <= source_turn_range.last <= last:
            raise InputError(
                f"sourceTurnRange must lie within 1..{last} with first <= last.",
                field="sourceTurnRange",
            )
    elif last > 0:
        plan = await _next_plan(services, session)
        if plan.turns:
            source_turn_range = TurnRange(plan.turns[0].sequence_number, last)
    return await checkpoints.create(
        space_id=session.space_id,
        branch_name=session.branch_name,
        content=content,
        author_agent=author_agent,
        source_session_id=session.id,
        source_turn_range=source_turn_range,
        base_sequence=last,
        compute_hash=checkpoint_hash,
        author=actor.authorship,
    )


async def check(
    actor: Actor,
    session_id: int,
    content: CheckpointContent,
    items: GivenItems | None = None,
) -> tuple[CheckpointContent, CarriedState]:
    """What ``create`` would save, validated and refused as it would be (its
    new items' ids are made up again when it is saved), with the items
    carried from the head it would continue; nothing is written."""
    session, content = await _saveable(actor, session_id, content, items)
    assert session.space_id is not None
    parent = await checkpoints.head(session.space_id, session.branch_name)
    return content, carry_forward(parent)


async def _saveable(
    actor: Actor,
    session_id: int,
    content: CheckpointContent,
    items: GivenItems | None,
) -> tuple[Session, CheckpointContent]:
    """The session a checkpoint is saved from, as the policy's
    createCheckpoint allows, and the content validated, every item with an
    id (the branch head's items keep theirs)."""
    rule = policy.allow(actor, "createCheckpoint")
    session = await access.session(actor, session_id, rule)
    if session.space_id is None:
        raise InputError(
            "Attach the session to a space before saving a checkpoint.",
            code=ErrorCode.NO_SPACE,
            field="sessionId",
        )
    await access.space(actor, session.space_id, rule.role, field="sessionId")
    valid = validate_checkpoint_content(**content.columns())
    parent = await checkpoints.head(session.space_id, session.branch_name)
    return session, assign_ids(valid, given_ids(valid, items or {}), parent, new_id=new_item_id)


def new_item_id() -> str:
    """A new item's id: 12 random lowercase hex characters (48 bits, so two
    items of one lineage do not share one)."""
    return secrets.token_hex(ID_CHARS // 2)


async def draft(services: Services, actor: Actor, session_id: int) -> Draft:
    """A draft of every field from exactly the window the next message would
    see, and nothing else: no checkpoint fields reach the extractor. Beside
    it, the state carried forward from the checkpoint a save would continue
    (the head of the session's branch, see ``create``).

    Drafted by the background model, or for an actor who may not use it, the
    first model they may use (``access.background_model``)."""
    rule = policy.allow(actor, "draftCheckpoint")
    session = await access.session(actor, session_id, rule)
    registry = services.registry
    plan = await _next_plan(services, session)
    if not plan.turns:
        raise InputError(
            "There are no turns after the context boundary to draft from.",
            code=ErrorCode.INVALID,
            field="sessionId",
        )
    background = await access.background_model(registry, actor)
    completion = await registry.complete(build_extraction_messages(plan.turns), background)
    content = parse_draft(completion.text)
    window = TurnRange(plan.turns[0].sequence_number, plan.turns[-1].sequence_number)
    parent = (
        await checkpoints.head(session.space_id, session.branch_name)
        if session.space_id is not None
        else None
    )
    return Draft(content, window, background.name, carry_forward(parent))


async def _next_plan(services: Services, session: Session) -> ContextPlan:
    """The window the session's next message would see."""
    model = services.registry.resolve(session_model(session), require_available=False)
    context = await resolve_context(services, session, model=model, new_message="")
    return context.plan


async def by_hash(actor: Actor, space_id: int, prefix: str) -> Checkpoint | None:
    rule = policy.allow(actor, "checkpointByHash")
    await access.space(actor, space_id, rule.role)
    found = await checkpoints.by_hash_prefix(space_id, normalize_hash_prefix(prefix))
    if len(found) > 1:
        raise InputError(
            f'The prefix "{prefix}" matches more than one checkpoint; give more characters.',
            code=ErrorCode.AMBIGUOUS_HASH,
            field="hash",
        )
    return found[0] if found else None


async def compare(actor: Actor, a_id: int, b_id: int) -> Comparison:
    policy.allow(actor, "compareCheckpoints")
    a, _ = await access.checkpoint(actor, a_id, field="a")
    b, _ = await access.checkpoint(actor, b_id, field="b")
    ancestors_a = (await checkpoints.chain(a.id, COMPARE_DEPTH))[1:]
    ancestors_b = (await checkpoints.chain(b.id, COMPARE_DEPTH))[1:]
    return compare_checkpoints(a, b, ancestors_a, ancestors_b)
