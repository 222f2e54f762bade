"""Context resolution — which checkpoints and which turns the model sees.

This module is the only place the rules of DESIGN §2 live. It is pure: the
store gathers facts (the session, the branch head, the chain, the turns after a
boundary) and these functions decide. Resolution happens in two steps because
what the store must read depends on the first decision:

1. ``choose_source`` — from the session and an optional explicit override,
   decide the mode, the checkpoint at the tip of the chain, how many
   checkpoints of the chain to use, and the boundary (turns with a sequence
   number greater than it are eligible).
2. ``build_plan`` — from the chain and the eligible turns, keep the most recent
   turns that fit the token budget, and return the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from api.domain.types import (
    Checkpoint,
    ContextMode,
    MemoryScope,
    Role,
    Session,
    Turn,
)
from api.errors import ErrorCode, InputError


@dataclass(frozen=True, slots=True)
class ContextOverride:
    """An explicit context sent with a message by a stateless client."""

    space_id: int | None = None
    checkpoint_id: int | None = None
    base_sequence: int | None = None
    memory_scope: MemoryScope | None = None


@dataclass(frozen=True, slots=True)
class ContextSource:
    """Step 1's decision: where the chain starts and where the turns start."""

    mode: ContextMode
    space_id: int | None
    tip_checkpoint_id: int | None
    depth: int
    # Turns with sequence_number > after_sequence (and < before_sequence) are eligible.
    after_sequence: int
    # The head's boundary is known only after reading the head checkpoint.
    boundary_from_head: bool = False


@dataclass(frozen=True, slots=True)
class Budget:
    """How many tokens and turns the window may hold."""

    tokens: int
    max_turns: int


@dataclass(frozen=True, slots=True)
class ContextPlan:
    mode: ContextMode
    space_id: int | None
    checkpoints: tuple[Checkpoint, ...]  # oldest first
    turns: tuple[Turn, ...]  # in sequence order
    boundary: int  # turns at or below this sequence number are never seen
    token_estimate: int

    @property
    def tip(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None


def choose_source(
    session: Session,
    *,
    override: ContextOverride | None = None,
    override_checkpoint: Checkpoint | None = None,
    head: Checkpoint | None = None,
) -> ContextSource:
    """Decide mode, chain tip, depth and turn boundary for a session.

    ``override_checkpoint`` is the checkpoint named by ``override.checkpoint_id``
    (or by the session's mount when there is no override), already read by the
    caller; ``head`` is the head of the session's branch in the effective space.
    """
    scope = (override.memory_scope if override else None) or session.memory_scope
    space_id = (override.space_id if override else None) or session.space_id
    last = session.last_sequence_number

    if override is not None and override.checkpoint_id is not None:
        checkpoint = _require(override_checkpoint, override.checkpoint_id)
        if space_id is not None and checkpoint.space_id != space_id:
            raise InputError(
                "That checkpoint belongs to another space.",
                code=ErrorCode.WRONG_SPACE,
                field="context.checkpointId",
            )
        base = last if override.base_sequence is None else override.base_sequence
        if base < 0:
            raise InputError("baseSequence cannot be negative.", field="context.baseSequence")
        return ContextSource(
            ContextMode.MOUNTED, checkpoint.space_id, checkpoint.id, scope.depth, base
        )

    if session.mount is not None and (
        override is None or override.space_id is None or override.space_id == session.space_id
    ):
        checkpoint = _require(override_checkpoint, session.mount.checkpoint_id)
        return ContextSource(
            ContextMode.MOUNTED,
            checkpoint.space_id,
            checkpoint.id,
            scope.depth,
            session.mount.base_sequence,
        )

    if space_id is None:
        return ContextSource(ContextMode.FRESH, None, None, 0, 0)

    if head is None:
        # A space with no checkpoint on this branch yet: nothing to recall, and
        # every turn of the session is "after the head".
        return ContextSource(ContextMode.HEAD, space_id, None, scope.depth, 0)
    return ContextSource(
        ContextMode.HEAD, space_id, head.id, scope.depth, 0, boundary_from_head=True
    )


def head_boundary(session: Session, head: Checkpoint, turns_before_head: int) -> int:
    """The last sequence number of ``session`` that was written before ``head``.

    When the head was saved from this session, the checkpoint recorded the
    exact boundary. Otherwise the store tells us how far the session had got
    when the head was saved (``turns_before_head``).
    """
    if head.source_session_id == session.id:
        return head.base_sequence
    return turns_before_head


def build_plan(
    source: ContextSource,
    *,
    boundary: int,
    chain: Sequence[Checkpoint],
    recent_turns: Sequence[Turn],
    budget: Budget,
    reserved_tokens: int = 0,
) -> ContextPlan:
    """Assemble the plan.

    ``chain`` is the tip and its ancestors, tip first (as a parent walk reads
    them); only ``source.depth`` of them are kept and they are returned oldest
    first. ``recent_turns`` are the session's turns after ``boundary``, newest
    first (as the store reads them), possibly more than fit. ``reserved_tokens``
    is what the rest of the prompt (checkpoint block, new message) costs.
    """
    checkpoints = tuple(reversed(tuple(chain)[: source.depth]))
    window: list[Turn] = []
    spent = reserved_tokens
    previous_sequence: int | None = None
    for turn in recent_turns:
        if previous_sequence is not None and turn.sequence_number >= previous_sequence:
            raise ValueError("recent_turns must be newest first")
        previous_sequence = turn.sequence_number
        if turn.sequence_number <= boundary:
            break
        if turn.role is Role.SYSTEM:
            continue
        if len(window) >= budget.max_turns or spent + turn.token_count > budget.tokens:
            break
        window.append(turn)
        spent += turn.token_count
    window.reverse()
    return ContextPlan(
        mode=source.mode,
        space_id=source.space_id,
        checkpoints=checkpoints,
        turns=tuple(window),
        boundary=boundary,
        token_estimate=spent,
    )


def _require(checkpoint: Checkpoint | None, checkpoint_id: int) -> Checkpoint:
    if checkpoint is None or checkpoint.id != checkpoint_id:
        raise InputError("No such checkpoint.", code=ErrorCode.NOT_FOUND, field="checkpointId")
    return checkpoint
