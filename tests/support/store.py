"""Rows the store tests start from, written through the store itself."""

from __future__ import annotations

from api.domain.hashing import checkpoint_hash
from api.domain.types import CheckpointContent, MemoryScope
from api.store import checkpoints, sessions, spaces


async def make_session(space: bool = True) -> tuple[int, int | None, int]:
    owner = await spaces.local_user_id()
    space_id = (await spaces.create(owner, "S", "")).id if space else None
    session = await sessions.create(
        owner,
        title="t",
        space_id=space_id,
        memory_scope=MemoryScope.LATEST_1,
        provider="offline",
        model="echo",
    )
    return owner, space_id, session.id


async def save(space_id: int, session_id: int, title: str) -> object:
    return await checkpoints.create(
        space_id=space_id,
        branch_name="main",
        content=CheckpointContent(title=title),
        author_agent="user",
        source_session_id=session_id,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
    )
