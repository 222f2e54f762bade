"""messageStream: sendMessage with the answer streamed (graphql-transport-ws or SSE)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Annotated

import strawberry
from graphql import GraphQLError

from api.errors import SmritiError, Unauthenticated
from api.graphql.chat.context_plan import ContextPlan
from api.graphql.chat.mutations import SendMessageInput, message
from api.graphql.chat.stream_events import (
    MessageStreamError,
    MessageStreamEvent,
    StreamAssistantTurn,
    StreamDelta,
    StreamFailed,
    StreamUserTurn,
)
from api.graphql.chat.turns import Turn
from api.graphql.context import Info
from api.graphql.core.errors import to_error
from api.services import streaming


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
        events = info.context.until_ended(
            streaming.stream_message(info.context.services, info.context.actor, sent)
        )
        # Closing `events` is what stops the provider: do it however this ends.
        async with aclosing(events):
            try:
                async for event in events:
                    if not isinstance(event, streaming.Delta):
                        # A websocket's context (and its loaders' cache) lives as long
                        # as the connection: turns must not show a session as it was
                        # at an earlier event.
                        info.context.fresh_loaders()
                    yield _event(event)
            except Unauthenticated as exc:
                # The caller's credential ended mid-stream: a top-level error,
                # as for a request without credentials.
                raise GraphQLError(exc.message, extensions={"code": exc.code.value}) from None


def _event(event: streaming.StreamEvent) -> MessageStreamEvent:
    if isinstance(event, streaming.Delta):
        return StreamDelta(delta=event.text)
    if isinstance(event, streaming.UserTurnSaved):
        return StreamUserTurn(
            user_turn=Turn.from_domain(event.user_turn),
            context=ContextPlan.build(event.plan, event.messages, event.model),
        )
    if isinstance(event, streaming.ReplySaved):
        return StreamAssistantTurn(assistant_turn=Turn.from_domain(event.assistant_turn))
    partial = event.partial_reply
    return StreamFailed(
        errors=[to_error(MessageStreamError, event.error)],
        partial_reply=Turn.from_domain(partial) if partial else None,
    )
