"""sendMessage."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.context import ContextOverride
from ...domain.types import MemoryScope as DomainScope
from ...domain.validation import IDEMPOTENCY_KEY_MAX_CHARS
from ...services import chat
from ..context import Info
from ..core import ids
from ..core.errors import MutationError, retry_after_field, to_error
from .context_plan import ContextInput, ContextPlan
from .turns import Turn


@strawberry.type(description="A reason `sendMessage` did not succeed.")
class SendMessageError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


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


def message(input: SendMessageInput) -> chat.Message:
    """What sendMessage and messageStream send, decoded the same way for both;
    ``chat.admit`` checks it (in one order, for both)."""
    return chat.Message(
        session_id=ids.decode(input.session_id, "Session", field="sessionId"),
        content=input.content,
        model=input.model,
        idempotency_key=input.idempotency_key,
        override=context_override(input.context),
    )


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
        "new ones (and to retry a failed provider call without a second user turn); sent "
        "again while the first request is still being answered, it waits for that answer: "
        "one user turn, one reply, one provider call, whichever server is asked. Send one "
        "from any client that may retry. "
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
        exchange = await chat.send_message(
            info.context.services, info.context.actor, message(input)
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
