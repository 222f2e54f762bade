"""contextPreview: exactly what the model would receive.

What cannot be found is null, never a top-level error (core.field_errors.MissingIsNull)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import chat
from ..context import Info
from ..core import ids
from .context_plan import ContextInput, ContextPlan
from .mutations import context_override


@strawberry.input(description="What contextPreview should preview.")
class ContextPreviewInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    content: str = strawberry.field(
        description="The message that would be sent (may be empty; at most 1 MiB by default)."
    )
    model: str | None = strawberry.field(
        default=None, description='"provider/model" (default: the session\'s model).'
    )
    context: ContextInput | None = strawberry.field(
        default=None, description="An explicit context, as sendMessage takes it."
    )


@strawberry.type
class ChatQuery:
    @strawberry.field(
        description="Exactly what the model would receive if this message were sent now; "
        "null when the session (or a checkpoint or space the context names) is not found."
    )
    async def context_preview(
        self,
        info: Info,
        input: Annotated[
            ContextPreviewInput, strawberry.argument(description="The contextPreview arguments.")
        ],
    ) -> ContextPlan | None:
        preview = await chat.preview(
            info.context.services,
            info.context.actor,
            ids.decode(input.session_id, "Session", field="sessionId"),
            content=input.content,
            model=input.model,
            override=context_override(input.context),
        )
        return ContextPlan.build(
            preview.plan, preview.messages, preview.model.name, preview.settings
        )
