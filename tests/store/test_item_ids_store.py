"""The item ids column (migration 0012): stored, null for older rows, immutable."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from tortoise.exceptions import IntegrityError, OperationalError

from api.domain.hashing import checkpoint_hash
from api.domain.identity import implicit_item_ids, item_ids
from api.domain.types import CheckpointContent, ItemIds
from api.store import checkpoints, sql
from tests.support.store import make_session


async def test_item_ids_are_stored_hashed_and_immutable(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    content = CheckpointContent(
        title="t",
        decisions=("Fly", "Drive"),
        entities=("Cairns",),
        item_ids=ItemIds(decisions=("a1", "b2"), entities=("c3",)),
    )
    saved = await checkpoints.create(
        space_id=space_id,
        branch_name="main",
        content=content,
        author_agent="user",
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
    )
    read = await checkpoints.get(saved.id)
    assert read.content == content
    assert read.hash == checkpoint_hash(
        content,
        space_id=space_id,
        parent_hash=None,
        created_at=read.created_at,
        branch_name="main",
        author_agent="user",
    )
    with pytest.raises((IntegrityError, OperationalError), match="rows are immutable"):
        await sql.connection().execute_query("UPDATE checkpoint SET item_ids = NULL")
    assert (await checkpoints.get(saved.id)).content.item_ids == content.item_ids


async def test_a_row_without_item_ids_reads_with_implicit_ids(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    old = CheckpointContent(title="old", tasks=("Pack",))
    saved = await checkpoints.create(
        space_id=space_id,
        branch_name="main",
        content=old,
        author_agent="user",
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
    )
    read = await checkpoints.get(saved.id)
    assert read.content.item_ids is None
    assert item_ids(read) == implicit_item_ids(read.hash, old)
