"""Carrying a checkpoint's state forward (DESIGN §8, second wave).

A checkpoint is a snapshot of the whole state of a line of work, not a note
about the last few turns: the next checkpoint on a branch starts from its
parent's objective, decisions, tasks, open questions and entities. What the
background model extracts from the window is kept apart ("extracted"), and the
extraction prompt never sees these carried items (DESIGN §2 rule 6): the user
— or the client — decides what of each to keep.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .identity import item_ids
from .types import CONTENT_LIST_FIELDS, Checkpoint, ItemIds


@dataclass(frozen=True, slots=True)
class CarriedState:
    """The items a new checkpoint starts from, and the checkpoint they come from."""

    checkpoint: Checkpoint | None
    objective: str = ""
    decisions: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    # The carried items' identities (stored, or implicit for a checkpoint
    # saved before ids existed): sent back with the items, they keep them.
    item_ids: ItemIds = field(default_factory=ItemIds)


def carry_forward(parent: Checkpoint | None) -> CarriedState:
    """What a checkpoint saved on top of ``parent`` starts from (nothing for a root).

    The title and summary are not carried: they describe one snapshot.
    """
    if parent is None:
        return CarriedState(checkpoint=None)
    content = parent.content
    return CarriedState(
        checkpoint=parent,
        objective=content.objective,
        item_ids=item_ids(parent),
        **{f.attr: getattr(content, f.attr) for f in CONTENT_LIST_FIELDS},
    )
