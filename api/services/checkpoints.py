"""Saving, drafting, mounting, forking and comparing checkpoints."""

from __future__ import annotations

from dataclasses import dataclass

from api.domain.accounts import Actor
from api.domain.carry import CarriedState, carry_forward
from api.domain.compare import Comparison, compare_checkpoints
from api.domain.context import ContextPlan
from api.domain.extraction import build_extraction_messages, parse_draft
from api.domain.hashing import checkpoint_hash, normalize_hash_prefix
from api.domain.types import (
    MAIN_BRANCH,
    Checkpoint,
    CheckpointContent,
    Session,
    TurnRange,
)
from api.domain.validation import (
    fork_title,
    validate_branch_name,
    validate_checkpoint_content,
)
from api.errors import ErrorCode, Forbidden, InputError
from api.services import access, policy
from api.services.base import Services
from api.services.chat import session_model
from api.services.context import resolve_context
from api.store import checkpoints, sessions

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
) -> Checkpoint:
    """Save a checkpoint from the actor's session into its space, as the
    policy's createCheckpoint allows."""
    rule = policy.allow(actor, "createCheckpoint")
    session = await access.session(actor, session_id, rule)
    if session.space_id is None:
        raise InputError(
            "Attach the session to a space before saving a checkpoint.",
            code=ErrorCode.NO_SPACE,
            field="sessionId",
        )
    await access.space(actor, session.space_id, rule.role, field="sessionId")
    content = validate_checkpoint_content(**content.columns())
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


async def mount(actor: Actor, session_id: int, checkpoint_id: int) -> Session:
    """Mount a checkpoint the author may read. A session in a space mounts that
    space's checkpoints; a session in no space may mount any they can read
    (how a viewer works from a space's lineage: mounting reads the space, it
    does not write it)."""
    rule = policy.allow(actor, "mountCheckpoint")
    session = await access.session(actor, session_id, rule)
    checkpoint, _ = await access.checkpoint(actor, checkpoint_id)
    if session.space_id is not None and checkpoint.space_id != session.space_id:
        raise InputError(
            "That checkpoint belongs to another space.",
            code=ErrorCode.WRONG_SPACE,
            field="checkpointId",
        )
    return await sessions.mount(session.owner_id, session.id, checkpoint.id)


async def fork(
    services: Services,
    actor: Actor,
    checkpoint_id: int,
    *,
    branch_name: str | None,
    title: str | None,
) -> Session:
    """A new session of the actor's continuing from a checkpoint.

    An editor or owner forks inside the space: a new branch, the session on it.
    A viewer cannot write the space (a branch is part of its lineage), so a
    viewer's fork is a private session of theirs in no space with the
    checkpoint mounted: it reads the lineage and adds nothing to it."""
    policy.allow(actor, "forkSession")
    checkpoint, role = await access.checkpoint(actor, checkpoint_id)
    registry = services.registry
    default = registry.resolve(await access.default_model(registry, actor), require_available=False)
    if not role.allows(policy.BRANCH_IN_SPACE):
        if branch_name is not None:
            raise Forbidden(
                "A viewer's fork is a session of theirs outside the space: it creates no "
                "branch (leave branchName out).",
                field="branchName",
            )
        return await sessions.create(
            actor.user_id,
            title=title or fork_title(checkpoint.content.title),
            space_id=None,
            memory_scope=services.settings.default_memory_scope,
            provider=default.provider,
            model=default.model,
            seeded_from_id=checkpoint.id,
            forked_from_id=checkpoint.id,
            mount_checkpoint_id=checkpoint.id,
        )
    if branch_name is None:
        branch_name = await _free_branch_name(checkpoint)
    else:
        branch_name = validate_branch_name(branch_name)
    return await sessions.create_fork(
        actor.user_id,
        checkpoint=checkpoint,
        branch_name=branch_name,
        title=title or fork_title(checkpoint.content.title),
        memory_scope=services.settings.default_memory_scope,
        provider=default.provider,
        model=default.model,
    )


async def _free_branch_name(checkpoint: Checkpoint) -> str:
    base = f"fork-{checkpoint.short_hash}"
    name, n = base, 1
    while await checkpoints.branch_exists(checkpoint.space_id, name) or name == MAIN_BRANCH:
        n += 1
        name = f"{base}-{n}"
    return name


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
