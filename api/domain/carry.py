"""Carrying a checkpoint's state forward (docs/architecture.md#drafting-and-carrying-forward).

A checkpoint is a snapshot of the whole state of a line of work, not a note
about the last few turns: the next checkpoint on a branch starts from its
parent's objective and the items of every list field. What the
background model extracts from the window is kept apart ("extracted"), and the
extraction prompt never sees these carried items
(docs/architecture.md#drafting-and-carrying-forward): the user
— or the client — decides what of each to keep.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .identity import item_ids
from .types import CONTENT_LIST_FIELDS, ByListField, Checkpoint, ItemIds, gather_lists


@dataclass(frozen=True, slots=True, init=False)
class CarriedState(ByListField[tuple[str, ...]]):
    """The items a new checkpoint starts from, and the checkpoint they come
    from: each list field read as an attribute (``carried.decisions``)."""

    checkpoint: Checkpoint | None
    objective: str
    lists: tuple[tuple[str, tuple[str, ...]], ...]
    # The carried items' identities (stored, or implicit for a checkpoint
    # saved before ids existed): sent back with the items, they keep them.
    item_ids: ItemIds

    def __init__(
        self,
        checkpoint: Checkpoint | None,
        objective: str = "",
        *,
        item_ids: ItemIds | None = None,
        lists: Any = None,  # the pairs, as dataclasses.replace passes them back
        **by_attr: Iterable[str],
    ) -> None:
        object.__setattr__(self, "checkpoint", checkpoint)
        object.__setattr__(self, "objective", objective)
        given = {attr: tuple(items) for attr, items in by_attr.items()}
        object.__setattr__(self, "lists", gather_lists(given, lists, tuple, "CarriedState"))
        object.__setattr__(self, "item_ids", ItemIds() if item_ids is None else item_ids)


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
