"""continueReply: the model goes on from a reply that was cut off."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import continuation
from ..context import Info
from ..core import ids
from ..core.errors import MutationError, retry_after_field, to_error
from .context_plan import ContextPlan
from .turns import Turn


@strawberry.type(description="A reason `continueReply` did not succeed.")
class ContinueReplyError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


@strawberry.input(description="A cut-off reply to continue.")
class ContinueReplyInput:
    turn_id: strawberry.ID = strawberry.field(
        description="The reply: an assistant turn cut off before its end (interrupted: "
        "finishReason LENGTH, INTERRUPTED or LOST_CONNECTION), the last turn of its "
        "session, which is yours. One that has been continued already gives its "
        "continuation back, without a model call: a retry never writes a second one."
    )
    model: str | None = strawberry.field(
        default=None,
        description='"provider/model" (default: the model that wrote the reply).',
    )


def request(input: ContinueReplyInput) -> continuation.Continue:
    """What continueReply and continueReplyStream send, decoded the same way for
    both; ``continuation.admit`` checks it."""
    return continuation.Continue(
        turn_id=ids.decode(input.turn_id, "Turn", field="turnId"), model=input.model
    )


@strawberry.type(description="The result of continueReply.")
class ContinueReplyPayload:
    continued: Turn | None = strawberry.field(description="The cut-off reply.")
    continuation: Turn | None = strawberry.field(
        description="The rest of the answer, saved as a new assistant turn right after the "
        "cut-off one (continuesSequence names it); null when the provider failed (nothing "
        "was written: try again)."
    )
    context: ContextPlan | None = strawberry.field(
        description="The context that was sent: the next message's, ending with the cut-off "
        "reply, then a short instruction to continue it."
    )
    errors: list[ContinueReplyError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class ContinueMutation:
    @strawberry.mutation(
        description="Ask the model to go on from a reply cut off before its end (the token "
        "limit, a stop, a lost connection). It sees the conversation as the next message "
        "would, with the cut-off reply as its last message and a short user instruction to "
        "continue it (every provider accepts that; not all accept a conversation that ends "
        "with the model's message). What it writes is saved as a new assistant turn: turns "
        "are never changed."
    )
    async def continue_reply(
        self,
        info: Info,
        input: Annotated[
            ContinueReplyInput, strawberry.argument(description="The continueReply arguments.")
        ],
    ) -> ContinueReplyPayload:
        done = await continuation.continue_reply(
            info.context.services, info.context.actor, request(input)
        )
        return ContinueReplyPayload(
            continued=Turn.from_domain(done.cut_off),
            continuation=Turn.from_domain(done.continuation) if done.continuation else None,
            context=ContextPlan.build(done.plan, done.messages, done.model),
            errors=[to_error(ContinueReplyError, done.error)] if done.error else [],
        )
