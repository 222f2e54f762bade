"""draftCheckpoint and createCheckpoint."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.domain.types import CheckpointContent, TurnRange
from api.domain.validation import (
    ITEM_MAX_CHARS,
    LIST_MAX_ITEMS,
    OBJECTIVE_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
)
from api.graphql import ids
from api.graphql.context import Info
from api.graphql.mutations.base import attempt
from api.graphql.types.checkpoint import Checkpoint
from api.graphql.types.common import TurnRange as TurnRangeType
from api.graphql.types.common import TurnRangeInput
from api.graphql.types.errors import error_type
from api.services import checkpoints as checkpoint_service
from api.store import sessions

DraftCheckpointError = error_type("DraftCheckpointError", "draftCheckpoint", calls_a_model=True)
CreateCheckpointError = error_type("CreateCheckpointError", "createCheckpoint")


@strawberry.type(description="An unsaved checkpoint proposed by the background model.")
class CheckpointDraft:
    title: str = strawberry.field(description="Proposed title.")
    objective: str = strawberry.field(description="Proposed objective.")
    summary: str = strawberry.field(description="Proposed summary.")
    decisions: list[str] = strawberry.field(description="Proposed decisions.")
    tasks: list[str] = strawberry.field(description="Proposed tasks.")
    open_questions: list[str] = strawberry.field(description="Proposed open questions.")
    entities: list[str] = strawberry.field(description="Proposed entities.")
    source_turn_range: TurnRangeType | None = strawberry.field(
        description="The turns it was drafted from (the next message's window)."
    )
    model: str = strawberry.field(description="The model that drafted it.")


@strawberry.input(description="The session to draft a checkpoint from.")
class DraftCheckpointInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")


@strawberry.type(description="The result of draftCheckpoint.")
class DraftCheckpointPayload:
    draft: CheckpointDraft | None = strawberry.field(description="The draft (not saved).")
    errors: list[DraftCheckpointError] = strawberry.field(description="Why it failed, if it did.")


_LIST = f" (at most {LIST_MAX_ITEMS} items, each at most {ITEM_MAX_CHARS:,} characters)."


@strawberry.input(description="A checkpoint to save on the session's branch.")
class CreateCheckpointInput:
    session_id: strawberry.ID = strawberry.field(description="The session it is saved from.")
    title: str = strawberry.field(
        description=f"A one-line name (required; at most {TITLE_MAX_CHARS} characters)."
    )
    objective: str | None = strawberry.field(
        default=None, description=f"The objective (at most {OBJECTIVE_MAX_CHARS:,} characters)."
    )
    summary: str | None = strawberry.field(
        default=None, description=f"The summary (at most {SUMMARY_MAX_CHARS:,} characters)."
    )
    decisions: list[str] | None = strawberry.field(default=None, description=f"Decisions{_LIST}")
    tasks: list[str] | None = strawberry.field(default=None, description=f"Open tasks{_LIST}")
    open_questions: list[str] | None = strawberry.field(
        default=None, description=f"Open questions{_LIST}"
    )
    entities: list[str] | None = strawberry.field(default=None, description=f"Entities{_LIST}")
    source_turn_range: TurnRangeInput | None = strawberry.field(
        default=None,
        description="The turns it was made from (default: the current window to the last turn).",
    )


@strawberry.type(description="The result of createCheckpoint.")
class CreateCheckpointPayload:
    checkpoint: Checkpoint | None = strawberry.field(description="The saved checkpoint.")
    errors: list[CreateCheckpointError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class CheckpointMutation:
    @strawberry.mutation(
        description="Draft every checkpoint field from the turns the next message would "
        "see (and nothing else). Nothing is saved."
    )
    async def draft_checkpoint(
        self,
        info: Info,
        input: Annotated[
            DraftCheckpointInput, strawberry.argument(description="The draftCheckpoint arguments.")
        ],
    ) -> DraftCheckpointPayload:
        async def work() -> CheckpointDraft:
            session_id = ids.decode(input.session_id, "Session", field="sessionId")
            session = await sessions.get(info.context.owner_id, session_id)
            draft = await checkpoint_service.draft(info.context.services, session)
            content = draft.content
            return CheckpointDraft(
                title=content.title,
                objective=content.objective,
                summary=content.summary,
                decisions=list(content.decisions),
                tasks=list(content.tasks),
                open_questions=list(content.open_questions),
                entities=list(content.entities),
                source_turn_range=TurnRangeType.from_domain(draft.source_turn_range),
                model=draft.model,
            )

        draft, errors = await attempt(work(), DraftCheckpointError)
        return DraftCheckpointPayload(draft=draft, errors=errors)

    @strawberry.mutation(
        description="Save a checkpoint on the session's branch; its parent is that branch's head."
    )
    async def create_checkpoint(
        self,
        info: Info,
        input: Annotated[
            CreateCheckpointInput,
            strawberry.argument(description="The createCheckpoint arguments."),
        ],
    ) -> CreateCheckpointPayload:
        async def work() -> Checkpoint:
            session_id = ids.decode(input.session_id, "Session", field="sessionId")
            session = await sessions.get(info.context.owner_id, session_id)
            content = CheckpointContent(
                title=input.title,
                objective=input.objective or "",
                summary=input.summary or "",
                decisions=tuple(input.decisions or ()),
                tasks=tuple(input.tasks or ()),
                open_questions=tuple(input.open_questions or ()),
                entities=tuple(input.entities or ()),
            )
            span = input.source_turn_range
            saved = await checkpoint_service.create(
                info.context.services,
                session,
                content,
                source_turn_range=TurnRange(span.first, span.last) if span else None,
            )
            return Checkpoint.from_domain(saved)

        checkpoint, errors = await attempt(work(), CreateCheckpointError)
        return CreateCheckpointPayload(checkpoint=checkpoint, errors=errors)
