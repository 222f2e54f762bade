"""The events of the messageStream and continueReplyStream subscriptions."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ..core.errors import MutationError, retry_after_field
from .context_plan import ContextPlan
from .turns import Turn


@strawberry.type(description="A reason `messageStream` (or `continueReplyStream`) did not succeed.")
class MessageStreamError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


@strawberry.type(
    description="The first event of a stream: the user's turn is saved before the model is asked."
)
class StreamUserTurn:
    user_turn: Turn = strawberry.field(
        description="The saved user turn, with its sequence number (for a repeated "
        "idempotencyKey: the original turn)."
    )
    context: ContextPlan = strawberry.field(description="The context the message is sent with.")


@strawberry.type(description="A piece of the answer, in order, as the provider sends it.")
class StreamDelta:
    delta: str = strawberry.field(
        description="The next piece of text; all pieces joined are the reply."
    )


@strawberry.type(description="The last event of a complete answer.")
class StreamAssistantTurn:
    assistant_turn: Turn = strawberry.field(
        description="The saved reply: the pieces joined, with the usage the provider reported."
    )


@strawberry.type(
    description="The last event of a stream that ends without a complete answer. Alone, "
    "it means the message (or continuation) was refused and nothing was written; after "
    "StreamUserTurn, the provider failed: the user's turn is kept (retry with the same "
    "idempotencyKey); after StreamContinuing, likewise (continue the same reply again)."
)
class StreamFailed:
    errors: list[MessageStreamError] = strawberry.field(description="Why the stream failed.")
    partial_reply: Turn | None = strawberry.field(
        description="What the provider sent before it failed, saved as the reply with "
        "`interrupted: true` (finishReason LOST_CONNECTION); null when it sent nothing."
    )


@strawberry.type(
    description="The first event of continueReplyStream: the reply being continued and "
    "the context sent; nothing is written until the continuation is saved."
)
class StreamContinuing:
    continued: Turn = strawberry.field(description="The cut-off reply.")
    context: ContextPlan = strawberry.field(
        description="The context sent: the next message's, ending with the cut-off reply, "
        "then a short instruction to continue it."
    )


ContinueReplyEvent = Annotated[
    StreamContinuing | StreamDelta | StreamAssistantTurn | StreamFailed,
    strawberry.union(
        "ContinueReplyEvent",
        description="One event of continueReplyStream: StreamContinuing, then StreamDelta "
        "for each piece of the continuation, then StreamAssistantTurn (the continuation, "
        "saved) or StreamFailed. A refused request yields StreamFailed alone; a reply "
        "continued already yields its continuation as one StreamDelta.",
    ),
]


MessageStreamEvent = Annotated[
    StreamUserTurn | StreamDelta | StreamAssistantTurn | StreamFailed,
    strawberry.union(
        "MessageStreamEvent",
        description="One event of messageStream: StreamUserTurn, then StreamDelta for each "
        "piece of the answer, then StreamAssistantTurn or StreamFailed. A refused message "
        "yields StreamFailed alone.",
    ),
]
