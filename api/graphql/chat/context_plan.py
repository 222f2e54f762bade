"""What the model sees: the context plan and the rendered messages."""

from __future__ import annotations

import strawberry

from ...domain.context import ContextPlan as DomainPlan
from ...domain.prompt import MessageSource, message_sources
from ...domain.types import ChatMessage as DomainMessage
from ...domain.types import ChatSettings as DomainSettings
from ..checkpoints.types import Checkpoint
from ..context import Info
from ..core.chat_settings import ChatSettings
from ..core.enums import ContextMode, MemoryScope
from .turns import Turn


@strawberry.type(
    description="One message exactly as the provider receives it. Consecutive turns of one "
    "role are sent as one message, their texts in order, joined by a blank line: a question "
    "whose answer failed goes with the next message (nothing you wrote is left out)."
)
class ChatMessage:
    role: str = strawberry.field(description='"system", "user" or "assistant".')
    content: str = strawberry.field(description="The text.")
    sequence_numbers: list[int] = strawberry.field(
        description="The sequence numbers of the turns this message holds, in order: one for "
        "most, several when turns were merged; empty for the checkpoint block and for the "
        "new message alone."
    )
    includes_new_message: bool = strawberry.field(
        description="True for the message that ends with the message being sent (the last one)."
    )
    merged: bool = strawberry.field(
        description="True when this message joins several turns (the new message counting as "
        "one): the model reads them as one message."
    )

    @classmethod
    def from_domain(cls, message: DomainMessage, source: MessageSource) -> ChatMessage:
        return cls(
            role=message.role,
            content=message.content,
            sequence_numbers=list(source.sequence_numbers),
            includes_new_message=source.new_message,
            merged=source.merged,
        )


@strawberry.type(description="The context a message is (or was) sent with.")
class ContextPlan:
    mode: ContextMode = strawberry.field(description="FRESH, HEAD or MOUNTED.")
    boundary: int = strawberry.field(
        description="Turns with a sequence number at or below this are never sent."
    )
    token_estimate: int = strawberry.field(
        description="Estimated prompt tokens (checkpoint block, window and message)."
    )
    model: str = strawberry.field(description='The model, as "provider/model".')
    settings: ChatSettings | None = strawberry.field(
        description="The instructions (in the system message above) and the parameters the "
        "message is sent with: the session's effective settings. Given by contextPreview; "
        "null elsewhere (a reply records its own: Turn.settings)."
    )
    plan: strawberry.Private[DomainPlan]
    rendered: strawberry.Private[list[DomainMessage]]

    @classmethod
    def build(
        cls,
        plan: DomainPlan,
        messages: list[DomainMessage],
        model: str,
        settings: DomainSettings | None = None,
    ) -> ContextPlan:
        # Turns and messages become GraphQL objects only when asked for: a
        # sendMessage that selects none of them should not pay for 200 of each.
        return cls(
            mode=ContextMode[plan.mode.value],
            boundary=plan.boundary,
            token_estimate=plan.token_estimate,
            model=model,
            settings=ChatSettings.from_domain(settings) if settings is not None else None,
            plan=plan,
            rendered=messages,
        )

    @strawberry.field(
        description="How many input tokens the model accepts (its context window), "
        "to set tokenEstimate against."
    )
    def context_window(self, info: Info) -> int:
        return info.context.services.registry.context_window(self.model)

    @strawberry.field(description="The checkpoints whose fields the model sees, oldest first.")
    def checkpoints(self) -> list[Checkpoint]:
        return [Checkpoint.from_domain(c) for c in self.plan.checkpoints]

    @strawberry.field(description="The turn window, in order.")
    def turns(self) -> list[Turn]:
        return [Turn.from_domain(t) for t in self.plan.turns]

    @strawberry.field(description="The exact messages sent to the provider, the new message last.")
    def messages(self) -> list[ChatMessage]:
        sources = message_sources(self.plan)
        return [ChatMessage.from_domain(m, s) for m, s in zip(self.rendered, sources, strict=True)]


@strawberry.input(description="An explicit context for stateless clients.")
class ContextInput:
    space_id: strawberry.ID | None = strawberry.field(
        default=None, description="Use this space's head (on the session's branch)."
    )
    checkpoint_id: strawberry.ID | None = strawberry.field(
        default=None, description="Use this checkpoint as if mounted."
    )
    base_sequence: int | None = strawberry.field(
        default=None,
        description="With checkpointId: only turns after this sequence number "
        "(default: the session's current lastSequenceNumber).",
    )
    memory_scope: MemoryScope | None = strawberry.field(
        default=None, description="How many checkpoints (default: the session's scope)."
    )
