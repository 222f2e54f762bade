"""checkpoint, checkpointByHash and compareCheckpoints.

What cannot be found is null, never a top-level error (core.field_errors.MissingIsNull)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import checkpoints as checkpoint_service
from ...services import reading
from ..context import Info
from ..core import ids
from .compare import Comparison
from .types import Checkpoint


@strawberry.type
class CheckpointQuery:
    @strawberry.field(description="A checkpoint by id.")
    async def checkpoint(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The checkpoint's id.")],
    ) -> Checkpoint | None:
        reading.ask(info.context.actor, "checkpoint")
        key = ids.key_or_none(id, "Checkpoint")
        found = await info.context.loaders.checkpoint_by_id.load(key) if key is not None else None
        return Checkpoint.from_domain(found) if found else None

    @strawberry.field(
        description="A checkpoint of a space by its hash or any unique prefix of 4+ hex "
        "characters; null when there is none. A prefix that matches several is an error "
        "coded AMBIGUOUS_HASH."
    )
    async def checkpoint_by_hash(
        self,
        info: Info,
        space_id: Annotated[strawberry.ID, strawberry.argument(description="The space.")],
        hash: Annotated[str, strawberry.argument(description="The hash or a prefix (4+).")],
    ) -> Checkpoint | None:
        space = ids.key_or_none(space_id, "Space")
        if space is None:
            return None
        found = await checkpoint_service.by_hash(info.context.actor, space, hash)
        return Checkpoint.from_domain(found) if found else None

    @strawberry.field(
        description="Compare the list fields of two checkpoints; null when either is not found."
    )
    async def compare_checkpoints(
        self,
        info: Info,
        a: Annotated[strawberry.ID, strawberry.argument(description="The first checkpoint.")],
        b: Annotated[strawberry.ID, strawberry.argument(description="The second checkpoint.")],
    ) -> Comparison | None:
        comparison = await checkpoint_service.compare(
            info.context.actor,
            ids.decode(a, "Checkpoint", field="a"),
            ids.decode(b, "Checkpoint", field="b"),
        )
        return Comparison.from_domain(comparison)
