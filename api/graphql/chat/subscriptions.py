"""messageStream and continueReplyStream: sendMessage and continueReply with the answer
streamed (graphql-transport-ws or SSE)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Annotated, TypeVar

import strawberry
from graphql import GraphQLError

from ...errors import SmritiError, Unauthenticated
from ...services import branching, continuation, streaming
from ..context import Info
from ..core import ids
from ..core.errors import to_error
from .branching import EditAndResendInput, RegenerateInput, edit
from .context_plan import ContextPlan
from .continuation import ContinueReplyInput, request
from .mutations import SendMessageInput, message
from .stream_events import (
    ContinueReplyEvent,
    MessageStreamError,
    MessageStreamEvent,
    StreamAssistantTurn,
    StreamContinuing,
    StreamDelta,
    StreamFailed,
    StreamUserTurn,
)
from .turns import Turn

T = TypeVar("T")


@strawberry.type(description="Operations whose result arrives as a stream of events.")
class Subscription:
    @strawberry.subscription(
        description="sendMessage with the answer streamed: the user's turn is saved and "
        "sent first (StreamUserTurn), then each piece of the answer (StreamDelta), then the "
        "saved reply (StreamAssistantTurn) — or StreamFailed. Validation, context and "
        "idempotencyKey work as for sendMessage. Completing the subscription (or closing "
        "the connection) stops the model; what had arrived is saved as the reply, marked "
        "interrupted."
    )
    async def message_stream(
        self,
        info: Info,
        input: Annotated[
            SendMessageInput,
            strawberry.argument(description="The message, exactly as for sendMessage."),
        ],
    ) -> AsyncGenerator[MessageStreamEvent, None]:
        try:
            sent = message(input)  # the ids; everything else is checked by the use case
        except SmritiError as exc:
            yield _event(streaming.Failed(exc))
            return
        events = streaming.stream_message(info.context.services, info.context.actor, sent)
        # Closing the relay is what stops the provider: do it however this ends.
        async with aclosing(_relayed(info, events)) as relayed:
            async for event in relayed:
                yield _event(event)

    @strawberry.subscription(
        description="continueReply with the continuation streamed: StreamContinuing, then "
        "each piece (StreamDelta), then the saved continuation (StreamAssistantTurn) — or "
        "StreamFailed. Checks and replays work as for continueReply. Completing the "
        "subscription (or closing the connection) stops the model; what had arrived is "
        "saved as the continuation, marked interrupted (finishReason INTERRUPTED)."
    )
    async def continue_reply_stream(
        self,
        info: Info,
        input: Annotated[
            ContinueReplyInput,
            strawberry.argument(description="The reply to continue, exactly as for continueReply."),
        ],
    ) -> AsyncGenerator[ContinueReplyEvent, None]:
        try:
            sent = request(input)  # the id; everything else is checked by the use case
        except SmritiError as exc:
            yield _reply_event(streaming.Failed(exc))
            return
        events = continuation.stream_continuation(info.context.services, info.context.actor, sent)
        async with aclosing(_relayed(info, events)) as relayed:
            async for event in relayed:
                if isinstance(event, continuation.Continuing):
                    yield StreamContinuing(
                        continued=Turn.from_domain(event.cut_off),
                        context=ContextPlan.build(event.plan, event.messages, event.model),
                    )
                else:
                    yield _reply_event(event)

    @strawberry.subscription(
        description="regenerate with the reply streamed, as messageStream streams one: "
        "StreamUserTurn (the reply's question, copied into the new branch: its session is "
        "the branch), StreamDelta…, then StreamAssistantTurn — or StreamFailed (alone: "
        "refused, nothing written)."
    )
    async def regenerate_stream(
        self,
        info: Info,
        input: Annotated[
            RegenerateInput,
            strawberry.argument(description="The reply, exactly as for regenerate."),
        ],
    ) -> AsyncGenerator[MessageStreamEvent, None]:
        try:
            turn_id = ids.decode(input.turn_id, "Turn", field="turnId")
        except SmritiError as exc:
            yield _event(streaming.Failed(exc))
            return
        events = branching.stream_regenerate(
            info.context.services, info.context.actor, turn_id, model=input.model
        )
        async with aclosing(_relayed(info, events)) as relayed:
            async for event in relayed:
                yield _event(event)

    @strawberry.subscription(
        description="editAndResend with the reply streamed, as messageStream streams one: "
        "StreamUserTurn (the new message, in the new branch: its session), StreamDelta…, "
        "then StreamAssistantTurn — or StreamFailed (alone: refused, nothing written)."
    )
    async def edit_and_resend_stream(
        self,
        info: Info,
        input: Annotated[
            EditAndResendInput,
            strawberry.argument(description="The message, exactly as for editAndResend."),
        ],
    ) -> AsyncGenerator[MessageStreamEvent, None]:
        try:
            sent = edit(input)
        except SmritiError as exc:
            yield _event(streaming.Failed(exc))
            return
        events = branching.stream_edit_and_resend(info.context.services, info.context.actor, sent)
        async with aclosing(_relayed(info, events)) as relayed:
            async for event in relayed:
                yield _event(event)


async def _relayed(info: Info, events: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    """``events`` until they end, or the caller's credential does. Closing the
    relay closes ``events``, which stops the provider: close it however the
    subscription ends (``aclosing``)."""
    ended = info.context.until_ended(events)
    async with aclosing(ended):
        try:
            async for event in ended:
                if not isinstance(event, streaming.Delta):
                    # A websocket's context (and its loaders' cache) lives as long
                    # as the connection: turns must not show a session as it was
                    # at an earlier event.
                    info.context.fresh_loaders()
                yield event
        except Unauthenticated as exc:
            # The caller's credential ended mid-stream: a top-level error,
            # as for a request without credentials.
            raise GraphQLError(exc.message, extensions={"code": exc.code.value}) from None


def _event(event: streaming.StreamEvent) -> MessageStreamEvent:
    if isinstance(event, streaming.UserTurnSaved):
        return StreamUserTurn(
            user_turn=Turn.from_domain(event.user_turn),
            context=ContextPlan.build(event.plan, event.messages, event.model),
        )
    return _reply_event(event)


def _reply_event(
    event: streaming.Delta | streaming.ReplySaved | streaming.Failed,
) -> StreamDelta | StreamAssistantTurn | StreamFailed:
    """The events both streams share: the pieces, then the saved reply or the failure."""
    if isinstance(event, streaming.Delta):
        return StreamDelta(delta=event.text)
    if isinstance(event, streaming.ReplySaved):
        return StreamAssistantTurn(assistant_turn=Turn.from_domain(event.assistant_turn))
    partial = event.partial_reply
    return StreamFailed(
        errors=[to_error(MessageStreamError, event.error)],
        partial_reply=Turn.from_domain(partial) if partial else None,
    )
