"""Conversation branches (issue 21 §1): fork at a turn, regenerate a reply,
edit a sent message and send it again — each a new session of the family,
the old line kept (``api.domain.branching``).

    forkSession(atTurnId)    the branch holding turns 1..t of the turn's session
    regenerate(turnId)       a reply at k: the branch after k-1, and the reply's
                             question (copied into it) answered again
    editAndResend(turnId)    a message at k: the branch after k-1, and the new
                             content sent there as sendMessage sends it

The branch copies the origin's turns 1..t in one statement
(``api.store.sessions.create_branch``), so every read of a session — its
context, export, search, exchange numbers — works on it unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from ..domain.accounts import Actor
from ..domain.branching import Alternatives, alternatives_at, branch_points
from ..domain.types import Role, Session, Turn
from ..domain.validation import validate_content, validate_idempotency_key, validate_title
from ..errors import InputError, NotFound, SmritiError
from ..store import sessions, turns
from . import access, chat, policy
from .base import Services
from .chat import Admitted, Exchange, Message, Prepared, session_model
from .context import resolve_context
from .streaming import Failed, StreamEvent, stream_prepared


@dataclass(frozen=True)
class Branched:
    """What regenerate and editAndResend did: the new branch and its exchange
    (``exchange.error`` when the provider failed: the branch and its user
    turn are kept, and the reply can be asked for again)."""

    session: Session
    exchange: Exchange


async def fork_at_turn(actor: Actor, turn_id: int, *, title: str | None) -> Session:
    """A branch of the turn's session holding its turns 1..t (t: the turn's
    sequence number), for the session's author."""
    policy.allow(actor, "forkSession")
    turn, origin = await access.turn(actor, turn_id, policy.BRANCH_AT_TURN, field="atTurnId")
    return await sessions.create_branch(
        origin,
        after_sequence=turn.sequence_number,
        title=validate_title(title) if title else origin.title,
    )


async def regenerate(
    services: Services, actor: Actor, turn_id: int, *, model: str | None = None
) -> Branched:
    """Answer a reply's question again, in a branch that leaves the reply out."""
    prepared = await _regenerating(services, actor, turn_id, model, "regenerate")
    return await _answered(services, prepared)


async def stream_regenerate(
    services: Services, actor: Actor, turn_id: int, *, model: str | None = None
) -> AsyncGenerator[StreamEvent, None]:
    """regenerate with the reply streamed, as messageStream streams one: the
    question (the branch's copy, its session the branch) first."""
    try:
        prepared = await _regenerating(services, actor, turn_id, model, "regenerateStream")
    except SmritiError as exc:
        yield Failed(exc)
        return
    async with aclosing(stream_prepared(services, prepared)) as events:
        async for event in events:
            yield event


async def _regenerating(
    services: Services, actor: Actor, turn_id: int, model: str | None, operation: str
) -> Prepared:
    """Checks, in sendMessage's order: the scope (FORBIDDEN); the turn's session,
    the actor's to write (NOT_FOUND, FORBIDDEN); the turn, a reply (INVALID);
    the model (default: the session's), known, theirs, its provider's key
    (UNKNOWN_MODEL, FORBIDDEN, PROVIDER_UNAVAILABLE). Nothing is written
    before. Then the branch after the reply's turn k-1, and its copy of the
    reply's question, ready to be answered with the branch's context."""
    rule = policy.allow(actor, operation)
    reply, origin = await access.turn(actor, turn_id, rule)
    if reply.role is not Role.ASSISTANT or reply.reply_to_sequence is None:
        raise InputError("Only a reply can be regenerated.", field="turnId")
    registry = services.registry
    ref = registry.resolve(model or session_model(origin), require_available=False)
    await access.check_model(actor, ref.name)
    registry.ensure_available(ref)
    branch = await sessions.create_branch(
        origin, after_sequence=reply.sequence_number - 1, title=origin.title
    )
    question = await _turn_at(branch.id, reply.reply_to_sequence)
    context = await resolve_context(
        services,
        branch,
        model=ref,
        new_message=question.content,
        before=question.sequence_number,
    )
    return Prepared(branch, ref, question, context, None, actor)


@dataclass(frozen=True)
class Edit:
    """What editAndResend sends, as the caller gave it (unchecked)."""

    turn_id: int
    content: str
    model: str | None = None
    idempotency_key: str | None = None


async def edit_and_resend(services: Services, actor: Actor, edit: Edit) -> Branched:
    """Send new content in place of a sent message, in a branch that leaves
    the message (and what followed it) out."""
    prepared = await _editing(services, actor, edit, "editAndResend")
    return await _answered(services, prepared)


async def _answered(services: Services, prepared: Prepared) -> Branched:
    """The exchange, and the branch as it left it. ``prepared.session`` was
    read when the branch was made, before the exchange wrote its turns: its
    ``last_sequence_number`` is the branch point's (3 for a reply regenerated
    at 4), so the branch is read again, once its turns are written."""
    exchange = await chat.answer(services, prepared)
    made = prepared.session
    return Branched(await sessions.get(made.owner_id, made.id), exchange)


async def stream_edit_and_resend(
    services: Services, actor: Actor, edit: Edit
) -> AsyncGenerator[StreamEvent, None]:
    """editAndResend with the reply streamed, as messageStream streams one."""
    try:
        prepared = await _editing(services, actor, edit, "editAndResendStream")
    except SmritiError as exc:
        yield Failed(exc)
        return
    async with aclosing(stream_prepared(services, prepared)) as events:
        async for event in events:
            yield event


async def _editing(services: Services, actor: Actor, edit: Edit, operation: str) -> Prepared:
    """Checks, in sendMessage's order: the scope (FORBIDDEN); the turn's session,
    the actor's to write (NOT_FOUND, FORBIDDEN); the turn, a message of the
    user's (INVALID); the content (EMPTY_CONTENT, CONTENT_TOO_LARGE); the key
    (INVALID); the model (UNKNOWN_MODEL, FORBIDDEN, PROVIDER_UNAVAILABLE).
    Then the branch after the message's turn k-1 and the new message saved
    there, as sendMessage saves one. The same key sent again for the same
    message finds that branch and its turn (the reply asked for again if it
    failed), not a second branch."""
    rule = policy.allow(actor, operation)
    edited, origin = await access.turn(actor, edit.turn_id, rule)
    if edited.role is not Role.USER:
        raise InputError("Only a message of the user's can be edited.", field="turnId")
    content = validate_content(edit.content, max_bytes=services.settings.max_content_bytes)
    key = edit.idempotency_key
    if key is not None:
        validate_idempotency_key(key)
    registry = services.registry
    ref = registry.resolve(edit.model or session_model(origin), require_available=False)
    await access.check_model(actor, ref.name)
    registry.ensure_available(ref)
    after = edited.sequence_number - 1
    branch = await sessions.branch_by_key(origin.id, after, key) if key is not None else None
    if branch is None:
        branch = await sessions.create_branch(origin, after_sequence=after, title=origin.title)
    message = Message(branch.id, content, edit.model, key)
    return await chat.prepare_admitted(services, Admitted(actor, branch, content, ref, message))


async def alternatives(actor: Actor, session: Session, position: int | None) -> list[Alternatives]:
    """Where ``session`` has alternatives (``position`` given: at that position
    only, with one alternative or more), among the sessions of its family the
    actor may read. One read of the family (``sessions.family``)."""
    members = await sessions.family(session.family_root_id)
    if position is None:
        found = list(branch_points(members, session.id))
    else:
        one = alternatives_at(members, session.id, position)
        found = [one] if one is not None else []
    if not found:
        return []
    ids = sorted({i for a in found for i in a.sessions} - {session.id})
    readable = set(await sessions.readable_many(actor.user_id, ids)) | {session.id}
    visible = []
    for entry in found:
        # The alternative on screen: the session itself, or the one whose turn
        # at that position it holds a copy of.
        current = entry.sessions[entry.index]
        kept = tuple(i for i in entry.sessions if i in readable or i == current)
        if position is None and len(kept) < 2:
            continue
        visible.append(Alternatives(entry.position, kept, kept.index(current)))
    return visible


async def _turn_at(session_id: int, sequence: int) -> Turn:
    found = await turns.in_range(session_id, sequence, sequence)
    if not found:  # a reply's question is before it, and turns are never deleted alone
        raise NotFound("No such turn.", field="turnId")
    return found[0]
