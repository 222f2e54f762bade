"""The merge parent column (migration 0003): stored, immutable, followed by ancestry."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from tortoise.exceptions import IntegrityError, OperationalError

from api.domain.hashing import checkpoint_hash
from api.domain.types import Checkpoint, CheckpointContent
from api.errors import ErrorCode, InputError
from api.store import checkpoints, sql
from tests.support.store import make_session


async def save(space_id: int, branch: str, title: str, **merge: object) -> Checkpoint:
    return await checkpoints.create(
        space_id=space_id,
        branch_name=branch,
        content=CheckpointContent(title=title),
        author_agent="user",
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
        **merge,  # type: ignore[arg-type]
    )


async def test_merge_parent_is_stored_and_immutable(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    base = await save(space_id, "main", "Base")
    side = await save(space_id, "alt", "Side")  # a second root, on its own branch
    merged = await save(space_id, "main", "Merged", merge_parent=side, expected_head_id=base.id)
    assert (merged.parent_id, merged.merge_parent_id) == (base.id, side.id)
    assert (await checkpoints.get(merged.id)).merge_parent_id == side.id
    with pytest.raises((IntegrityError, OperationalError), match="rows are immutable"):
        await sql.connection().execute_query("UPDATE checkpoint SET merge_parent_id = NULL")
    assert (await checkpoints.get(merged.id)).merge_parent_id == side.id


async def test_ancestry_follows_both_parents_and_the_chain_only_the_first(
    app: Starlette,
) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    base = await save(space_id, "main", "Base")
    side = await save(space_id, "alt", "Side")
    merged = await save(space_id, "main", "Merged", merge_parent=side, expected_head_id=base.id)
    later = await save(space_id, "alt", "Later")
    assert await checkpoints.common_ancestor_id(merged.id, later.id) == side.id
    assert await checkpoints.common_ancestor_id(base.id, side.id) is None
    assert [c.id for c in await checkpoints.since(merged.id, side.id)] == [base.id, merged.id]
    # The context chain walks `parent` only.
    assert [c.id for c in await checkpoints.chain(merged.id, 10)] == [merged.id, base.id]


async def test_a_merge_against_a_moved_head_saves_nothing(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    base = await save(space_id, "main", "Base")
    side = await save(space_id, "alt", "Side")
    await save(space_id, "main", "Moved on")
    with pytest.raises(InputError) as refused:
        await save(space_id, "main", "Merged", merge_parent=side, expected_head_id=base.id)
    assert refused.value.code == ErrorCode.CONFLICT
    assert (await checkpoints.head(space_id, "main")).content.title == "Moved on"  # type: ignore[union-attr]


async def test_a_fast_forward_from_a_moved_head_moves_nothing(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    base = await save(space_id, "main", "Base")
    moved = await save(space_id, "main", "Moved on")
    with pytest.raises(InputError) as refused:
        await checkpoints.fast_forward(space_id, "main", from_id=base.id, to_id=base.id)
    assert refused.value.code == ErrorCode.CONFLICT
    assert await checkpoints.head_id(space_id, "main") == moved.id
