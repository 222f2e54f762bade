"""Verifying a whole space's lineage: every hash and every parent link.

``hashing.verify_chain`` checks one line; a space is a tree (branches fork
from any checkpoint), so this walks every checkpoint in creation order and
checks it against its own parent, whatever branch either is on.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from .hashing import checkpoint_hash
from .types import Checkpoint


class BreakReason(enum.StrEnum):
    HASH_MISMATCH = "HASH_MISMATCH"  # the content, parent or times no longer hash to it
    # a parent (or merge parent) is not an earlier checkpoint of the space
    MISSING_PARENT = "MISSING_PARENT"


@dataclass(frozen=True, slots=True)
class Broken:
    checkpoint: Checkpoint
    reason: BreakReason
    expected_hash: str | None  # what the hash should be, for HASH_MISMATCH


@dataclass(frozen=True, slots=True)
class Verification:
    checked: int
    broken: Broken | None

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify_lineage(
    checkpoints_oldest_first: Sequence[Checkpoint], *, hash_space_id: int | None = None
) -> Verification:
    """Recompute every checkpoint's hash from its parents' stored hashes.

    Stops at the first checkpoint that fails (oldest first), so a tampered
    checkpoint is named rather than its descendants. ``hash_space_id``: the
    space id the hashes were sealed with, when it is not the checkpoints'
    own (a space imported from another server keeps its origin's).
    """
    seen: dict[int, Checkpoint] = {}
    for count, checkpoint in enumerate(checkpoints_oldest_first):
        parent = seen.get(checkpoint.parent_id) if checkpoint.parent_id is not None else None
        merged = (
            seen.get(checkpoint.merge_parent_id) if checkpoint.merge_parent_id is not None else None
        )
        if (checkpoint.parent_id is not None and parent is None) or (
            checkpoint.merge_parent_id is not None and merged is None
        ):
            return Verification(count + 1, Broken(checkpoint, BreakReason.MISSING_PARENT, None))
        expected = checkpoint_hash(
            checkpoint.content,
            space_id=checkpoint.space_id if hash_space_id is None else hash_space_id,
            parent_hash=parent.hash if parent else None,
            merge_parent_hash=merged.hash if merged else None,
            created_at=checkpoint.created_at,
            branch_name=checkpoint.branch_name,
            author_agent=checkpoint.author_agent,
        )
        if expected != checkpoint.hash:
            return Verification(count + 1, Broken(checkpoint, BreakReason.HASH_MISMATCH, expected))
        seen[checkpoint.id] = checkpoint
    return Verification(len(checkpoints_oldest_first), None)
