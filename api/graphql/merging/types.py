"""Merging a checkpoint into a branch: the preview and its parts."""

from __future__ import annotations

import enum

import strawberry

from ...domain.merge import FieldMerge as DomainFieldMerge
from ...domain.merge import MergedItem as DomainMergedItem
from ...domain.merge import Origin
from ...domain.types import CONTENT_LIST_FIELDS
from ...services.merging import MergePlan
from ..checkpoints.types import Checkpoint


@strawberry.enum(description="Where an item of a merge result comes from.")
class MergeOrigin(enum.Enum):
    ANCESTOR = strawberry.enum_value(
        "ANCESTOR", description="The common ancestor had it and both sides kept it."
    )
    OURS = strawberry.enum_value(
        "OURS",
        description="Added by the branch merged into (`into`); for a conflict, the side "
        "that kept (and touched) it.",
    )
    THEIRS = strawberry.enum_value(
        "THEIRS",
        description="Added by the checkpoint merged in (`from`); for a conflict, the side "
        "that kept (and touched) it.",
    )
    BOTH = strawberry.enum_value("BOTH", description="Added by both sides independently.")


@strawberry.enum(description="A list field of a checkpoint.")
class CheckpointListField(enum.Enum):
    DECISIONS = strawberry.enum_value("decisions", description="Decisions.")
    TASKS = strawberry.enum_value("tasks", description="Open tasks.")
    OPEN_QUESTIONS = strawberry.enum_value("open_questions", description="Open questions.")
    ENTITIES = strawberry.enum_value("entities", description="Entities.")


@strawberry.type(description="One item of a merged list field.")
class MergeItem:
    text: str = strawberry.field(description="The item, as the side it comes from spells it.")
    origin: MergeOrigin = strawberry.field(description="Where it comes from.")

    @classmethod
    def from_domain(cls, item: DomainMergedItem) -> MergeItem:
        return cls(text=item.text, origin=MergeOrigin[Origin(item.origin).value])


@strawberry.type(
    description="One list field merged three-way against the common ancestor (items matched "
    "ignoring case, punctuation and spacing, as compareCheckpoints matches them)."
)
class MergedField:
    items: list[MergeItem] = strawberry.field(
        description="The proposed list, in order: the `into` side's items, then the "
        "additions of the `from` side. Conflicts are not in it."
    )
    conflicts: list[MergeItem] = strawberry.field(
        description="Items the common ancestor had that one side removed while the other "
        "edited or re-added them (`origin` is the side that kept them). Each must be resolved "
        "(kept or dropped) before mergeCheckpoints saves."
    )

    @classmethod
    def from_domain(cls, merged: DomainFieldMerge) -> MergedField:
        return cls(
            items=[MergeItem.from_domain(i) for i in merged.items],
            conflicts=[MergeItem.from_domain(i) for i in merged.conflicts],
        )


@strawberry.type(description="What mergeCheckpoints would do; previewMerge writes nothing.")
class MergePreview:
    into: str = strawberry.field(description="The branch merged into.")
    ours: Checkpoint = strawberry.field(description="The head of `into` (the first parent).")
    theirs: Checkpoint = strawberry.field(
        description="The checkpoint merged in (the merge parent)."
    )
    common_ancestor: Checkpoint | None = strawberry.field(
        description="The nearest checkpoint both descend from, following both parent links "
        "(null for two unrelated roots: then every item is an addition)."
    )
    fast_forward: bool = strawberry.field(
        description="The head of `into` is an ancestor of `from`: merging moves the branch "
        "head to `from` and saves no new checkpoint."
    )
    up_to_date: bool = strawberry.field(
        description="`from` is already `into`'s head or an ancestor of it: there is nothing "
        "to merge."
    )
    decisions: MergedField = strawberry.field(description="Decisions merged.")
    tasks: MergedField = strawberry.field(description="Tasks merged.")
    open_questions: MergedField = strawberry.field(description="Open questions merged.")
    entities: MergedField = strawberry.field(description="Entities merged.")
    conflict_count: int = strawberry.field(description="Conflicts over all four fields.")
    suggested_title: str = strawberry.field(description="A draft title, for the user to edit.")
    suggested_objective: str = strawberry.field(
        description="A draft objective built from both sides' objectives."
    )
    suggested_summary: str = strawberry.field(
        description="A draft summary built from both sides' summaries."
    )
    suggestion_model: str | None = strawberry.field(
        description="The background model that wrote the suggested title, objective and "
        "summary; null when they are plain text joined from both sides (the model was not "
        "asked, is unavailable or failed, or the merge is a fast-forward)."
    )

    @classmethod
    def from_domain(cls, plan: MergePlan) -> MergePreview:
        merge = plan.merge
        return cls(
            into=plan.into,
            ours=Checkpoint.from_domain(plan.ours),
            theirs=Checkpoint.from_domain(plan.theirs),
            common_ancestor=Checkpoint.from_domain(plan.ancestor) if plan.ancestor else None,
            fast_forward=plan.fast_forward,
            up_to_date=plan.up_to_date,
            **{f.attr: MergedField.from_domain(merge.field(f.attr)) for f in CONTENT_LIST_FIELDS},
            conflict_count=merge.conflict_count,
            suggested_title=plan.suggestion.title,
            suggested_objective=plan.suggestion.objective,
            suggested_summary=plan.suggestion.summary,
            suggestion_model=plan.suggestion_model,
        )
