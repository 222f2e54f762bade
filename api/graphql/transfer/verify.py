"""`verifyLineage`: recompute a space's hashes and parent links."""

from __future__ import annotations

import enum
from typing import Annotated

import strawberry

from ...domain import verification as domain
from ...services import transfer
from ..checkpoints.types import Checkpoint
from ..context import Info
from ..core import ids


@strawberry.enum(description="Why a checkpoint does not verify.")
class BreakReason(enum.Enum):
    HASH_MISMATCH = strawberry.enum_value(
        "HASH_MISMATCH",
        description="Its content, parent, branch, author or time no longer hash to its hash.",
    )
    MISSING_PARENT = strawberry.enum_value(
        "MISSING_PARENT", description="Its parent is not an earlier checkpoint of the space."
    )


@strawberry.type(description="The first checkpoint of a space that does not verify.")
class BrokenCheckpoint:
    checkpoint: Checkpoint = strawberry.field(description="The checkpoint, as stored.")
    reason: BreakReason = strawberry.field(description="What is wrong with it.")
    expected_hash: str | None = strawberry.field(
        description="The hash its stored fields compute to (HASH_MISMATCH)."
    )


@strawberry.type(description="The result of recomputing a space's lineage.")
class LineageVerification:
    ok: bool = strawberry.field(description="Every hash and parent link holds.")
    checked: int = strawberry.field(
        description="Checkpoints checked, oldest first (up to and with the broken one)."
    )
    first_broken: BrokenCheckpoint | None = strawberry.field(
        description="The oldest checkpoint that fails; null when ok."
    )

    @classmethod
    def from_domain(cls, result: domain.Verification) -> LineageVerification:
        broken = result.broken
        return cls(
            ok=result.ok,
            checked=result.checked,
            first_broken=BrokenCheckpoint(
                checkpoint=Checkpoint.from_domain(broken.checkpoint),
                reason=BreakReason[broken.reason.value],
                expected_hash=broken.expected_hash,
            )
            if broken
            else None,
        )


@strawberry.type
class VerifyQuery:
    @strawberry.field(
        description="Recompute every checkpoint hash and parent link of a space "
        "(null: no such space)."
    )
    async def verify_lineage(
        self,
        info: Info,
        space_id: Annotated[strawberry.ID, strawberry.argument(description="The space.")],
    ) -> LineageVerification | None:
        key = ids.key_or_none(space_id, "Space")
        if key is None:
            return None
        result = await transfer.verify(info.context.actor, key)
        return LineageVerification.from_domain(result)
