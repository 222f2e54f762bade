"""Sending a message: the user's turn, the context, the provider, the reply."""

from __future__ import annotations

from dataclasses import dataclass

from api.domain.context import ContextOverride, ContextPlan
from api.domain.extraction import build_title_messages, parse_title
from api.domain.prompt import render_messages
from api.domain.types import ChatMessage, Role, Session, Turn
from api.domain.validation import validate_content
from api.errors import ProviderError
from api.providers import ModelRef
from api.services.base import Services, log
from api.services.context import resolve_plan
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
class Started:
    """A message whose user turn is saved; ``reply`` is set when a repeated
    idempotency key finds it already answered."""

    session: Session
    ref: ModelRef
    user_turn: Turn
    reply: Turn | None


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
    plan = await resolve_plan(services, session, model=ref, new_message=content, override=override)
    return Preview(plan, render_messages(plan, content), ref)


async def send_message(
    services: Services,
    session: Session,
    *,
    content: str,
    model: str | None = None,
    idempotency_key: str | None = None,
    override: ContextOverride | None = None,
) -> Exchange:
    started = await begin(
        services,
        session,
        content=content,
        model=model,
        idempotency_key=idempotency_key,
        override=override,
    )
    user_turn, ref = started.user_turn, started.ref
    plan = await resolve_plan(
        services,
        started.session,
        model=ref,
        new_message=user_turn.content,
        override=override,
        before=user_turn.sequence_number,
    )
    messages = render_messages(plan, user_turn.content)
    if started.reply is not None:
        return Exchange(user_turn, started.reply, plan, messages)
    try:
        completion = await services.registry.complete(messages, ref)
    except ProviderError as exc:
        log.warning("provider call failed for session %s: %s", session.id, exc.code.value)
        return Exchange(user_turn, None, plan, messages, error=exc)
    assistant_turn = await turns.append(
        session.id,
        role=Role.ASSISTANT,
        content=completion.text,
        token_count=services.registry.count_tokens(completion.text, ref),
        provider=ref.provider,
        model=ref.model,
        usage=completion.usage,
        reply_to_sequence=user_turn.sequence_number,
    )
    if services.settings.title_sessions and not started.session.title:
        services.spawn(title_session(services, session.id, session.owner_id), "title-session")
    return Exchange(user_turn, assistant_turn, plan, messages)


async def begin(
    services: Services,
    session: Session,
    *,
    content: str,
    model: str | None,
    idempotency_key: str | None,
    override: ContextOverride | None,
) -> Started:
    """Check the message, then write the user's turn (or find it, for a repeated
    idempotency key, with its reply if it has one). Shared by sendMessage and
    messageStream: everything that can be refused is refused before a write."""
    registry = services.registry
    # Everything that can be refused is checked before anything is written.
    content = validate_content(content, max_bytes=services.settings.max_content_bytes)
    ref = registry.resolve(model or session_model(session))  # refuses a provider with no key
    if override is not None:
        await resolve_plan(services, session, model=ref, new_message=content, override=override)

    if idempotency_key is not None:
        earlier = await turns.by_idempotency_key(session.id, idempotency_key)
        if earlier is not None:
            reply = await turns.reply_to(session.id, earlier.sequence_number)
            return Started(session, ref, earlier, reply)
    try:
        user_turn = await turns.append(
            session.id,
            role=Role.USER,
            content=content,
            token_count=registry.count_tokens(content, ref),
            provider=ref.provider,
            model=ref.model,
            idempotency_key=idempotency_key,
        )
    except turns.DuplicateKey:
        # A concurrent retry with the same key won the race: answer as it will.
        return await begin(
            services,
            session,
            content=content,
            model=model,
            idempotency_key=idempotency_key,
            override=override,
        )
    if (ref.provider, ref.model) != (session.active_provider, session.active_model):
        session = await sessions.update(
            session.owner_id, session.id, active_provider=ref.provider, active_model=ref.model
        )
    return Started(session, ref, user_turn, None)


async def title_session(services: Services, session_id: int, owner_id: int) -> None:
    """Name an untitled session from its first exchange (background model)."""
    first = await turns.in_range(session_id, 1, 4)
    if not first:
        return
    ref = services.registry.resolve(services.registry.background)
    completion = await services.registry.complete(build_title_messages(first), ref)
    title = parse_title(completion.text)
    current = await sessions.get(owner_id, session_id)
    if not current.title:
        await sessions.update(owner_id, session_id, title=title)
