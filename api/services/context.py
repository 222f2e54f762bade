"""The context of a message: one store call for the facts, one rule for the rest.

Every path that needs a context (sendMessage, messageStream, contextPreview,
checkpoint drafts and their source range) comes here; the rules are in
``api.domain.context.resolve`` and nowhere else (DESIGN §2).
"""

from __future__ import annotations

from api.domain.context import Budget, ContextOverride, ResolvedContext, resolve
from api.domain.types import Session
from api.providers import ModelRef
from api.services.base import Services
from api.store import context as context_store


async def resolve_context(
    services: Services,
    session: Session,
    *,
    model: ModelRef,
    new_message: str,
    override: ContextOverride | None = None,
    before: int | None = None,
) -> ResolvedContext:
    """The plan and messages for the next message of ``session``.

    ``before`` excludes the message's own turn (and anything written after it)
    when the user turn is already saved.
    """
    settings, registry = services.settings, services.registry
    facts = await context_store.load(
        session, override, before=before, max_turns=settings.max_window_turns
    )
    budget = Budget(
        tokens=max(registry.context_window(model) - settings.answer_reserve_tokens, 0),
        max_turns=settings.max_window_turns,
    )
    return resolve(
        session,
        override,
        facts,
        budget=budget,
        count_tokens=lambda text: registry.count_tokens(text, model),
        new_message=new_message,
    )
