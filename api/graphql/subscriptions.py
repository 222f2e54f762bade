"""messageStream: sendMessage with the answer streamed (graphql-transport-ws or SSE)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Annotated

import strawberry

from api.errors import SmritiError
from api.graphql import ids
from api.graphql.context import Info
from api.graphql.loaders import make_loaders
from api.graphql.mutations.chat import SendMessageInput, check_model, send_options
from api.graphql.types.context_plan import ContextPlan
from api.graphql.types.errors import to_error
from api.graphql.types.message_stream import (
    MessageStreamError,
    MessageStreamEvent,
    StreamAssistantTurn,
    StreamDelta,
    StreamFailed,
    StreamUserTurn,
)
from api.graphql.types.turn import Turn
from api.services import access, streaming


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
            info.context.check_writable()  # it saves turns: not for a read-only token
            session_id = ids.decode(input.session_id, "Session", field="sessionId")
            session = await access.own_session(info.context.owner_id, session_id)
            override = send_options(input)
            await check_model(info, session, input.model)
        except SmritiError as exc:
            yield StreamFailed(errors=[to_error(MessageStreamError, exc)], partial_reply=None)
            return
        events = streaming.stream_message(
            info.context.services,
            session,
            content=input.content,
            model=input.model,
            idempotency_key=input.idempotency_key,
            override=override,
            author=info.context.authorship,
        )
        # Closing `events` is what stops the provider: do it however this ends.
        async with aclosing(events):
            async for event in events:
                if not isinstance(event, streaming.Delta):
                    # A websocket's context (and its loaders' cache) lives as long
                    # as the connection: turns must not show a session as it was
                    # at an earlier event.
                    info.context.loaders = make_loaders(info.context.owner_id)
                yield _event(event)


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
