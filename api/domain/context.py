"""Context resolution — which checkpoints and which turns the model sees.

This module is the only place the rules of docs/architecture.md#context-modes live. It is pure. The
store asks ``facts_wanted`` what to read and reads it all in one call (a
``ContextFacts``); ``resolve`` then turns the session, the explicit context,
those facts, the budget and a token counter into the plan and the messages.
Every caller (sendMessage, messageStream, contextPreview, checkpoint drafts)
goes through that one function. Inside it:

1. ``choose_source`` — from the session and an optional explicit override,
   decide the mode, the checkpoint at the tip of the chain, how many
   checkpoints of the chain to use, and the boundary (turns with a sequence
   number greater than it are eligible).
2. ``build_plan`` — from the chain and the eligible turns, keep the most recent
   turns that fit the token budget.
3. ``start_at_user_turn`` — the window begins with a user turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..errors import ErrorCode, InputError
from .prompt import render_messages, render_system
from .types import (
    NO_SETTINGS,
    ChatMessage,
    ChatSettings,
    Checkpoint,
    ContextMode,
    MemoryScope,
    Role,
    Session,
    Turn,
)


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
    # The session's effective instructions, first in the system message.
    instructions: str | None = None

    @property
    def tip(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None


@dataclass(frozen=True, slots=True)
class FactsWanted:
    """What the rules will look at, so the store can read it all at once."""

    # The explicit context's space, checked to exist and be the user's.
    space_id: int | None
    # The checkpoint at the tip of the chain when it is known up front (an
    # explicit checkpoint, or the mount); ``explicit`` when the client named it.
    checkpoint_id: int | None
    explicit: bool
    # (space, branch) whose head is the tip, when no checkpoint is named.
    head_of: tuple[int, str] | None
    depth: int


@dataclass(frozen=True, slots=True)
class ContextFacts:
    """Everything the context rules need, read by the store in one call."""

    checkpoint: Checkpoint | None  # FactsWanted.checkpoint_id, read
    head: Checkpoint | None  # the branch head, for HEAD mode
    chain: tuple[Checkpoint, ...]  # the tip (checkpoint or head) and ancestors, tip first
    # The session's last sequence number when the head was saved (0 when the
    # head was saved from this session, which records its own boundary).
    written_before_head: int
    # The session's newest turns (before the message's own), newest first, at
    # most the budget's max_turns: the boundary is applied by ``resolve``.
    recent: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class ResolvedContext:
    """The plan and exactly the messages a provider receives for it."""

    plan: ContextPlan
    messages: list[ChatMessage]
    # The effective settings the messages were built with (instructions
    # included in them); the parameters go beside them to the provider.
    settings: ChatSettings = NO_SETTINGS


def facts_wanted(session: Session, override: ContextOverride | None) -> FactsWanted:
    """What ``resolve`` will need to know about ``session`` and ``override``."""
    scope = (override.memory_scope if override else None) or session.memory_scope
    space_id = (override.space_id if override else None) or session.space_id
    explicit_space = override.space_id if override else None
    if override is not None and override.checkpoint_id is not None:
        return FactsWanted(explicit_space, override.checkpoint_id, True, None, scope.depth)
    if session.mount is not None and _mount_applies(session, override):
        return FactsWanted(explicit_space, session.mount.checkpoint_id, False, None, scope.depth)
    head_of = None if space_id is None else (space_id, session.branch_name)
    return FactsWanted(explicit_space, None, False, head_of, scope.depth)


def resolve(
    session: Session,
    override: ContextOverride | None,
    facts: ContextFacts,
    *,
    budget: Budget,
    count_tokens: Callable[[str], int],
    new_message: str,
    settings: ChatSettings = NO_SETTINGS,
) -> ResolvedContext:
    """The context of ``new_message``: the plan, and the messages to send.

    ``settings`` are the session's effective ones (``api.domain.chat_settings``):
    their instructions open the system message and are counted in the token
    estimate like the checkpoint block; they are returned with the plan, to
    be sent (the parameters) and recorded on the reply.

    Raises ``InputError`` for an explicit context the rules refuse.
    """
    source = choose_source(
        session, override=override, override_checkpoint=facts.checkpoint, head=facts.head
    )
    boundary = source.after_sequence
    if source.boundary_from_head and facts.head is not None:
        boundary = head_boundary(session, facts.head, facts.written_before_head)
    chain = facts.chain if source.tip_checkpoint_id is not None else ()
    recalled = () if source.mode is ContextMode.FRESH else chain[: source.depth]
    instructions = settings.instructions
    block = render_system(instructions, list(reversed(recalled)))
    reserved = count_tokens(new_message) + (count_tokens(block) if block else 0)
    plan = build_plan(
        source,
        boundary=boundary,
        chain=chain,
        recent_turns=facts.recent,
        budget=budget,
        reserved_tokens=reserved,
    )
    plan = replace(plan, instructions=instructions)
    plan = start_at_user_turn(plan)
    return ResolvedContext(plan, render_messages(plan, new_message), settings)


def start_at_user_turn(plan: ContextPlan) -> ContextPlan:
    """Drop the window's leading assistant turns.

    The window is trimmed from the newest backwards (and an explicit
    baseSequence can fall anywhere), so it may begin with an answer whose
    question was left out; providers such as Anthropic refuse a conversation
    that does not open with a user message, and an answer to an unseen
    question misleads every model.
    """
    turns = plan.turns
    first_user = next((i for i, turn in enumerate(turns) if turn.role is Role.USER), len(turns))
    if first_user == 0:
        return plan
    dropped = sum(turn.token_count for turn in turns[:first_user])
    return replace(plan, turns=turns[first_user:], token_estimate=plan.token_estimate - dropped)


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

    if session.mount is not None and _mount_applies(session, override):
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

    On a conversation branch (``api.domain.branching``), which holds copies of
    its origin's turns 1..t with their creation times, the rule is the same
    and sees exactly the branch's own line after the boundary:

    - a head saved from the origin at base b: the branch shares 1..min(b, t)
      with what the checkpoint was made from, so the boundary is min(b, t)
      (b <= t: the turns after b, copies and its own; b > t: every turn of
      its own after t — the origin's t+1..b are not on its line);
    - a head saved from another session: the branch's turns written before
      the head was saved (copies count at their original times), as for any
      session on the branch.
    """
    if head.source_session_id == session.id:
        return head.base_sequence
    branched = session.branched_from
    if branched is not None and head.source_session_id == branched.session_id:
        return min(head.base_sequence, branched.after_sequence)
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


def _mount_applies(session: Session, override: ContextOverride | None) -> bool:
    """The mount holds unless the explicit context names another space."""
    return override is None or override.space_id is None or override.space_id == session.space_id


def _require(checkpoint: Checkpoint | None, checkpoint_id: int) -> Checkpoint:
    if checkpoint is None or checkpoint.id != checkpoint_id:
        raise InputError("No such checkpoint.", code=ErrorCode.NOT_FOUND, field="checkpointId")
    return checkpoint
