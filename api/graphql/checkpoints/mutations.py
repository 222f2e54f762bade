"""draftCheckpoint and createCheckpoint."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.carry import CarriedState as DomainCarriedState
from ...domain.types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    CheckpointContent,
    ContentField,
    TurnRange,
)
from ...domain.validation import (
    ITEM_MAX_CHARS,
    LIST_MAX_ITEMS,
    OBJECTIVE_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
)
from ...errors import ErrorCode, InputError
from ...services import checkpoints as checkpoint_service
from ..context import Info
from ..core import ids
from ..core.common import TurnRange as TurnRangeType
from ..core.common import TurnRangeInput
from ..core.errors import MutationError, retry_after_field
from .fields import Made, last_list_attr, list_fields
from .types import Checkpoint, CheckpointItem, CheckpointItemInput, items_of


@strawberry.type(description="A reason `draftCheckpoint` did not succeed.")
class DraftCheckpointError(MutationError):
    retry_after_seconds: float | None = retry_after_field()


@strawberry.type(description="A reason `createCheckpoint` did not succeed.")
class CreateCheckpointError(MutationError):
    pass


def _carried_value(f: ContentField) -> Made:
    return f.attr, list[str], strawberry.field(description=f"Its {f.api_phrase.lower()}.")


def _carried_items(f: ContentField) -> Made:
    label = f.label.lower()
    # The first field's description says why; the others only what.
    if f == CONTENT_LIST_FIELDS[0]:
        about = (
            f"Its {label} with their ids: send them back as `{f.item_name}` to keep each "
            "item's identity."
        )
    else:
        about = f"Its {label} with their ids (send back as `{f.item_name}`)."
    return f.item_attr, list[CheckpointItem], strawberry.field(description=about)


@strawberry.type(
    description="The state a new checkpoint starts from: the items of the checkpoint it will "
    "continue (the head of the session's branch, its parent once saved). A checkpoint is a "
    "snapshot of the whole state, so these are carried forward unless the user drops them."
)
@list_fields(after=last_list_attr(), make=_carried_items)
@list_fields(after="objective", make=_carried_value)
class CarriedState:
    checkpoint: Checkpoint | None = strawberry.field(
        description="Where the items come from: the head of the session's branch (none when "
        "the branch has no checkpoint yet, and then every list is empty)."
    )
    objective: str = strawberry.field(description="Its objective.")
    # Here: each list field, then each one's items with ids (``list_fields``).

    @classmethod
    def from_domain(cls, carried: DomainCarriedState) -> CarriedState:
        return cls(
            checkpoint=Checkpoint.from_domain(carried.checkpoint) if carried.checkpoint else None,
            objective=carried.objective,
            **{f.attr: list(getattr(carried, f.attr)) for f in CONTENT_LIST_FIELDS},
            **items_of(carried.item_ids, carried),
        )


@strawberry.type(
    description="An unsaved checkpoint proposed by the background model from the turn window "
    "alone (no checkpoint fields reach its prompt)."
)
@list_fields(
    after="summary",
    make=lambda f: (
        f.attr,
        list[str],
        strawberry.field(description=f"Proposed {f.label.lower()}."),
    ),
)
class CheckpointDraft:
    title: str = strawberry.field(description="Proposed title.")
    objective: str = strawberry.field(description="Proposed objective.")
    summary: str = strawberry.field(description="Proposed summary.")
    # Here: each list field (``list_fields``).
    source_turn_range: TurnRangeType | None = strawberry.field(
        description="The turns it was drafted from (the next message's window)."
    )
    model: str = strawberry.field(description="The model that drafted it.")


@strawberry.input(description="The session to draft a checkpoint from.")
class DraftCheckpointInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")


@strawberry.type(
    description="The result of draftCheckpoint: the parent's items (`carried`) apart from what "
    "was extracted from the window (`extracted`). The checkpoint to save is the state after "
    "this window: usually the carried items, minus what is done or resolved, plus the "
    "extracted ones."
)
class DraftCheckpointPayload:
    draft: CheckpointDraft | None = strawberry.field(
        description="The same as `extracted`.",
        deprecation_reason="Use `extracted` (the same draft) together with `carried` "
        "(the parent's items, which the draft does not contain).",
    )
    extracted: CheckpointDraft | None = strawberry.field(
        description="What the background model extracted from the window the next message "
        "would see, and nothing else (not saved)."
    )
    carried: CarriedState | None = strawberry.field(
        description="The state carried forward from the checkpoint a save would continue."
    )
    errors: list[DraftCheckpointError] = strawberry.field(description="Why it failed, if it did.")


_LIST = f" (at most {LIST_MAX_ITEMS} items, each at most {ITEM_MAX_CHARS:,} characters)."
_ITEMS = (
    "Giving both a field and its items is refused (INVALID). An item sent as a plain "
    "string takes the id of the parent's item with the same text (ignoring case, "
    "punctuation and spacing), or a new one."
)


def _input_value(f: ContentField) -> Made:
    about = f"{f.api_phrase}{_LIST}"
    return f.attr, list[str] | None, strawberry.field(default=None, description=about)


def _input_items(f: ContentField) -> Made:
    about = f"{f.api_phrase} with their ids, instead of `{f.name}`{_LIST}"
    # The first field's description says the rules of all.
    if f == CONTENT_LIST_FIELDS[0]:
        about += f" {_ITEMS}"
    made = strawberry.field(default=None, description=about)
    return f.item_attr, list[CheckpointItemInput] | None, made


@strawberry.input(description="A checkpoint to save on the session's branch.")
@list_fields(after=last_list_attr(), make=_input_items)
@list_fields(after="summary", make=_input_value)
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
    # Here: each list field, then each one's items with ids (``list_fields``).
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
        "see (and nothing else), and return it beside the state carried forward from the "
        "branch head. Nothing is saved."
    )
    async def draft_checkpoint(
        self,
        info: Info,
        input: Annotated[
            DraftCheckpointInput, strawberry.argument(description="The draftCheckpoint arguments.")
        ],
    ) -> DraftCheckpointPayload:
        draft = await checkpoint_service.draft(
            info.context.services,
            info.context.actor,
            ids.decode(input.session_id, "Session", field="sessionId"),
        )
        extracted = CheckpointDraft(
            **draft.content.columns(),
            source_turn_range=TurnRangeType.from_domain(draft.source_turn_range),
            model=draft.model,
        )
        return DraftCheckpointPayload(
            draft=extracted,
            extracted=extracted,
            carried=CarriedState.from_domain(draft.carried),
            errors=[],
        )

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
        content, items = content_input(input)
        span = input.source_turn_range
        saved = await checkpoint_service.create(
            info.context.services,
            info.context.actor,
            ids.decode(input.session_id, "Session", field="sessionId"),
            content,
            source_turn_range=TurnRange(span.first, span.last) if span else None,
            items=items,
        )
        return CreateCheckpointPayload(checkpoint=Checkpoint.from_domain(saved), errors=[])


def content_input(
    input: CreateCheckpointInput,
) -> tuple[CheckpointContent, dict[str, list[tuple[str | None, str]]]]:
    """The content an input gives, and per list field sent as items each
    item's (id or None, text)."""
    values = {f.attr: getattr(input, f.attr) for f in CONTENT_FIELDS}
    items: dict[str, list[tuple[str | None, str]]] = {}
    for f in CONTENT_LIST_FIELDS:
        sent: list[CheckpointItemInput] | None = getattr(input, f.item_attr)
        if sent is None:
            continue
        if values[f.attr] is not None:
            raise InputError(
                f"Give {f.name} or {f.item_name}, not both.",
                code=ErrorCode.INVALID,
                field=f.item_name,
            )
        items[f.attr] = [(item.id, item.text) for item in sent]
        values[f.attr] = [item.text for item in sent]
    return CheckpointContent.from_columns(values), items
