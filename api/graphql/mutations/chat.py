"""sendMessage."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.domain.context import ContextOverride
from api.domain.types import MemoryScope as DomainScope
from api.domain.types import Session
from api.domain.validation import IDEMPOTENCY_KEY_MAX_CHARS, validate_idempotency_key
from api.errors import SmritiError
from api.graphql import ids
from api.graphql.context import Info
from api.graphql.types.context_plan import ContextInput, ContextPlan
from api.graphql.types.errors import error_type, to_error
from api.graphql.types.turn import Turn
from api.services import access, chat

SendMessageError = error_type("SendMessageError", "sendMessage", calls_a_model=True)


def context_override(value: ContextInput | None) -> ContextOverride | None:
    if value is None:
        return None
    return ContextOverride(
        space_id=ids.decode_optional(value.space_id, "Space", field="context.spaceId"),
        checkpoint_id=ids.decode_optional(
            value.checkpoint_id, "Checkpoint", field="context.checkpointId"
        ),
        base_sequence=value.base_sequence,
        memory_scope=DomainScope(value.memory_scope.name) if value.memory_scope else None,
    )


async def check_model(info: Info, session: Session, model: str | None) -> None:
    """FORBIDDEN, before anything is written, for a model kept for admins (an
    unknown model is refused by the send itself, UNKNOWN_MODEL)."""
    if info.context.is_admin:
        return
    registry = info.context.services.registry
    name = model or chat.session_model(session)
    try:
        ref = registry.resolve(name, require_available=False)
    except SmritiError:
        return
    await access.check_model(ref.name, is_admin=False)


def send_options(input: SendMessageInput) -> ContextOverride | None:
    """Check what sendMessage and messageStream take besides the message itself
    (the idempotency key) and decode the explicit context; raises InputError."""
    if input.idempotency_key is not None:
        validate_idempotency_key(input.idempotency_key)
    return context_override(input.context)


@strawberry.input(description="A message to send in a session.")
class SendMessageInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    content: str = strawberry.field(
        description="The message (not empty; at most 1 MiB by default)."
    )
    model: str | None = strawberry.field(
        default=None, description='"provider/model" (default: the session\'s model).'
    )
    idempotency_key: str | None = strawberry.field(
        default=None,
        description="Send the same key again to get the original turns back instead of "
        "new ones (and to retry a failed provider call without a second user turn). "
        f"1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters; never logged nor repeated in errors.",
    )
    context: ContextInput | None = strawberry.field(
        default=None, description="An explicit context instead of the session's own."
    )


@strawberry.type(description="The result of sendMessage.")
class SendMessagePayload:
    user_turn: Turn | None = strawberry.field(
        description="The saved user turn (kept even when the provider failed)."
    )
    assistant_turn: Turn | None = strawberry.field(description="The saved reply, if any.")
    context: ContextPlan | None = strawberry.field(description="The context that was sent.")
    errors: list[SendMessageError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class ChatMutation:
    @strawberry.mutation(
        description="Save the user's turn, send it with its context, save the reply."
    )
    async def send_message(
        self,
        info: Info,
        input: Annotated[
            SendMessageInput, strawberry.argument(description="The sendMessage arguments.")
        ],
    ) -> SendMessagePayload:
        services = info.context.services
        try:
            session_id = ids.decode(input.session_id, "Session", field="sessionId")
            session = await access.own_session(info.context.owner_id, session_id)
            await check_model(info, session, input.model)
            exchange = await chat.send_message(
                services,
                session,
                content=input.content,
                model=input.model,
                idempotency_key=input.idempotency_key,
                override=send_options(input),
                author=info.context.authorship,
            )
        except SmritiError as exc:
            return SendMessagePayload(
                user_turn=None,
                assistant_turn=None,
                context=None,
                errors=[to_error(SendMessageError, exc)],
            )
        model = f"{exchange.user_turn.provider}/{exchange.user_turn.model}"
        return SendMessagePayload(
            user_turn=Turn.from_domain(exchange.user_turn),
            assistant_turn=(
                Turn.from_domain(exchange.assistant_turn) if exchange.assistant_turn else None
            ),
            context=ContextPlan.build(exchange.plan, exchange.messages, model),
            errors=[to_error(SendMessageError, exchange.error)] if exchange.error else [],
        )
