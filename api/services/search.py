"""Search across everything the caller may read: turns, checkpoints, sessions, spaces."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..domain import search_query
from ..domain.accounts import Actor
from ..domain.search_query import Kind
from ..domain.types import Checkpoint, Session, Space, Turn
from ..domain.validation import FieldProblem
from ..errors import InputError
from ..store import checkpoints, members, sessions, spaces, turns
from ..store import search as index
from . import policy


@dataclass(frozen=True, slots=True)
class Hit:
    kind: Kind
    found: Turn | Checkpoint | Session | Space
    snippet: search_query.Snippet
    rank: float


@dataclass(frozen=True, slots=True)
class Hits:
    hits: tuple[Hit, ...]
    has_next: bool


async def search(
    actor: Actor,
    text: str,
    *,
    space_id: int | None,
    kinds: Sequence[Kind] | None,
    first: int,
    offset: int,
) -> Hits:
    """One page of the objects the actor may read matching ``text``, best first."""
    policy.allow(actor, "search")
    owner_id = actor.user_id
    try:
        query = search_query.parse(text)
    except FieldProblem as problem:
        raise InputError(problem.message, field=problem.field) from problem
    if kinds is not None and not kinds:
        return Hits(hits=(), has_next=False)
    entries = await index.find(
        owner_id,
        query,
        space_id=space_id,
        kinds=kinds,
        limit=first + 1,
        offset=offset,
        shared=await members.shares_anything(owner_id),
    )
    page = entries[:first]
    objects = await _load(owner_id, page)
    hits = tuple(
        Hit(
            kind=entry.kind,
            found=found,
            snippet=search_query.snippet(entry.body, query),
            rank=entry.rank,
        )
        for entry in page
        # Deleted between the two reads: the index no longer has it either.
        if (found := objects.get((entry.kind, entry.object_id))) is not None
    )
    return Hits(hits=hits, has_next=len(entries) > first)


async def _load(
    owner_id: int, entries: Sequence[index.Entry]
) -> dict[tuple[Kind, int], Turn | Checkpoint | Session | Space]:
    wanted: dict[Kind, list[int]] = {kind: [] for kind in Kind}
    for entry in entries:
        wanted[entry.kind].append(entry.object_id)
    loaded: dict[Kind, dict[int, Turn | Checkpoint | Session | Space]] = {
        Kind.TURN: dict(await turns.by_ids(wanted[Kind.TURN])) if wanted[Kind.TURN] else {},
        Kind.CHECKPOINT: (
            dict(await checkpoints.get_many(wanted[Kind.CHECKPOINT]))
            if wanted[Kind.CHECKPOINT]
            else {}
        ),
        Kind.SESSION: (
            dict(await sessions.readable_many(owner_id, wanted[Kind.SESSION]))
            if wanted[Kind.SESSION]
            else {}
        ),
        Kind.SPACE: (
            dict(await spaces.get_many(owner_id, wanted[Kind.SPACE])) if wanted[Kind.SPACE] else {}
        ),
    }
    return {
        (kind, object_id): found
        for kind, by_id in loaded.items()
        for object_id, found in by_id.items()
    }
