"""DataLoaders: one per (thing, key), results in key order, cache per request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strawberry.dataloader import DataLoader

from api.domain.types import Checkpoint, Session, Space
from api.store import checkpoints, sessions, spaces


@dataclass
class Loaders:
    space_by_id: DataLoader[int, Space | None]
    session_by_id: DataLoader[int, Session | None]
    checkpoint_by_id: DataLoader[int, Checkpoint | None]
    children_by_parent_id: DataLoader[int, list[Checkpoint]]
    branches_by_space_id: DataLoader[int, list[tuple[str, int]]]


def make_loaders(owner_id: int) -> Loaders:
    async def load_spaces(ids: Sequence[int]) -> list[Space | None]:
        found = await spaces.get_many(owner_id, list(ids))
        return [found.get(i) for i in ids]

    async def load_sessions(ids: Sequence[int]) -> list[Session | None]:
        found = await sessions.get_many(owner_id, list(ids))
        return [found.get(i) for i in ids]

    async def load_checkpoints(ids: Sequence[int]) -> list[Checkpoint | None]:
        found = await checkpoints.get_many(list(ids))
        owned = await spaces.get_many(owner_id, sorted({c.space_id for c in found.values()}))
        return [c if (c := found.get(i)) and c.space_id in owned else None for i in ids]

    async def load_children(ids: Sequence[int]) -> list[list[Checkpoint]]:
        found = await checkpoints.children(list(ids))
        return [found[i] for i in ids]

    async def load_branches(ids: Sequence[int]) -> list[list[tuple[str, int]]]:
        found = await checkpoints.branches(list(ids))
        return [found[i] for i in ids]

    return Loaders(
        space_by_id=DataLoader(load_spaces),
        session_by_id=DataLoader(load_sessions),
        checkpoint_by_id=DataLoader(load_checkpoints),
        children_by_parent_id=DataLoader(load_children),
        branches_by_space_id=DataLoader(load_branches),
    )
