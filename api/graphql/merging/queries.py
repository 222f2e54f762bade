"""previewMerge: what merging a checkpoint into a branch would give."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import merging
from ..checkpoints.fields import list_field_count
from ..context import Info
from ..core import ids
from .types import MergePreview


@strawberry.input(description="What previewMerge should preview.")
class PreviewMergeInput:
    space_id: strawberry.ID = strawberry.field(description="The space of both.")
    into: str = strawberry.field(description="The branch to merge into (its head is `ours`).")
    from_: strawberry.ID = strawberry.field(
        name="from", description="The checkpoint to merge in (of the same space)."
    )
    draft_with_model: bool = strawberry.field(
        default=False,
        description="Ask the background model to write the suggested title, objective and "
        "summary (one model call; plain text from both sides if it is unavailable or "
        "fails). False: plain text, no model call.",
    )


@strawberry.type
class MergeQuery:
    @strawberry.field(
        description="What merging a checkpoint into a branch would give: the "
        f"{list_field_count()} list "
        "fields merged three-way against the common ancestor, each item with its origin, "
        "the conflicts, whether it is a fast-forward, and a draft title, objective and "
        "summary. Writes nothing; null when the space, the branch or the checkpoint (in that "
        "space) is not found."
    )
    async def preview_merge(
        self,
        info: Info,
        input: Annotated[
            PreviewMergeInput, strawberry.argument(description="The previewMerge arguments.")
        ],
    ) -> MergePreview | None:
        actor = info.context.actor
        space_id = ids.decode(input.space_id, "Space", field="spaceId")
        from_id = ids.decode(input.from_, "Checkpoint", field="from")
        plan = (
            await merging.preview_with_draft(
                info.context.services, actor, space_id, input.into, from_id
            )
            if input.draft_with_model
            else await merging.preview(actor, space_id, input.into, from_id)
        )
        return MergePreview.from_domain(plan)
