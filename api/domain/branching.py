"""Conversation branches: where a branch starts, what it inherits, and which
sessions of a family are alternatives at a position (issue 21 §1).

A branch B of a session O "after t" is a new session holding copies of O's
turns 1..t (same sequence numbers, contents and creation times), then turns
of its own from t + 1. So B *shares* a position p with O exactly when
p <= t: B's turn at p is a copy of O's. Turns are never rewritten; editing a
message or regenerating a reply is a branch.

The family of a session is every session branched from it, from those, and
so on, plus the first session (the root). Alternatives at position p of a
session S are the sessions whose turns 1..p-1 are S's (the same originals)
and whose turn at p is each one's own original; "2 / 3" is S's place among
them, oldest first. The function is pure, over (id, branched_from,
branched_after, last_sequence, created_at) tuples of the family.

The context a branch sends keeps its origin's mode (``branch_mount`` and
``api.domain.context.head_boundary``): turns are copies, so every read of a
session's turns works on a branch unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from .types import Mount


@dataclass(frozen=True, slots=True)
class Member:
    """A session of a family, as the grouping needs it."""

    id: int
    branched_from: int | None
    branched_after: int | None
    last_sequence: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Alternatives:
    """The sessions that are alternatives at ``position`` (oldest first) and
    which of them is the session asked about (``index``, from 0)."""

    position: int
    sessions: tuple[int, ...]
    index: int


def branch_mount(mount: Mount | None, after_sequence: int) -> Mount | None:
    """A branch's mount: its origin's checkpoint, with a base no later than
    the branch point. The origin's turns 1..base are the ones its mount hides;
    the branch holds 1..after_sequence of them, so it hides those of them it
    holds and sees every turn of its own line after the base."""
    if mount is None:
        return None
    return Mount(mount.checkpoint_id, min(mount.base_sequence, after_sequence))


def owner_at(family: Mapping[int, Member], session_id: int, position: int) -> int:
    """The session whose own (original) turn is ``session_id``'s turn at
    ``position``: walk up while the session shares ``position`` with the
    session it was branched from (position <= branched_after). A missing
    origin (deleted) ends the walk: the copies are then the branch's own."""
    current = family[session_id]
    while (
        current.branched_from is not None
        and current.branched_after is not None
        and position <= current.branched_after
        and current.branched_from in family
    ):
        current = family[current.branched_from]
    return current.id


def alternatives_at(
    members: Iterable[Member], session_id: int, position: int
) -> Alternatives | None:
    """The alternatives at ``position`` for ``session_id``; None when that
    session has no turn there (or is not in ``members``).

    Two sessions hold the same line up to p-1 when their turns at p-1 have
    the same owner (sharing is by prefix: a session that shares p-1 with its
    origin shares everything before it). Among the family's sessions that
    have a turn at p and hold the same line up to p-1, the distinct owners of
    p are the alternatives; every such session shares p with exactly one.
    """
    family = {m.id: m for m in members}
    me = family.get(session_id)
    if me is None or position < 1 or me.last_sequence < position:
        return None
    line = owner_at(family, session_id, position - 1)
    owners = {
        owner_at(family, m.id, position)
        for m in family.values()
        if m.last_sequence >= position and owner_at(family, m.id, position - 1) == line
    }
    ordered = tuple(sorted(owners, key=lambda i: (family[i].created_at, i)))
    return Alternatives(position, ordered, ordered.index(owner_at(family, session_id, position)))


def branch_points(members: Iterable[Member], session_id: int) -> tuple[Alternatives, ...]:
    """Every position of ``session_id`` where it has more than one
    alternative, in order. Only the position after a branch point can have
    alternatives, so only those are asked."""
    family = {m.id: m for m in members}
    candidates = sorted(
        {m.branched_after + 1 for m in family.values() if m.branched_after is not None}
    )
    found = []
    for position in candidates:
        alternatives = alternatives_at(family.values(), session_id, position)
        if alternatives is not None and len(alternatives.sessions) > 1:
            found.append(alternatives)
    return tuple(found)
