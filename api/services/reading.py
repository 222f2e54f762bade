"""Reads for the GraphQL layer's DataLoaders and nested fields: what the actor may read.

Two kinds of function:

- by ids (``spaces``, ``sessions``, ``checkpoints``, ``turns``, ``roles``):
  what the actor may read among the ids, and nothing else — the loaders of
  ``api.graphql.loaders`` batch them, one statement or two per batch;
- from an object the actor has read (``lineage``, ``space_sessions``,
  ``session_turns``, ``ancestors``, ``source_turns``, ``children``,
  ``branches``, ``members``, ``user_names``): a space, session or checkpoint
  is only ever built from a read for this actor (a function above, or a use
  case), so what hangs from it is theirs to read too — the same space's
  lineage, branches and members, a readable session's turns. They read no
  membership again, so a nested query costs what it did.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.accounts import Actor
from ..domain.pages import Page, PageRequest
from ..domain.tags import tag_key
from ..domain.types import (
    Checkpoint,
    LineageEntry,
    Member,
    Session,
    Space,
    SpaceRole,
    Turn,
)
from ..errors import InputError
from ..store import accounts, checkpoints, members, sessions, spaces, turns
from . import policy

# What a listing of sessions holds (archived, pinned, a tag's key).
SessionFilters = sessions.Filters


def ask(actor: Actor, operation: str) -> None:
    """The rule of a top-level read by id (``space``, ``session``,
    ``checkpoint``, ``node``), asked before the request's loader reads: those
    loaders are shared with nested fields, so the rule cannot live in them."""
    policy.allow(actor, operation)


async def spaces_by_id(actor: Actor, ids: Sequence[int]) -> dict[int, Space]:
    """The spaces among ``ids`` the actor is a member of."""
    return await spaces.get_many(actor.user_id, list(ids))


async def sessions_by_id(actor: Actor, ids: Sequence[int]) -> dict[int, Session]:
    """The sessions among ``ids`` the actor may read (theirs, or shared with a
    space they are a member of)."""
    return await sessions.readable_many(actor.user_id, list(ids))


async def checkpoints_by_id(actor: Actor, ids: Sequence[int]) -> dict[int, Checkpoint]:
    """The checkpoints among ``ids`` of spaces the actor is a member of."""
    found = await checkpoints.get_many(list(ids))
    readable = await spaces.get_many(actor.user_id, sorted({c.space_id for c in found.values()}))
    return {i: c for i, c in found.items() if c.space_id in readable}


async def turns_by_id(actor: Actor, ids: Sequence[int]) -> dict[int, Turn]:
    """The turns among ``ids`` of sessions the actor may read."""
    found = await turns.by_ids(list(ids))
    if not found:
        return {}
    readable = await sessions.readable_many(
        actor.user_id, sorted({t.session_id for t in found.values()})
    )
    return {i: t for i, t in found.items() if t.session_id in readable}


async def roles(actor: Actor, space_ids: Sequence[int]) -> dict[int, SpaceRole]:
    """The actor's role per space (a space they are not a member of: absent)."""
    return await members.roles(actor.user_id, list(space_ids))


async def spaces_page(actor: Actor, request: PageRequest) -> Page[Space]:
    """The spaces the actor is a member of."""
    policy.allow(actor, "spaces")
    return await spaces.page(actor.user_id, request)


async def sessions_page(
    actor: Actor,
    space_id: int | None,
    request: PageRequest,
    *,
    only_unattached: bool,
    filters: SessionFilters | None = None,
) -> Page[Session]:
    """The actor's sessions (all, in no space, or of one space); in a space they
    are a member of, those shared with it as well. Archived ones only when
    ``filters`` ask for them."""
    policy.allow(actor, "sessions")
    member = space_id is not None and await members.role(actor.user_id, space_id) is not None
    return await sessions.page(
        actor.user_id,
        space_id,
        request,
        only_unattached=only_unattached,
        shared_too=member,
        filters=filters,
    )


def session_filters(
    *,
    archived: bool | None,
    pinned: bool | None,
    tag: str | None,
    latest_per_family: bool = False,
) -> SessionFilters:
    """What a listing of sessions holds; ``tag`` compared as tags are (its key);
    with ``latest_per_family``, a conversation once: of its branches, the most
    recently updated one the listing holds."""
    key = None if tag is None else tag_key(tag)
    return SessionFilters(
        archived=archived, pinned=pinned, tag_key=key, latest_per_family=latest_per_family
    )


async def family_sizes(actor: Actor, root_ids: Sequence[int]) -> dict[int, int]:
    """How many sessions of each family (by its root's id, from a session the
    actor read) the actor may read: one statement for them all."""
    return await sessions.family_sizes(actor.user_id, list(root_ids))


async def session_tags(actor: Actor, session_ids: Sequence[int]) -> dict[int, list[str]]:
    """The tags of sessions the actor has read (their ids come from a session
    the actor was given): one statement for them all."""
    return await sessions.tags_of(session_ids)


# --- from an object the actor has read --------------------------------------


async def space_sessions(
    actor: Actor, space: Space, request: PageRequest, filters: SessionFilters | None = None
) -> Page[Session]:
    """The sessions of a space the actor read that they may read (archived ones
    only when ``filters`` ask for them)."""
    return await sessions.page(actor.user_id, space.id, request, shared_too=True, filters=filters)


async def lineage(
    actor: Actor, space: Space, request: PageRequest
) -> tuple[Page[Checkpoint], tuple[Checkpoint, ...]]:
    """A page of the lineage of a space the actor read, and other checkpoints
    of that space read with it (the page's parents not on it): the actor may
    read them, as the page."""
    return await checkpoints.page(space.id, request)


async def lineage_entries(
    actor: Actor, space: Space, *, after: int | None, limit: int
) -> Page[LineageEntry]:
    return await checkpoints.lineage_entries(space.id, after=after, limit=limit)


async def branches(actor: Actor, space_ids: Sequence[int]) -> dict[int, list[tuple[str, int]]]:
    """(name, head id) of the branches of spaces the actor read."""
    return await checkpoints.branches(list(space_ids))


async def members_of(actor: Actor, space_ids: Sequence[int]) -> dict[int, list[Member]]:
    """The members of spaces the actor read."""
    return await members.of_spaces(list(space_ids))


async def children(actor: Actor, parent_ids: Sequence[int]) -> dict[int, list[Checkpoint]]:
    """The children of checkpoints the actor read (the same space's)."""
    return await checkpoints.children(list(parent_ids))


async def ancestors(actor: Actor, checkpoint: Checkpoint, first: int) -> list[Checkpoint]:
    """Up to ``first`` ancestors of a checkpoint the actor read, nearest first."""
    return (await checkpoints.chain(checkpoint.id, first + 1))[1:]


async def session_turns(actor: Actor, session: Session, request: PageRequest) -> Page[Turn]:
    """A page of the turns of a session the actor read."""
    return await turns.page(session.id, request)


async def exchange_numbers(
    actor: Actor, anchors: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], int]:
    """Per (session id, sequence number) of turns the actor read: how many user turns of
    that session are numbered up to it (the exchange a turn there belongs to). Two
    statements per session, however many turns ask."""
    by_session: dict[int, list[int]] = {}
    for session_id, sequence in anchors:
        by_session.setdefault(session_id, []).append(sequence)
    found: dict[tuple[int, int], int] = {}
    for session_id, sequences in by_session.items():
        counted = await turns.exchange_numbers(session_id, sequences)
        found.update(((session_id, seq), n) for seq, n in counted.items())
    return found


async def source_turns(
    actor: Actor, checkpoint: Checkpoint, session: Session, *, most: int
) -> list[Turn]:
    """The turns a checkpoint was made from (at most ``most``), out of its source
    session, which the actor read."""
    span = checkpoint.source_turn_range
    if span is None or checkpoint.source_session_id != session.id:
        raise InputError("That session is not the checkpoint's source.")
    return await turns.in_range(session.id, span.first, min(span.last, span.first + most - 1))


async def user_names(actor: Actor, user_ids: Sequence[int]) -> dict[int, str]:
    """The names of the authors of what the actor read."""
    return await accounts.names(list(user_ids))
