"""regenerate and editAndResend: a new branch of the conversation, sent."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.validation import IDEMPOTENCY_KEY_MAX_CHARS
from ...services import branching
from ..context import Info
from ..core import ids
from ..core.errors import MutationError, retry_after_field, to_error
from ..sessions.types import Session
from .context_plan import ContextPlan
from .turns import Turn


@strawberry.type(description="A reason `regenerate` did not (fully) succeed.")
class RegenerateError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


@strawberry.type(description="A reason `editAndResend` did not (fully) succeed.")
class EditAndResendError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


@strawberry.input(description="A reply to answer again, in a new branch.")
class RegenerateInput:
    turn_id: strawberry.ID = strawberry.field(description="The reply (an assistant turn).")
    model: str | None = strawberry.field(
        default=None, description='"provider/model" (default: the session\'s model).'
    )


@strawberry.input(description="A sent message to replace, in a new branch.")
class EditAndResendInput:
    turn_id: strawberry.ID = strawberry.field(description="The message (a user turn).")
    content: str = strawberry.field(description="The new message, sent in its place.")
    model: str | None = strawberry.field(
        default=None, description='"provider/model" (default: the session\'s model).'
    )
    idempotency_key: str | None = strawberry.field(
        default=None,
        description="As sendMessage's: the same key sent again for the same message "
        "returns the branch it made and its turns (asking again for a reply that "
        f"failed), not a second branch. 1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters.",
    )


@strawberry.type(description="The result of regenerate or editAndResend.")
class BranchedPayload:
    session: Session | None = strawberry.field(
        description="The new branch (kept, with its user turn, when the provider failed)."
    )
    user_turn: Turn | None = strawberry.field(
        description="The message answered: the new one (editAndResend) or the branch's "
        "copy of the reply's question (regenerate)."
    )
    assistant_turn: Turn | None = strawberry.field(description="The saved reply, if any.")
    context: ContextPlan | None = strawberry.field(description="The context that was sent.")


@strawberry.type(description="The result of regenerate.")
class RegeneratePayload(BranchedPayload):
    errors: list[RegenerateError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of editAndResend.")
class EditAndResendPayload(BranchedPayload):
    errors: list[EditAndResendError] = strawberry.field(description="Why it failed, if it did.")


def edit(input: EditAndResendInput) -> branching.Edit:
    """What editAndResend and editAndResendStream send, decoded the same way."""
    return branching.Edit(
        turn_id=ids.decode(input.turn_id, "Turn", field="turnId"),
        content=input.content,
        model=input.model,
        idempotency_key=input.idempotency_key,
    )


def _fields(done: branching.Branched) -> dict[str, object]:
    exchange = done.exchange
    model = f"{exchange.user_turn.provider}/{exchange.user_turn.model}"
    return {
        "session": Session.from_domain(done.session),
        "user_turn": Turn.from_domain(exchange.user_turn),
        "assistant_turn": (
            Turn.from_domain(exchange.assistant_turn) if exchange.assistant_turn else None
        ),
        "context": ContextPlan.build(exchange.plan, exchange.messages, model),
    }


@strawberry.type
class BranchMutation:
    @strawberry.mutation(
        description="Answer a reply's question again: a new branch of the conversation "
        "holding the turns before the reply (the old line is kept), and the new reply in it."
    )
    async def regenerate(
        self,
        info: Info,
        input: Annotated[
            RegenerateInput, strawberry.argument(description="The regenerate arguments.")
        ],
    ) -> RegeneratePayload:
        done = await branching.regenerate(
            info.context.services,
            info.context.actor,
            ids.decode(input.turn_id, "Turn", field="turnId"),
            model=input.model,
        )
        error = done.exchange.error
        return RegeneratePayload(
            **_fields(done),  # type: ignore[arg-type]
            errors=[to_error(RegenerateError, error)] if error else [],
        )

    @strawberry.mutation(
        description="Edit a sent message: a new branch of the conversation holding the "
        "turns before it (the old line is kept), the new message sent there as sendMessage "
        "sends it, and its reply."
    )
    async def edit_and_resend(
        self,
        info: Info,
        input: Annotated[
            EditAndResendInput, strawberry.argument(description="The editAndResend arguments.")
        ],
    ) -> EditAndResendPayload:
        done = await branching.edit_and_resend(
            info.context.services, info.context.actor, edit(input)
        )
        error = done.exchange.error
        return EditAndResendPayload(
            **_fields(done),  # type: ignore[arg-type]
            errors=[to_error(EditAndResendError, error)] if error else [],
        )
