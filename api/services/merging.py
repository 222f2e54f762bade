"""Previewing and saving the merge of a checkpoint into a branch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..domain.accounts import Actor
from ..domain.contradictions import (
    Contradiction,
    UnusableAnswer,
    build_contradiction_messages,
    heuristic_contradictions,
    merge_sides,
    parse_contradictions,
)
from ..domain.extraction import parse_draft
from ..domain.hashing import checkpoint_hash
from ..domain.identity import given_ids
from ..domain.merge import (
    Merge,
    Resolution,
    build_merge_draft_messages,
    merge_checkpoints,
    resolve,
)
from ..domain.types import Checkpoint, CheckpointContent, ItemIds
from ..domain.validation import (
    OBJECTIVE_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    validate_checkpoint_content,
)
from ..errors import ErrorCode, Forbidden, InputError, NotFound, ProviderError
from ..providers import ModelRef
from ..providers.offline import OFFLINE_PROVIDER
from ..store import checkpoints
from . import access, policy
from .base import Services


@dataclass(frozen=True)
class MergePlan:
    into: str
    ours: Checkpoint  # the head of `into`
    theirs: Checkpoint  # the checkpoint merged in
    ancestor: Checkpoint | None
    merge: Merge
    suggestion: CheckpointContent  # title, objective and summary only
    suggestion_model: str | None = None  # the model that wrote it; None: plain text
    # Likely contradictions between the sides: warnings, never blocking.
    warnings: tuple[Contradiction, ...] = ()
    warnings_note: str | None = None  # why the model found none it could say

    @property
    def fast_forward(self) -> bool:
        """`into`'s head is an ancestor of `theirs`: the head just moves."""
        return self.ancestor is not None and self.ancestor.id == self.ours.id

    @property
    def up_to_date(self) -> bool:
        """`theirs` is already part of `into` (its head or an ancestor of it)."""
        return self.ancestor is not None and self.ancestor.id == self.theirs.id


@dataclass(frozen=True)
class MergeResult:
    checkpoint: Checkpoint  # the new merge checkpoint, or `theirs` after a fast-forward
    fast_forward: bool


async def preview(actor: Actor, space_id: int, into: str, from_id: int) -> MergePlan:
    """Everything a merge would do, computed and nothing written."""
    rule = policy.allow(actor, "previewMerge")
    await access.space(actor, space_id, rule.role)
    return await _plan(space_id, into, from_id)


async def _plan(space_id: int, into: str, from_id: int) -> MergePlan:
    """The merge plan in a space whose membership the caller has read (once):
    a checkpoint of the same space needs no second read of it."""
    theirs = await checkpoints.get(from_id, field="from")
    if theirs.space_id != space_id:
        # A checkpoint of another space is not one this space can name.
        raise NotFound("No such checkpoint in this space.", field="from")
    ours_id = await checkpoints.head_id(space_id, into)
    if ours_id is None:
        raise NotFound(f'The space has no branch "{into}".', field="into")
    ancestor_id = await checkpoints.common_ancestor_id(ours_id, theirs.id)
    known = await checkpoints.get_many([i for i in (ours_id, ancestor_id) if i is not None])
    ours = known[ours_id]
    ancestor = known.get(ancestor_id) if ancestor_id is not None else None
    merge = merge_checkpoints(ancestor, ours, theirs)
    plan = MergePlan(into, ours, theirs, ancestor, merge, _suggest(into, ours, theirs))
    if plan.fast_forward or plan.up_to_date:
        return plan  # nothing is merged: nothing to contradict
    return replace(plan, warnings=heuristic_contradictions(merge_sides(merge)))


async def preview_with_draft(
    services: Services, actor: Actor, space_id: int, into: str, from_id: int
) -> MergePlan:
    """``preview``, its suggestion written by the background model (or for an
    actor who may not use it, the first model they may use) when that model
    answers; a failed or unavailable model, or none they may use, leaves the
    plain-text one. The same model is asked for likely contradictions, unless
    it is the offline model (then the heuristic's warnings stay); a failed
    call or an unusable answer gives no warnings and a note, never an error."""
    plan = await preview(actor, space_id, into, from_id)
    if plan.up_to_date or plan.fast_forward:
        return plan  # nothing will be written: no draft needed
    registry = services.registry
    try:
        background = await access.background_model(registry, actor)
    except Forbidden:
        return plan  # no model this actor may use: plain text, heuristic warnings
    try:
        completion = await registry.complete(
            build_merge_draft_messages(into, plan.ours, plan.theirs), background
        )
        drafted = parse_draft(completion.text)
    except ProviderError:
        pass
    else:
        suggestion = CheckpointContent(
            title=_clip(drafted.title, TITLE_MAX_CHARS) or plan.suggestion.title,
            objective=_clip(drafted.objective, OBJECTIVE_MAX_CHARS),
            summary=_clip(drafted.summary, SUMMARY_MAX_CHARS),
        )
        plan = replace(plan, suggestion=suggestion, suggestion_model=background.name)
    return await _contradictions(services, plan, background)


async def _contradictions(services: Services, plan: MergePlan, model: ModelRef) -> MergePlan:
    """The plan with the model's contradiction warnings; the offline model
    keeps the heuristic's. Only the two checkpoints' merged items and the
    branch names are sent, and only when both sides changed one field."""
    if model.provider == OFFLINE_PROVIDER:
        return plan
    sides = merge_sides(plan.merge)
    if not sides:
        return replace(plan, warnings=())
    messages = build_contradiction_messages(plan.into, plan.theirs.branch_name, sides)
    try:
        completion = await services.registry.complete(messages, model)
        found = parse_contradictions(completion.text, sides)
    except (ProviderError, UnusableAnswer) as problem:
        what = str(problem) if isinstance(problem, UnusableAnswer) else problem.message
        return replace(
            plan,
            warnings=(),
            warnings_note=f"{model.name} could not check for contradictions: {what}",
        )
    return replace(plan, warnings=found)


async def merge(
    actor: Actor,
    space_id: int,
    into: str,
    from_id: int,
    *,
    title: str,
    objective: str | None,
    summary: str | None,
    resolutions: Sequence[Resolution],
) -> MergeResult:
    """Merge (or fast-forward), as the policy's mergeCheckpoints allows. The
    space's membership is read once, here."""
    rule = policy.allow(actor, "mergeCheckpoints")
    await access.space(actor, space_id, rule.role)
    plan = await _plan(space_id, into, from_id)
    if plan.up_to_date:
        raise InputError(
            f'The branch "{into}" already contains that checkpoint.',
            code=ErrorCode.INVALID,
            field="from",
        )
    if plan.fast_forward:
        await checkpoints.fast_forward(space_id, into, from_id=plan.ours.id, to_id=plan.theirs.id)
        return MergeResult(plan.theirs, fast_forward=True)
    lists = resolve(plan.merge, resolutions)
    valid = validate_checkpoint_content(
        title=title,
        objective=plan.suggestion.objective if objective is None else objective,
        summary=plan.suggestion.summary if summary is None else summary,
        **{name: [text for _, text in pairs] for name, pairs in lists.items()},
    )
    # Every merged item keeps its id (the ancestor's, or the side's that added it).
    given = given_ids(valid, {name: list(pairs) for name, pairs in lists.items()})
    content = replace(
        valid,
        item_ids=ItemIds(
            **{name: tuple(i for i in ids if i is not None) for name, ids in given.items()}
        ),
    )
    saved = await checkpoints.create(
        space_id=space_id,
        branch_name=into,
        content=content,
        author_agent="user",
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
        merge_parent=plan.theirs,
        expected_head_id=plan.ours.id,
        author=actor.authorship,
    )
    return MergeResult(saved, fast_forward=False)


def _suggest(into: str, ours: Checkpoint, theirs: Checkpoint) -> CheckpointContent:
    """Plain text from both sides: a draft the user edits."""
    title = f"Merge {theirs.branch_name} ({theirs.content.title}) into {into}"
    return CheckpointContent(
        title=_clip(title, TITLE_MAX_CHARS),
        objective=_clip(
            _join(ours.content.objective, theirs.content.objective), OBJECTIVE_MAX_CHARS
        ),
        summary=_clip(_join(ours.content.summary, theirs.content.summary), SUMMARY_MAX_CHARS),
    )


def _join(ours: str, theirs: str) -> str:
    if not theirs.strip() or theirs.strip() == ours.strip():
        return ours
    if not ours.strip():
        return theirs
    return f"{ours}\n\n{theirs}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
