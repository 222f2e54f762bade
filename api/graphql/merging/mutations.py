"""mergeCheckpoints."""

from __future__ import annotations

import enum
from typing import Annotated

import strawberry

from ...domain.merge import Origin, Resolution
from ...domain.validation import OBJECTIVE_MAX_CHARS, SUMMARY_MAX_CHARS, TITLE_MAX_CHARS
from ...services import merging
from ..checkpoints.types import Checkpoint
from ..context import Info
from ..core import ids
from ..core.errors import MutationError
from .types import CheckpointListField


@strawberry.type(description="A reason `mergeCheckpoints` did not succeed.")
class MergeCheckpointsError(MutationError):
    pass


@strawberry.enum(description="One side of a merge.")
class MergeSide(enum.Enum):
    INTO = strawberry.enum_value("INTO", description="The branch merged into (`into`).")
    FROM = strawberry.enum_value("FROM", description="The checkpoint merged in (`from`).")


@strawberry.input(description="How one conflict of a merge is resolved.")
class MergeResolutionInput:
    field: CheckpointListField = strawberry.field(description="The list field of the conflict.")
    item: str | None = strawberry.field(
        default=None,
        description="The conflicting item: any of its texts (matched ignoring case, "
        "punctuation and spacing). Give it or `itemId`.",
    )
    item_id: str | None = strawberry.field(
        default=None, description="The conflicting item's identity (MergeConflict.id)."
    )
    keep: bool | None = strawberry.field(
        default=None,
        description="False drops the item; true keeps the only text there is (one branch "
        "removed it). When both branches have a text, say which with `take`.",
    )
    take: MergeSide | None = strawberry.field(
        default=None, description="Keep this branch's text of the item."
    )


@strawberry.input(description="A merge of a checkpoint into a branch.")
class MergeCheckpointsInput:
    space_id: strawberry.ID = strawberry.field(description="The space of both.")
    into: str = strawberry.field(description="The branch to merge into.")
    from_: strawberry.ID = strawberry.field(
        name="from", description="The checkpoint to merge in (of the same space)."
    )
    title: str = strawberry.field(
        description=f"The merge checkpoint's title (required; at most {TITLE_MAX_CHARS} "
        "characters; unused by a fast-forward)."
    )
    objective: str | None = strawberry.field(
        default=None,
        description=f"Its objective (at most {OBJECTIVE_MAX_CHARS:,} characters; default: "
        "previewMerge's suggestedObjective).",
    )
    summary: str | None = strawberry.field(
        default=None,
        description=f"Its summary (at most {SUMMARY_MAX_CHARS:,} characters; default: "
        "previewMerge's suggestedSummary).",
    )
    resolutions: list[MergeResolutionInput] = strawberry.field(
        default_factory=list,
        description="One per conflict previewMerge reported (`itemConflicts`): take one "
        "branch's text, keep the only text there is, or drop the item. None is chosen for you.",
    )


@strawberry.type(description="The result of mergeCheckpoints.")
class MergeCheckpointsPayload:
    checkpoint: Checkpoint | None = strawberry.field(
        description="The new head of `into`: the merge checkpoint, or after a fast-forward "
        "the checkpoint merged in."
    )
    fast_forward: bool = strawberry.field(
        description="True when the branch head was moved to `from` and nothing was saved."
    )
    errors: list[MergeCheckpointsError] = strawberry.field(
        description="Why it failed, if it did: CONFLICT while a conflict is unresolved (or "
        "the branch moved since the preview), NOT_FOUND for an unknown space, branch, or a "
        "checkpoint of another space, INVALID when `into` already contains `from`."
    )


@strawberry.type
class MergeMutation:
    @strawberry.mutation(
        description="Merge a checkpoint into a branch. Saves a checkpoint on `into` whose "
        "`parent` is `into`'s head and whose `mergeParent` is `from`, with the list fields "
        "merged as previewMerge shows and every conflict resolved; refuses (CONFLICT) while "
        "one is not. When `into`'s head is an ancestor of `from` it fast-forwards instead: "
        "the branch head moves to `from` and no checkpoint is saved."
    )
    async def merge_checkpoints(
        self,
        info: Info,
        input: Annotated[
            MergeCheckpointsInput,
            strawberry.argument(description="The mergeCheckpoints arguments."),
        ],
    ) -> MergeCheckpointsPayload:
        result = await merging.merge(
            info.context.actor,
            ids.decode(input.space_id, "Space", field="spaceId"),
            input.into,
            ids.decode(input.from_, "Checkpoint", field="from"),
            title=input.title,
            objective=input.objective,
            summary=input.summary,
            resolutions=[
                Resolution(
                    field=str(r.field.value),
                    item=r.item,
                    keep=r.keep,
                    item_id=r.item_id,
                    take=None if r.take is None else _SIDES[r.take],
                )
                for r in input.resolutions
            ],
        )
        return MergeCheckpointsPayload(
            checkpoint=Checkpoint.from_domain(result.checkpoint),
            fast_forward=result.fast_forward,
            errors=[],
        )


_SIDES = {MergeSide.INTO: Origin.OURS, MergeSide.FROM: Origin.THEIRS}
