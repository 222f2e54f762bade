"""Gather the facts the context rules need, then let the rules decide.

The rules themselves are in ``api.domain.context``; this module only reads
what they ask for, with a number of statements that does not depend on how
long the session is or how deep the lineage goes.
"""

from __future__ import annotations

from api.domain.context import (
    Budget,
    ContextOverride,
    ContextPlan,
    build_plan,
    choose_source,
    head_boundary,
)
from api.domain.prompt import render_checkpoint_block
from api.domain.types import Checkpoint, ContextMode, Session
from api.errors import ErrorCode, InputError
from api.providers import ModelRef
from api.services.base import Services
from api.store import checkpoints, spaces, turns


async def resolve_plan(
    services: Services,
    session: Session,
    *,
    model: ModelRef,
    new_message: str,
    override: ContextOverride | None = None,
    before: int | None = None,
) -> ContextPlan:
    """The plan for the next message of ``session``.

    ``before`` excludes the message's own turn (and anything written after it)
    when the user turn is already saved.
    """
    settings = services.settings
    picked: Checkpoint | None = None
    if override is not None and override.space_id is not None:
        await spaces.get(session.owner_id, override.space_id, field="context.spaceId")
    if override is not None and override.checkpoint_id is not None:
        picked = await checkpoints.get(override.checkpoint_id, field="context.checkpointId")
        await _check_owned(session, picked)
    elif session.mount is not None:
        picked = await checkpoints.get(session.mount.checkpoint_id)

    source = choose_source(session, override=override, override_checkpoint=picked)
    head = None
    chain: list[Checkpoint] = []
    if source.mode is ContextMode.HEAD and source.space_id is not None:
        # Only HEAD mode needs the branch head; ask again now that it is known.
        # The head is the tip of the chain, so one read serves both.
        tip = await checkpoints.head_id(source.space_id, session.branch_name)
        if tip is not None:
            chain = await checkpoints.chain(tip, source.depth)
            head = chain[0] if chain else None
        source = choose_source(session, override=override, override_checkpoint=picked, head=head)
    boundary = source.after_sequence
    if source.boundary_from_head and head is not None:
        written_before = (
            0
            if head.source_session_id == session.id
            else await turns.last_sequence_at(session.id, head.created_at)
        )
        boundary = head_boundary(session, head, written_before)

    if source.tip_checkpoint_id is not None and not chain:
        chain = await checkpoints.chain(source.tip_checkpoint_id, source.depth)
    recent = await turns.recent(
        session.id, after=boundary, before=before, limit=settings.max_window_turns
    )
    kept = list(reversed(chain[: source.depth]))
    block = render_checkpoint_block(kept)
    registry = services.registry
    reserved = registry.count_tokens(new_message, model)
    if block:
        reserved += registry.count_tokens(block, model)
    budget = Budget(
        tokens=max(registry.context_window(model) - settings.answer_reserve_tokens, 0),
        max_turns=settings.max_window_turns,
    )
    return build_plan(
        source,
        boundary=boundary,
        chain=chain,
        recent_turns=recent,
        budget=budget,
        reserved_tokens=reserved,
    )


async def _check_owned(session: Session, checkpoint: Checkpoint) -> None:
    """A checkpoint of a space the user does not own does not exist for them."""
    try:
        await spaces.get(session.owner_id, checkpoint.space_id, field="context.checkpointId")
    except InputError as exc:
        raise InputError(
            "No such checkpoint.", code=ErrorCode.NOT_FOUND, field="context.checkpointId"
        ) from exc
