"""The context of a message: one store call for the facts, one rule for the rest.

Every path that needs a context (sendMessage, messageStream, contextPreview,
checkpoint drafts and their source range) comes here; the rules are in
``api.domain.context.resolve`` and nowhere else (docs/architecture.md#context-modes). What an
explicit
context may name is checked here too: a space or a checkpoint of a space the
session's author is a member of (and, for a reader's preview, the reader too).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.chat_settings import effective, within_output_limit
from ..domain.context import Budget, ContextOverride, ResolvedContext, facts_wanted, resolve
from ..domain.types import ChatSettings, Session
from ..errors import NotFound
from ..providers import ModelRef
from ..store import context as context_store
from ..store import spaces
from ..store.sessions import ForMessage
from . import access
from .base import Services


async def resolve_context(
    services: Services,
    session: Session,
    *,
    model: ModelRef,
    new_message: str,
    override: ContextOverride | None = None,
    before: int | None = None,
    readers: Sequence[int] = (),
    found: ForMessage | None = None,
) -> ResolvedContext:
    """The plan and messages for the next message of ``session``.

    ``before`` excludes the message's own turn (and anything written after it)
    when the user turn is already saved. ``readers``: users besides the
    session's author who must be able to read what an explicit context names.
    ``found``: what ``sessions.for_message`` read with the session (its
    newest turns, its space's settings), for a message not saved yet
    (``before`` None): not read again.
    """
    settings, registry = services.settings, services.registry
    wanted = facts_wanted(session, override)
    who = [session.owner_id, *(r for r in readers if r != session.owner_id)]
    if wanted.space_id is not None:
        for user_id in who:
            await access.member_space(user_id, wanted.space_id, field="context.spaceId")
    facts = await context_store.load(
        session,
        wanted,
        before=before,
        max_turns=settings.max_window_turns,
        recent=found.recent if found is not None else None,
    )
    if wanted.explicit and facts.checkpoint is not None:
        for user_id in who:
            try:
                await access.member_space(
                    user_id, facts.checkpoint.space_id, field="context.checkpointId"
                )
            except NotFound as exc:
                # A checkpoint of a space they are not a member of does not exist for them.
                raise NotFound("No such checkpoint.", field="context.checkpointId") from exc
    chat = await effective_settings(services, session, model, found)
    # The window keeps room for the answer: as much as the session lets the
    # model write, else the usual reserve.
    reserve = chat.max_output_tokens or settings.answer_reserve_tokens
    budget = Budget(
        tokens=max(registry.context_window(model) - reserve, 0),
        max_turns=settings.max_window_turns,
    )
    return resolve(
        session,
        override,
        facts,
        budget=budget,
        count_tokens=lambda text: registry.count_tokens(text, model),
        new_message=new_message,
        settings=chat,
    )


async def space_defaults(session: Session) -> ChatSettings | None:
    """The settings ``session``'s space gives its sessions (None: no space)."""
    return await spaces.settings_of(session.space_id) if session.space_id is not None else None


async def effective_settings(
    services: Services, session: Session, model: ModelRef, found: ForMessage | None = None
) -> ChatSettings:
    """What a message of ``session`` to ``model`` is sent with: its own
    settings, else its space's, field by field; max output tokens within what
    ``model`` writes (``within_output_limit``). ``found``: the space's settings
    read with the session already (``sessions.for_message``)."""
    defaults = found.space_settings if found is not None else await space_defaults(session)
    return within_output_limit(
        effective(session.settings, defaults), services.registry.output_limit(model)
    )
