"""DataLoaders: one per (thing, key), results in key order, cache per request.

Each batches a read of ``api.services.reading`` for the request's actor:
what the actor may not read comes back as None (or is left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from strawberry.dataloader import DataLoader

from ..domain.accounts import Actor
from ..domain.types import Checkpoint, Member, Session, Space, SpaceRole
from ..services import reading

K = TypeVar("K")
V = TypeVar("V")
# ``held`` found nothing settled for the key.
MISSING: Any = object()


@dataclass
class Loaders:
    space_by_id: DataLoader[int, Space | None]
    session_by_id: DataLoader[int, Session | None]
    checkpoint_by_id: DataLoader[int, Checkpoint | None]
    children_by_parent_id: DataLoader[int, list[Checkpoint]]
    branches_by_space_id: DataLoader[int, list[tuple[str, int]]]
    # The actor's role per space (None: not a member), and who the members are.
    role_by_space_id: DataLoader[int, SpaceRole | None]
    members_by_space_id: DataLoader[int, list[Member]]
    user_name_by_id: DataLoader[int, str | None]
    # (session id, sequence number) → how many user turns there are numbered up to it.
    exchange_by_anchor: DataLoader[tuple[int, int], int]
    # A session's tags (of sessions the actor was given).
    tags_by_session_id: DataLoader[int, list[str]]
    # How many sessions of a branch family (by its root's id) the actor may read.
    family_size_by_root_id: DataLoader[int, int]
    # The request's Checkpoint GraphQL objects by id, with the domain checkpoint
    # each was made from (``checkpoints.types.node_of``): a lineage page's node
    # is also the next node's ``parent``, converted once.
    checkpoint_nodes: dict[int, Any] = field(default_factory=dict)
    # Checkpoints the request has read (the actor may read them: a page, its
    # parents, children, ancestors), by id: ``checkpoint_by_id`` answers them
    # without a statement. A dict, not the loader's primed futures: a page of
    # 1,000 made 1,000 futures, most never awaited.
    checkpoints_read: dict[int, Checkpoint] = field(default_factory=dict)


def make_loaders(actor: Actor) -> Loaders:
    """Loaders for what ``actor`` may read."""

    async def load_spaces(ids: Sequence[int]) -> list[Space | None]:
        found = await reading.spaces_by_id(actor, ids)
        return [found.get(i) for i in ids]

    async def load_sessions(ids: Sequence[int]) -> list[Session | None]:
        found = await reading.sessions_by_id(actor, ids)
        return [found.get(i) for i in ids]

    read: dict[int, Checkpoint] = {}

    async def load_checkpoints(ids: Sequence[int]) -> list[Checkpoint | None]:
        missing = [i for i in ids if i not in read]
        found = await reading.checkpoints_by_id(actor, missing) if missing else {}
        return [read[i] if i in read else found.get(i) for i in ids]

    async def load_children(ids: Sequence[int]) -> list[list[Checkpoint]]:
        found = await reading.children(actor, ids)
        return [found[i] for i in ids]

    async def load_branches(ids: Sequence[int]) -> list[list[tuple[str, int]]]:
        found = await reading.branches(actor, ids)
        return [found[i] for i in ids]

    async def load_roles(ids: Sequence[int]) -> list[SpaceRole | None]:
        found = await reading.roles(actor, ids)
        return [found.get(i) for i in ids]

    async def load_members(ids: Sequence[int]) -> list[list[Member]]:
        found = await reading.members_of(actor, ids)
        return [found[i] for i in ids]

    async def load_names(ids: Sequence[int]) -> list[str | None]:
        found = await reading.user_names(actor, ids)
        return [found.get(i) for i in ids]

    async def load_exchanges(keys: Sequence[tuple[int, int]]) -> list[int]:
        found = await reading.exchange_numbers(actor, keys)
        return [found[k] for k in keys]

    async def load_tags(ids: Sequence[int]) -> list[list[str]]:
        found = await reading.session_tags(actor, ids)
        return [found[i] for i in ids]

    async def load_family_sizes(ids: Sequence[int]) -> list[int]:
        found = await reading.family_sizes(actor, ids)
        return [found.get(i, 0) for i in ids]

    return Loaders(
        space_by_id=DataLoader(load_spaces),
        session_by_id=DataLoader(load_sessions),
        checkpoint_by_id=DataLoader(load_checkpoints),
        children_by_parent_id=DataLoader(load_children),
        branches_by_space_id=DataLoader(load_branches),
        role_by_space_id=DataLoader(load_roles),
        members_by_space_id=DataLoader(load_members),
        user_name_by_id=DataLoader(load_names),
        exchange_by_anchor=DataLoader(load_exchanges),
        tags_by_session_id=DataLoader(load_tags),
        family_size_by_root_id=DataLoader(load_family_sizes),
        checkpoints_read=read,
    )


def held(loader: DataLoader[K, V], key: K) -> V:
    """What ``loader`` already holds for ``key`` (a settled load, or a value
    primed from a page the request read), without awaiting; else ``MISSING``.

    A resolver that finds it answers synchronously: awaiting a settled future
    still cost a coroutine, a task and a gather per object in graphql-core.
    """
    future = loader.cache_map.get(key)
    if future is None or not future.done() or future.cancelled() or future.exception():
        return MISSING
    return future.result()
