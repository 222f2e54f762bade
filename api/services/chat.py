"""Sending a message: the one pipeline of sendMessage and messageStream.

    admit        every check of the message, in one order (``admit``)
    prepare      find a repeated idempotency key, resolve the context, write
                 the user's turn
    answering    for a turn with a key, the one request that asks the provider
                 (the others wait for its answer: ``api.services.answering``)
    the provider ``complete`` (sendMessage) or ``stream`` (messageStream),
                 with ``Prepared.context.messages``
    save_reply   write the assistant's turn, to its end whatever happens to
                 the request (see ``api.store.writes``)
    after_reply  background work once a session has its first answer

``streaming.stream_message`` walks the same steps as events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from ..domain.accounts import Actor
from ..domain.context import ContextOverride, ContextPlan, ResolvedContext
from ..domain.extraction import build_title_messages, parse_title
from ..domain.types import (
    Authorship,
    ChatMessage,
    ChatSettings,
    Finish,
    Role,
    Session,
    Turn,
    Usage,
)
from ..domain.validation import validate_content, validate_draft_content, validate_idempotency_key
from ..errors import Forbidden, InputError, ProviderError
from ..providers import ModelRef
from ..store import sessions, turns
from . import access, answering, policy
from .answering import Answered
from .base import Services, log
from .context import resolve_context


@dataclass(frozen=True)
class Message:
    """What sendMessage and messageStream send, as the caller gave it (unchecked)."""

    session_id: int
    content: str
    model: str | None = None
    idempotency_key: str | None = None
    override: ContextOverride | None = None


@dataclass(frozen=True)
class Preview:
    plan: ContextPlan
    messages: list[ChatMessage]
    model: ModelRef
    settings: ChatSettings


@dataclass(frozen=True)
class Exchange:
    """What sendMessage did. ``error`` is set when the provider failed; the
    user's turn is kept and the message can be retried."""

    user_turn: Turn
    assistant_turn: Turn | None
    plan: ContextPlan
    messages: list[ChatMessage]
    error: ProviderError | None = None


@dataclass(frozen=True)
class Admitted:
    """A message every check has passed: its session, content and model."""

    actor: Actor
    session: Session
    content: str
    ref: ModelRef
    message: Message
    # What ``admit`` read with the session for the message (the turn its
    # idempotency key was sent with, the newest turns). None (built elsewhere,
    # or a retry after a concurrent send): ``prepare`` reads them itself.
    found: sessions.ForMessage | None = None


class Early(Protocol):
    """A provider request started while the user's turn commits."""

    async def close(self) -> None:
        """Stop it (nothing was saved, or nobody will read it)."""


# Starts the provider's request for a turn about to be saved, with its context.
StartEarly = Callable[[ModelRef, ResolvedContext], Early]


@dataclass(frozen=True)
class Prepared:
    """A message whose user turn is saved, with the context it is sent with.

    ``repeated``: its idempotency key found the turn an earlier request wrote;
    ``reply`` is then set if that turn is answered already.

    For a continuation (``api.services.continuation``), ``continues`` is the
    cut-off reply the answer goes on from, ``user_turn`` the message both
    answer, and ``reply`` the continuation when there is one already."""

    session: Session
    ref: ModelRef
    user_turn: Turn
    context: ResolvedContext
    reply: Turn | None
    actor: Actor
    repeated: bool = False
    continues: Turn | None = None
    # The holder of the claim on answering ``user_turn``, written with it
    # (``answering.new_claim``): a new turn sent with an idempotency key.
    claimed: str | None = None
    # The provider's request, started as the user's turn committed (``prepare``'s ``early``).
    early: Early | None = None

    @property
    def author(self) -> Authorship:
        return self.actor.authorship


def session_model(session: Session) -> str:
    return f"{session.active_provider}/{session.active_model}"


async def preview(
    services: Services,
    actor: Actor,
    session_id: int,
    *,
    content: str,
    model: str | None,
    override: ContextOverride | None,
) -> Preview:
    """What the model would receive if ``content`` were sent now, for a reader
    of the session (what an explicit context names, the reader may read too)."""
    rule = policy.allow(actor, "contextPreview")
    content = validate_draft_content(content, max_bytes=services.settings.max_content_bytes)
    session = await access.session(actor, session_id, rule)
    ref = services.registry.resolve(model or session_model(session), require_available=False)
    context = await resolve_context(
        services,
        session,
        model=ref,
        new_message=content,
        override=override,
        readers=(actor.user_id,),
    )
    return Preview(context.plan, context.messages, ref, context.settings)


async def admit(services: Services, actor: Actor, message: Message, operation: str) -> Admitted:
    """Every check of a message, in one order, before anything is written
    (sendMessage and messageStream both come here, so the same bad input gets
    the same error from both):

        1. the actor's scope (the policy of ``operation``)    FORBIDDEN
        2. the session: theirs to write                       NOT_FOUND, FORBIDDEN
        3. the content                                        EMPTY_CONTENT, CONTENT_TOO_LARGE
        4. the idempotency key                                INVALID
        5. the model: known, theirs to use, its provider's key
                                   UNKNOWN_MODEL, FORBIDDEN, PROVIDER_UNAVAILABLE

    What an explicit context names is checked when it is resolved, still
    before the user's turn is written (``prepare``).
    """
    rule = policy.allow(actor, operation)
    # A valid key is looked up with the session and its newest turns (one
    # statement, not three); an invalid one is refused in its turn, below, and
    # never reaches the database.
    key, bad_key = message.idempotency_key, None
    if key is not None:
        try:
            validate_idempotency_key(key)
        except InputError as exc:
            key, bad_key = None, exc
    found = await access.message_session(
        actor,
        message.session_id,
        rule,
        idempotency_key=key,
        window=services.settings.max_window_turns,
    )
    session = found.session
    content = validate_content(message.content, max_bytes=services.settings.max_content_bytes)
    if bad_key is not None:
        raise bad_key
    registry = services.registry
    ref = registry.resolve(message.model or session_model(session), require_available=False)
    await access.check_model(actor, ref.name)
    registry.ensure_available(ref)  # refuses a provider with no key
    return Admitted(actor, session, content, ref, message, found=found)


async def send_message(services: Services, actor: Actor, message: Message) -> Exchange:
    prepared = await prepare(services, actor, message, operation="sendMessage")
    return await answer(services, prepared)


async def answer(services: Services, prepared: Prepared) -> Exchange:
    """Ask the provider for the reply to ``prepared``'s user turn (unless it
    has one, or another request with its key is asking) and save it."""
    user_turn, plan, messages = prepared.user_turn, prepared.context.plan, prepared.context.messages
    if prepared.reply is not None:
        return Exchange(user_turn, prepared.reply, plan, messages)
    taken = await answering.take(user_turn, repeated=prepared.repeated, claimed=prepared.claimed)
    if isinstance(taken, Answered):  # by the request that asked first, with this key
        return Exchange(user_turn, taken.reply, plan, messages, error=taken.error)
    try:
        completion = await services.registry.complete(
            messages, prepared.ref, parameters=prepared.context.settings.parameters
        )
    except ProviderError as exc:
        log.warning("provider call failed for session %s: %s", prepared.session.id, exc.code.value)
        taken.failed(exc)
        return Exchange(user_turn, None, plan, messages, error=exc)
    else:
        reply = await save_reply(
            services, prepared, completion.text, completion.usage, finish=completion.finish
        )
    finally:
        await taken.end()
    after_reply(services, prepared)
    return Exchange(user_turn, reply, plan, messages)


async def prepare(
    services: Services,
    actor: Actor,
    message: Message,
    *,
    operation: str,
    early: StartEarly | None = None,
) -> Prepared:
    """Check the message (``admit``), resolve its context, then write the
    user's turn (or find it, for a repeated idempotency key, with its reply if
    it has one).

    Everything that can be refused (content, model, explicit context) is
    refused before anything is written. The turn and its reply are recorded
    as the actor's (their token's name with it).

    ``early``: for a new turn, started once the write's statements have
    succeeded, while it commits (on PostgreSQL the commit is the write's
    longest wait); ``Prepared.early`` is what it returned. Should the write
    fail after all, it is closed before the error is raised: nothing of it
    is kept. A repeated key never starts it (it is answered, or waited for).
    """
    admitted = await admit(services, actor, message, operation)
    return await _prepare(services, admitted, early)


async def prepare_admitted(services: Services, admitted: Admitted) -> Prepared:
    """``prepare`` for a message whose checks have passed already (an edited
    message, sent in the branch made for it)."""
    return await _prepare(services, admitted)


async def _prepare(
    services: Services, admitted: Admitted, early: StartEarly | None = None
) -> Prepared:
    registry = services.registry
    session, ref, content, message = (
        admitted.session,
        admitted.ref,
        admitted.content,
        admitted.message,
    )
    override, idempotency_key = message.override, message.idempotency_key
    if idempotency_key is not None:
        earlier = await _keyed_turn(admitted, idempotency_key)
        if earlier is not None:
            # The original exchange, with the context it was sent with.
            context = await resolve_context(
                services,
                session,
                model=ref,
                new_message=earlier.content,
                override=override,
                before=earlier.sequence_number,
            )
            reply = await turns.reply_to(session.id, earlier.sequence_number)
            return Prepared(session, ref, earlier, context, reply, admitted.actor, repeated=True)
    # Read before the write: the window is the turns that precede this one
    # (a turn written concurrently lands after it, or before it unseen, as
    # if it had been sent a moment later).
    context = await resolve_context(
        services,
        session,
        model=ref,
        new_message=content,
        override=override,
        found=admitted.found,
    )
    # Claimed as it is written: a request sending the key again finds the turn
    # with its claim, and waits for this one's answer.
    claim = answering.new_claim() if idempotency_key is not None else None
    started: list[Early] = []
    abandoned = False

    def written() -> None:
        # In the write's task, which goes on if this request is cancelled.
        if early is None or abandoned:
            return
        try:
            started.append(early(ref, context))
        except Exception:
            # Never fail the write over it: the request is made again once the
            # turn is saved, and what stopped it is reported there as before.
            log.debug("the provider request could not start early", exc_info=True)

    try:
        user_turn = await turns.append(
            session.id,
            role=Role.USER,
            content=content,
            token_count=registry.count_tokens(content, ref),
            provider=ref.provider,
            model=ref.model,
            idempotency_key=idempotency_key,
            author=admitted.actor.authorship,
            claim=claim,
            written=written if early is not None else None,
        )
        if (ref.provider, ref.model) != (session.active_provider, session.active_model):
            session = await sessions.configure(
                session.owner_id, session.id, provider=ref.provider, model=ref.model
            )
    except BaseException as exc:
        abandoned = True
        for request in started:
            await request.close()
        if isinstance(exc, turns.DuplicateKey):
            # A concurrent send with the same key wrote the user turn first: this
            # one goes on as a retry of it (save_reply keeps one reply per turn).
            return await _prepare(services, replace(admitted, found=None))
        raise
    claimed = claim[0] if claim is not None else None
    return Prepared(
        session,
        ref,
        user_turn,
        context,
        None,
        admitted.actor,
        claimed=claimed,
        early=started[0] if started else None,
    )


async def _keyed_turn(admitted: Admitted, key: str) -> Turn | None:
    """The turn ``key`` was sent with in the admitted message's session, if any."""
    found = admitted.found
    if found is None:
        return await turns.by_idempotency_key(admitted.session.id, key)
    if found.keyed_turn_id is None:
        return None
    return await turns.by_id(found.keyed_turn_id)


async def save_reply(
    services: Services, prepared: Prepared, text: str, usage: Usage | None, *, finish: Finish
) -> Turn:
    """Write the assistant's turn for ``prepared``, with why it ended (a reason
    that cut it off marks it interrupted).

    The store runs the write in a task of its own behind ``asyncio.shield``
    (``api.store.writes``): a request cancelled now (client gone, server
    stopping) stops waiting, and the turn is written all the same.
    """
    ref, continues = prepared.ref, prepared.continues
    try:
        return await turns.append(
            prepared.session.id,
            role=Role.ASSISTANT,
            content=text,
            token_count=services.registry.count_tokens(text, ref),
            provider=ref.provider,
            model=ref.model,
            usage=usage,
            finish=finish,
            reply_to_sequence=prepared.user_turn.sequence_number,
            # A reply is continued once (the store checks every continuation).
            continues_sequence=continues.sequence_number if continues else None,
            # Only a turn sent with an idempotency key can be answered twice
            # (the key sent again before the first reply was saved); checking
            # costs a statement, so other turns skip it.
            first_reply_only=continues is None and prepared.user_turn.idempotency_key is not None,
            author=prepared.author,
            # Which settings produced it (none set: nothing recorded).
            settings=None if prepared.context.settings.empty else prepared.context.settings,
        )
    except turns.AlreadyAnswered as answered:
        # The same idempotency key, sent again before the first reply was
        # saved, was answered first (or the same reply continued twice at
        # once): that reply is the answer, for both.
        return answered.reply


def after_reply(services: Services, prepared: Prepared) -> None:
    """Name an untitled session from its first exchange, in the background."""
    session = prepared.session
    if services.settings.title_sessions and not session.title:
        services.spawn(title_session(services, prepared.actor, session), "title-session")


async def title_session(services: Services, actor: Actor, session: Session) -> None:
    """Name an untitled session from its first exchange: the sender's action
    causes the call, so it goes to a model they may use (the background model,
    or for a non-admin when it is kept for admins, the first one they may use;
    none: the session stays untitled)."""
    first = await turns.in_range(session.id, 1, 4)
    if not first:
        return
    try:
        ref = await access.background_model(services.registry, actor)
    except Forbidden:
        log.info("session %s stays untitled: no model its author may use", session.id)
        return
    completion = await services.registry.complete(build_title_messages(first), ref)
    title = parse_title(completion.text)
    await sessions.name_if_untitled(session.owner_id, session.id, title)
