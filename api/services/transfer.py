"""Verifying, exporting and importing whole spaces."""

from __future__ import annotations

from api.domain.verification import Verification, verify_lineage
from api.store import spaces, transfer


async def verify(owner_id: int, space_id: int) -> Verification:
    """Recompute every checkpoint hash and parent link of one of the owner's spaces."""
    await spaces.get(owner_id, space_id)
    return verify_lineage(
        await transfer.space_checkpoints(space_id),
        hash_space_id=await transfer.hash_space_id(space_id),
    )
