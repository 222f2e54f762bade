"""DataLoaders: one per (thing, key), results in key order, cache per request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strawberry.dataloader import DataLoader

from api.domain.types import Checkpoint, Member, Session, Space, SpaceRole
from api.store import accounts, checkpoints, members, sessions, spaces


@dataclass
class Loaders:
    space_by_id: DataLoader[int, Space | None]
    session_by_id: DataLoader[int, Session | None]
    checkpoint_by_id: DataLoader[int, Checkpoint | None]
    children_by_parent_id: DataLoader[int, list[Checkpoint]]
    branches_by_space_id: DataLoader[int, list[tuple[str, int]]]
    # The caller's role per space (None: not a member), and who the members are.
    role_by_space_id: DataLoader[int, SpaceRole | None]
    members_by_space_id: DataLoader[int, list[Member]]
    user_name_by_id: DataLoader[int, str | None]


def make_loaders(user_id: int) -> Loaders:
    """Loaders for what ``user_id`` may read: spaces they are a member of,
    sessions they wrote or that are shared with such a space, checkpoints of
    those spaces."""

    async def load_spaces(ids: Sequence[int]) -> list[Space | None]:
        found = await spaces.get_many(user_id, list(ids))
        return [found.get(i) for i in ids]

    async def load_sessions(ids: Sequence[int]) -> list[Session | None]:
        found = await sessions.readable_many(user_id, list(ids))
        return [found.get(i) for i in ids]

    async def load_checkpoints(ids: Sequence[int]) -> list[Checkpoint | None]:
        found = await checkpoints.get_many(list(ids))
        readable = await spaces.get_many(user_id, sorted({c.space_id for c in found.values()}))
        return [c if (c := found.get(i)) and c.space_id in readable else None for i in ids]

    async def load_children(ids: Sequence[int]) -> list[list[Checkpoint]]:
        found = await checkpoints.children(list(ids))
        return [found[i] for i in ids]

    async def load_branches(ids: Sequence[int]) -> list[list[tuple[str, int]]]:
        found = await checkpoints.branches(list(ids))
        return [found[i] for i in ids]

    async def load_roles(ids: Sequence[int]) -> list[SpaceRole | None]:
        found = await members.roles(user_id, list(ids))
        return [found.get(i) for i in ids]

    async def load_members(ids: Sequence[int]) -> list[list[Member]]:
        found = await members.of_spaces(list(ids))
        return [found[i] for i in ids]

    async def load_names(ids: Sequence[int]) -> list[str | None]:
        found = await accounts.names(list(ids))
        return [found.get(i) for i in ids]

    return Loaders(
        space_by_id=DataLoader(load_spaces),
        session_by_id=DataLoader(load_sessions),
        checkpoint_by_id=DataLoader(load_checkpoints),
        children_by_parent_id=DataLoader(load_children),
        branches_by_space_id=DataLoader(load_branches),
        role_by_space_id=DataLoader(load_roles),
        members_by_space_id=DataLoader(load_members),
        user_name_by_id=DataLoader(load_names),
    )
