"""Continuing a cut-off reply: continueReply, and continueReplyStream its streamed twin.

    admit     every check, in sendMessage's order (``admit``)
    prepare   the reply's question, an earlier continuation of it, the context
              (the next message's, with the cut-off reply last and the
              instruction after it: ``api.domain.continuation``)
    the provider, then ``chat.save_reply``: a new assistant turn that
              continues the cut-off one (and answers the same user turn)

A reply is continued once: continuing it again — a retried request, a second
click — returns the continuation already saved, without a model call; two at
once may both call the model, and the first saved is the answer for both (the
store refuses a second continuation of one reply). So there is no
idempotency key to send: the cut-off reply's id is the key.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from ..domain.accounts import Actor
from ..domain.context import ContextPlan
from ..domain.continuation import CONTINUE_INSTRUCTION, check_continuable, check_in_window
from ..domain.types import ChatMessage, Session, Turn
from ..errors import NotFound, ProviderError, SmritiError
from ..providers import ModelRef
from ..store import turns
from . import access, policy
from .base import Services, log
from .chat import Prepared, after_reply, save_reply
from .context import resolve_context
from .streaming import Delta, Failed, ReplySaved, replayed, stream_reply


@dataclass(frozen=True)
class Continue:
    """What continueReply and continueReplyStream send, as the caller gave it (unchecked)."""

    turn_id: int
    model: str | None = None


@dataclass(frozen=True)
class Continued:
    """What continueReply did: the cut-off reply, its continuation (None when
    the provider failed: ``error``; nothing was written) and the context sent."""

    cut_off: Turn
    continuation: Turn | None
    plan: ContextPlan
    messages: list[ChatMessage]
    model: str  # "provider/model"
    error: ProviderError | None = None


@dataclass(frozen=True)
class Continuing:
    """The first event of continueReplyStream: what is continued, with what."""

    cut_off: Turn
    plan: ContextPlan
    messages: list[ChatMessage]
    model: str  # "provider/model"


ContinueEvent = Continuing | Delta | ReplySaved | Failed


def turn_model(turn: Turn) -> str | None:
    """The cut-off reply's own model ("provider/model"), which continues it by default."""
    return f"{turn.provider}/{turn.model}" if turn.provider and turn.model else None


@dataclass(frozen=True)
class Admitted:
    """A continuation every check has passed; ``earlier``: the reply's
    continuation when it has one already."""

    session: Session
    cut_off: Turn
    ref: ModelRef
    earlier: Turn | None


async def admit(services: Services, actor: Actor, request: Continue, operation: str) -> Admitted:
    """Every check of a continuation, in sendMessage's order (``chat.admit``),
    before the model is called:

        1. the actor's scope (the policy of ``operation``)    FORBIDDEN
        2. the turn's session: theirs to write                NOT_FOUND, FORBIDDEN
        3. the turn: a cut-off reply, the session's last      INVALID
           (one continued already passes: its continuation is the answer)
        4. the model (default: the reply's own): known, theirs to use, its
           provider's key        UNKNOWN_MODEL, FORBIDDEN, PROVIDER_UNAVAILABLE
    """
    rule = policy.allow(actor, operation)
    cut_off, session = await access.turn(actor, request.turn_id, rule)
    earlier = await turns.continuation_of(session.id, cut_off.sequence_number)
    check_continuable(cut_off, session, continued=earlier is not None)
    registry = services.registry
    ref = registry.resolve(request.model or turn_model(cut_off), require_available=False)
    await access.check_model(actor, ref.name)
    registry.ensure_available(ref)
    return Admitted(session, cut_off, ref, earlier)


async def prepare(
    services: Services, actor: Actor, request: Continue, *, operation: str
) -> Prepared:
    """Check the request (``admit``), then find what the continuation answers
    and the context it is sent with; a reply continued already comes back with
    its continuation as ``Prepared.reply``. Nothing is written."""
    admitted = await admit(services, actor, request, operation)
    session, cut_off = admitted.session, admitted.cut_off
    context = await resolve_context(
        services,
        session,
        model=admitted.ref,
        new_message=CONTINUE_INSTRUCTION,
        before=cut_off.sequence_number + 1,
    )
    if admitted.earlier is None:
        check_in_window(context.plan, cut_off)
    return Prepared(
        session,
        admitted.ref,
        await _question(session, cut_off),
        context,
        admitted.earlier,
        actor,
        continues=cut_off,
    )


async def continue_reply(services: Services, actor: Actor, request: Continue) -> Continued:
    """Ask the model to go on from a cut-off reply; save what it writes as a new
    assistant turn right after it. A provider failure writes nothing."""
    prepared = await prepare(services, actor, request, operation="continueReply")
    cut_off = prepared.continues
    assert cut_off is not None
    plan, messages, model = prepared.context.plan, prepared.context.messages, prepared.ref.name
    if prepared.reply is not None:
        return Continued(cut_off, prepared.reply, plan, messages, model)
    try:
        completion = await services.registry.complete(
            messages, prepared.ref, parameters=prepared.context.settings.parameters
        )
    except ProviderError as exc:
        log.warning("provider call failed for session %s: %s", prepared.session.id, exc.code.value)
        return Continued(cut_off, None, plan, messages, model, error=exc)
    continuation = await save_reply(
        services, prepared, completion.text, completion.usage, finish=completion.finish
    )
    after_reply(services, prepared)
    return Continued(cut_off, continuation, plan, messages, model)


async def stream_continuation(
    services: Services, actor: Actor, request: Continue
) -> AsyncGenerator[ContinueEvent, None]:
    """continueReply with the answer streamed: ``Continuing``, ``Delta`` …, then
    ``ReplySaved`` or ``Failed`` (alone: refused, nothing written). Stopping it
    (closing the generator) keeps what arrived, as streamed replies do."""
    try:
        prepared = await prepare(services, actor, request, operation="continueReplyStream")
    except SmritiError as exc:
        yield Failed(exc)
        return
    cut_off = prepared.continues
    assert cut_off is not None
    context = prepared.context
    yield Continuing(cut_off, context.plan, context.messages, prepared.ref.name)
    if prepared.reply is not None:  # continued already
        for replay in replayed(prepared.reply):
            yield replay
        return
    # No claim to hold (``answering``): a reply is continued once, by the store.
    async with aclosing(stream_reply(services, prepared)) as events:
        async for event in events:
            yield event


async def _question(session: Session, cut_off: Turn) -> Turn:
    """The user turn the cut-off reply answers: the continuation answers it too."""
    sequence = cut_off.reply_to_sequence
    found = await turns.in_range(session.id, sequence, sequence) if sequence else []
    if not found:  # check_continuable saw reply_to_sequence; turns are never deleted alone
        raise NotFound("No such turn.", field="turnId")
    return found[0]
