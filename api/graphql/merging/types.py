"""Merging a checkpoint into a branch: the preview and its parts."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import strawberry

from ...domain.contradictions import Contradiction as DomainContradiction
from ...domain.merge import Change, MatchedBy, Origin
from ...domain.merge import Conflict as DomainConflict
from ...domain.merge import Dropped as DomainDropped
from ...domain.merge import FieldMerge as DomainFieldMerge
from ...domain.merge import MergedItem as DomainMergedItem
from ...domain.merge import SimilarityMatch as DomainSimilarityMatch
from ...domain.types import CONTENT_LIST_FIELDS
from ...services.merging import MergePlan
from ..checkpoints.fields import list_field_count, list_fields
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


if TYPE_CHECKING:

    class CheckpointListField(enum.Enum):
        """For the type checker: the members are made from the registry."""

else:
    # A list field of a checkpoint, by attribute name: DECISIONS = "decisions",
    # one member per list field of the registry.
    CheckpointListField = strawberry.enum(
        enum.Enum(
            "CheckpointListField",
            {
                f.member: strawberry.enum_value(f.attr, description=f"{f.api_phrase}.")
                for f in CONTENT_LIST_FIELDS
            },
            module=__name__,
        ),
        description="A list field of a checkpoint.",
    )


@strawberry.enum(description="How a merge matched an item across the two sides.")
class MergeMatch(enum.Enum):
    IDENTITY = strawberry.enum_value("IDENTITY", description="By the item's id.")
    SIMILARITY = strawberry.enum_value(
        "SIMILARITY",
        description="No id in common: by near-identical text (the Jaccard index of the two "
        "items' word sets, ignoring case and punctuation, at least 0.7).",
    )


@strawberry.enum(description="What one side of a merge did to an item, against the ancestor.")
class ItemChange(enum.Enum):
    KEPT = strawberry.enum_value("KEPT", description="Kept it unchanged.")
    EDITED = strawberry.enum_value("EDITED", description="Changed its text.")
    REMOVED = strawberry.enum_value("REMOVED", description="Removed it.")
    ADDED = strawberry.enum_value("ADDED", description="Added it (the ancestor lacks it).")


@strawberry.type(description="One item of a merged list field.")
class MergeItem:
    text: str = strawberry.field(description="The item, as the side it comes from spells it.")
    origin: MergeOrigin = strawberry.field(description="Where it comes from.")
    id: str = strawberry.field(
        description="The item's identity, which the merge checkpoint keeps (the ancestor's, "
        "or the side's that added it)."
    )
    matched_by: MergeMatch = strawberry.field(
        description="How the sides' items were matched to give it."
    )

    @classmethod
    def from_domain(cls, item: DomainMergedItem) -> MergeItem:
        return cls(
            text=item.text,
            origin=MergeOrigin[Origin(item.origin).value],
            id=item.id,
            matched_by=MergeMatch[MatchedBy(item.matched_by).value],
        )

    @classmethod
    def from_conflict(cls, conflict: DomainConflict) -> MergeItem:
        """The older shape of a conflict: a side's text and that side (BOTH and
        `into`'s text when both sides edited it)."""
        if conflict.ours is not None and conflict.theirs is not None:
            text, origin = conflict.ours, Origin.BOTH
        elif conflict.ours is not None:
            text, origin = conflict.ours, Origin.OURS
        else:
            text, origin = conflict.theirs or "", Origin.THEIRS
        return cls(
            text=text,
            origin=MergeOrigin[origin.value],
            id=conflict.id,
            matched_by=MergeMatch[MatchedBy(conflict.matched_by).value],
        )


@strawberry.type(
    description="An item both sides changed incompatibly: removed on one and edited on the "
    "other, edited differently on both, or added differently on both. It starts undecided: "
    "mergeCheckpoints refuses (CONFLICT) until a resolution takes one side's text or drops it."
)
class MergeConflict:
    id: str = strawberry.field(description="The item's identity (name it in the resolution).")
    ancestor_text: str | None = strawberry.field(
        description="The common ancestor's text (null: both sides added it)."
    )
    into_branch: str = strawberry.field(description="The branch merged into.")
    into_text: str | None = strawberry.field(
        description="Its text on `intoBranch` (null: removed there)."
    )
    into_change: ItemChange = strawberry.field(description="What `intoBranch` did to it.")
    from_branch: str = strawberry.field(description="The branch of the checkpoint merged in.")
    from_text: str | None = strawberry.field(
        description="Its text on `fromBranch` (null: removed there)."
    )
    from_change: ItemChange = strawberry.field(description="What `fromBranch` did to it.")
    description: str = strawberry.field(
        description='Who did what, in plain words: "removed on rail, edited on main".'
    )
    matched_by: MergeMatch = strawberry.field(description="How the sides' items were matched.")

    @classmethod
    def from_domain(cls, conflict: DomainConflict, into: str, from_branch: str) -> MergeConflict:
        ours, theirs = conflict.ours_change, conflict.theirs_change
        return cls(
            id=conflict.id,
            ancestor_text=conflict.ancestor,
            into_branch=into,
            into_text=conflict.ours,
            into_change=ItemChange[Change(ours).value],
            from_branch=from_branch,
            from_text=conflict.theirs,
            from_change=ItemChange[Change(theirs).value],
            description=_who(theirs, from_branch, ours, into),
            matched_by=MergeMatch[MatchedBy(conflict.matched_by).value],
        )


def _who(first: Change, first_branch: str, second: Change, second_branch: str) -> str:
    """Removals first: "removed on rail, edited on main"."""
    sides = sorted(
        [(first, first_branch), (second, second_branch)], key=lambda s: s[0] != Change.REMOVED
    )
    return ", ".join(f"{change.value.lower()} on {branch}" for change, branch in sides)


@strawberry.type(
    description="An item of the common ancestor that one branch removed and the other left "
    "untouched: the merge drops it."
)
class DroppedItem:
    id: str = strawberry.field(description="The item's identity.")
    text: str = strawberry.field(description="Its text (as the branch that kept it has it).")
    removed_on: str = strawberry.field(description="The branch that removed it.")
    kept_on: str = strawberry.field(description="The branch that left it untouched.")
    matched_by: MergeMatch = strawberry.field(description="How the sides' items were matched.")

    @classmethod
    def from_domain(cls, dropped: DomainDropped, into: str, from_branch: str) -> DroppedItem:
        removed_by_into = dropped.removed_by == Origin.OURS
        return cls(
            id=dropped.id,
            text=dropped.text,
            removed_on=into if removed_by_into else from_branch,
            kept_on=from_branch if removed_by_into else into,
            matched_by=MergeMatch[MatchedBy(dropped.matched_by).value],
        )


@strawberry.type(
    description="Items with no identity in common that the merge took as one item because "
    "their texts are near-identical (imported, from older checkpoints, or added on both "
    "branches)."
)
class SimilarityMatch:
    id: str = strawberry.field(description="The identity of the item they became.")
    ancestor_text: str | None = strawberry.field(
        description="The common ancestor's item among them, if one."
    )
    into_text: str | None = strawberry.field(description="`into`'s item among them, if one.")
    from_text: str | None = strawberry.field(
        description="The merged-in checkpoint's item among them, if one."
    )
    similarity: float = strawberry.field(
        description="How alike their texts are: 0.7 (the threshold) to 1.0."
    )

    @classmethod
    def from_domain(cls, match: DomainSimilarityMatch) -> SimilarityMatch:
        return cls(
            id=match.id,
            ancestor_text=match.ancestor,
            into_text=match.ours,
            from_text=match.theirs,
            similarity=round(match.score, 4),
        )


@strawberry.type(
    description="One list field merged three-way against the common ancestor, item by item "
    "identity (items with no identity in common matched by near-identical text)."
)
class MergedField:
    items: list[MergeItem] = strawberry.field(
        description="The proposed list, in order: the `into` side's items, then the "
        "additions of the `from` side. Conflicts and dropped items are not in it."
    )
    conflicts: list[MergeItem] = strawberry.field(
        description="The conflicts in short: a side's text and that side (`origin` BOTH with "
        "`into`'s text when both edited it). `itemConflicts` has both sides' texts."
    )
    item_conflicts: list[MergeConflict] = strawberry.field(
        description="The conflicts, each with both branches' texts and what each did; every "
        "one must be resolved before mergeCheckpoints saves."
    )
    dropped: list[DroppedItem] = strawberry.field(
        description="What the merge drops: ancestor items one branch removed and the other "
        "left untouched, with the branch that removed each."
    )
    similarity_matches: list[SimilarityMatch] = strawberry.field(
        description="Items matched by near-identical text rather than by identity."
    )

    @classmethod
    def from_domain(cls, merged: DomainFieldMerge, into: str, from_branch: str) -> MergedField:
        return cls(
            items=[MergeItem.from_domain(i) for i in merged.items],
            conflicts=[MergeItem.from_conflict(c) for c in merged.conflicts],
            item_conflicts=[
                MergeConflict.from_domain(c, into, from_branch) for c in merged.conflicts
            ],
            dropped=[DroppedItem.from_domain(d, into, from_branch) for d in merged.dropped],
            similarity_matches=[SimilarityMatch.from_domain(m) for m in merged.matches],
        )


@strawberry.enum(description="What found a merge warning.")
class MergeWarningSource(enum.Enum):
    MODEL = strawberry.enum_value("MODEL", description="The background model.")
    HEURISTIC = strawberry.enum_value(
        "HEURISTIC",
        description="A plain word-level heuristic (with the offline model, or without "
        "draftWithModel): in decisions or tasks, the two items share a salient word and "
        "only one is negated, or they start with opposite verbs (add/remove, use/avoid…). "
        "It misses most contradictions and may flag compatible items.",
    )


@strawberry.type(
    description="A likely contradiction between an item the branch merged into added or "
    "edited and one the merged-in checkpoint added or edited, in the same list field. A "
    "warning only: it changes nothing in the merge and never blocks mergeCheckpoints."
)
class MergeWarning:
    field: CheckpointListField = strawberry.field(description="The list field of both items.")
    into_item_id: str = strawberry.field(description="The identity of `into`'s item.")
    into_text: str = strawberry.field(description="`into`'s item.")
    from_item_id: str = strawberry.field(description="The identity of the merged-in item.")
    from_text: str = strawberry.field(description="The merged-in checkpoint's item.")
    reason: str = strawberry.field(description="Why they look contradictory, in one sentence.")
    source: MergeWarningSource = strawberry.field(description="What found it.")

    @classmethod
    def from_domain(cls, found: DomainContradiction) -> MergeWarning:
        return cls(
            field=CheckpointListField(found.field),
            into_item_id=found.into_id,
            into_text=found.into_text,
            from_item_id=found.from_id,
            from_text=found.from_text,
            reason=found.reason,
            source=MergeWarningSource(found.source.value),
        )


@strawberry.type(description="What mergeCheckpoints would do; previewMerge writes nothing.")
@list_fields(
    after="up_to_date",
    make=lambda f: (
        f.attr,
        MergedField,
        strawberry.field(description=f"{f.label} merged."),
    ),
)
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
    # Here: each list field merged (``list_fields``).
    conflict_count: int = strawberry.field(
        description=f"Conflicts over all {list_field_count()} fields: how many are left to decide."
    )
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
    warnings: list[MergeWarning] = strawberry.field(
        description="Likely contradictions between the two sides' surviving items, for the "
        "user to read and dismiss: never resolved, never blocking. From the background "
        "model when `draftWithModel` is true and that model is not the offline one (in the "
        "same model call rules as the draft), else from the word-level heuristic; empty "
        "for a fast-forward or a branch already up to date."
    )
    warnings_note: str | None = strawberry.field(
        description="Why there are no model warnings although the model was asked (it "
        "failed, or its answer could not be used); null otherwise."
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
            **{
                f.attr: MergedField.from_domain(
                    merge.field(f.attr), plan.into, plan.theirs.branch_name
                )
                for f in CONTENT_LIST_FIELDS
            },
            conflict_count=merge.conflict_count,
            suggested_title=plan.suggestion.title,
            suggested_objective=plan.suggestion.objective,
            suggested_summary=plan.suggestion.summary,
            suggestion_model=plan.suggestion_model,
            warnings=[MergeWarning.from_domain(w) for w in plan.warnings],
            warnings_note=plan.warnings_note,
        )
