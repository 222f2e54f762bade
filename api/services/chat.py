"""Sending a message: the one pipeline of sendMessage and messageStream.

    prepare      check the message, find a repeated idempotency key, resolve
                 the context, write the user's turn
    the provider ``complete`` (sendMessage) or ``stream`` (messageStream),
                 with ``Prepared.context.messages``
    save_reply   write the assistant's turn, to its end whatever happens to
                 the request (see ``api.store.writes``)
    after_reply  background work once a session has its first answer

``streaming.stream_message`` walks the same steps as events.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.domain.context import ContextOverride, ContextPlan, ResolvedContext
from api.domain.extraction import build_title_messages, parse_title
from api.domain.types import Authorship, ChatMessage, Role, Session, Turn, Usage
from api.domain.validation import validate_content
from api.errors import ProviderError
from api.providers import ModelRef
from api.services.base import Services, log
from api.services.context import resolve_context
from api.store import sessions, turns


@dataclass(frozen=True)
class Preview:
    plan: ContextPlan
    messages: list[ChatMessage]
    model: ModelRef


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
class Prepared:
    """A message whose user turn is saved, with the context it is sent with;
    ``reply`` is set when a repeated idempotency key finds it already answered."""

    session: Session
    ref: ModelRef
    user_turn: Turn
    context: ResolvedContext
    reply: Turn | None
    author: Authorship


def session_model(session: Session) -> str:
    return f"{session.active_provider}/{session.active_model}"


async def preview(
    services: Services,
    session: Session,
    *,
    content: str,
    model: str | None,
    override: ContextOverride | None,
) -> Preview:
    ref = services.registry.resolve(model or session_model(session), require_available=False)
    context = await resolve_context(
        services, session, model=ref, new_message=content, override=override
    )
    return Preview(context.plan, context.messages, ref)


async def send_message(
    services: Services,
    session: Session,
    *,
    content: str,
    model: str | None = None,
    idempotency_key: str | None = None,
    override: ContextOverride | None = None,
    author: Authorship | None = None,
) -> Exchange:
    prepared = await prepare(
        services,
        session,
        content=content,
        model=model,
        idempotency_key=idempotency_key,
        override=override,
        author=author,
    )
    user_turn, plan, messages = prepared.user_turn, prepared.context.plan, prepared.context.messages
    if prepared.reply is not None:
        return Exchange(user_turn, prepared.reply, plan, messages)
    try:
        completion = await services.registry.complete(messages, prepared.ref)
    except ProviderError as exc:
        log.warning("provider call failed for session %s: %s", session.id, exc.code.value)
        return Exchange(user_turn, None, plan, messages, error=exc)
    reply = await save_reply(
        services, prepared, completion.text, completion.usage, interrupted=False
    )
    after_reply(services, prepared)
    return Exchange(user_turn, reply, plan, messages)


async def prepare(
    services: Services,
    session: Session,
    *,
    content: str,
    model: str | None,
    idempotency_key: str | None,
    override: ContextOverride | None,
    author: Authorship | None = None,
) -> Prepared:
    """Check the message, resolve its context, then write the user's turn (or
    find it, for a repeated idempotency key, with its reply if it has one).

    Everything that can be refused (content, model, explicit context) is
    refused before anything is written. ``author``: who sends it (None: the
    session's owner, without a token); the reply is recorded as theirs too.
    """
    author = author or Authorship(session.owner_id)
    registry = services.registry
    content = validate_content(content, max_bytes=services.settings.max_content_bytes)
    ref = registry.resolve(model or session_model(session))  # refuses a provider with no key
    if idempotency_key is not None:
        earlier = await turns.by_idempotency_key(session.id, idempotency_key)
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
            return Prepared(session, ref, earlier, context, reply, author)
    # Read before the write: the window is the turns that precede this one
    # (a turn written concurrently lands after it, or before it unseen, as
    # if it had been sent a moment later).
    context = await resolve_context(
        services, session, model=ref, new_message=content, override=override
    )
    try:
        user_turn = await turns.append(
            session.id,
            role=Role.USER,
            content=content,
            token_count=registry.count_tokens(content, ref),
            provider=ref.provider,
            model=ref.model,
            idempotency_key=idempotency_key,
            author=author,
        )
    except turns.DuplicateKey:
        # A concurrent send with the same key wrote the user turn first: this
        # one goes on as a retry of it (save_reply keeps one reply per turn).
        return await prepare(
            services,
            session,
            content=content,
            model=model,
            idempotency_key=idempotency_key,
            override=override,
            author=author,
        )
    if (ref.provider, ref.model) != (session.active_provider, session.active_model):
        session = await sessions.configure(
            session.owner_id, session.id, provider=ref.provider, model=ref.model
        )
    return Prepared(session, ref, user_turn, context, None, author)


async def save_reply(
    services: Services, prepared: Prepared, text: str, usage: Usage | None, *, interrupted: bool
) -> Turn:
    """Write the assistant's turn for ``prepared``.

    The store runs the write in a task of its own behind ``asyncio.shield``
    (``api.store.writes``): a request cancelled now (client gone, server
    stopping) stops waiting, and the turn is written all the same.
    """
    ref = prepared.ref
    try:
        return await turns.append(
            prepared.session.id,
            role=Role.ASSISTANT,
            content=text,
            token_count=services.registry.count_tokens(text, ref),
            provider=ref.provider,
            model=ref.model,
            usage=usage,
            interrupted=interrupted,
            reply_to_sequence=prepared.user_turn.sequence_number,
            # Only a turn sent with an idempotency key can be answered twice
            # (the key sent again before the first reply was saved); checking
            # costs a statement, so other turns skip it.
            first_reply_only=prepared.user_turn.idempotency_key is not None,
            author=prepared.author,
        )
    except turns.AlreadyAnswered as answered:
        # The same idempotency key, sent again before the first reply was
        # saved, was answered first: that reply is the answer, for both.
        return answered.reply


def after_reply(services: Services, prepared: Prepared) -> None:
    """Name an untitled session from its first exchange, in the background."""
    session = prepared.session
    if services.settings.title_sessions and not session.title:
        services.spawn(title_session(services, session.id, session.owner_id), "title-session")


async def title_session(services: Services, session_id: int, owner_id: int) -> None:
    """Name an untitled session from its first exchange (background model)."""
    first = await turns.in_range(session_id, 1, 4)
    if not first:
        return
    ref = services.registry.resolve(services.registry.background)
    completion = await services.registry.complete(build_title_messages(first), ref)
    title = parse_title(completion.text)
    await sessions.name_if_untitled(owner_id, session_id, title)
