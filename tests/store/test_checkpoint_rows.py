"""Checkpoints and spaces read by the store's SQL (``rows``) are what Tortoise
reads of the same rows (its own decoding of each column: an oracle apart from
the store's), and a page of checkpoints is the keyset page of the saved ones."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette

from api.domain.hashing import checkpoint_hash
from api.domain.pages import PageRequest
from api.domain.types import (
    ChatSettings,
    Checkpoint,
    CheckpointContent,
    ItemIds,
    Space,
    SpaceRole,
    TurnRange,
)
from api.store import checkpoints, models, rows, spaces
from tests.support.store import make_session


def _orm_checkpoint(row: models.Checkpoint) -> Checkpoint:
    """A checkpoint as Tortoise reads its row, column by column."""
    item_ids = row.item_ids
    return Checkpoint(
        id=row.id,
        hash=row.hash,
        space_id=row.space_id,  # type: ignore[attr-defined]
        parent_id=row.parent_id,  # type: ignore[attr-defined]
        branch_name=row.branch_name,
        content=CheckpointContent(
            title=row.title,
            objective=row.objective,
            summary=row.summary,
            decisions=tuple(row.decisions),
            tasks=tuple(row.tasks),
            open_questions=tuple(row.open_questions),
            entities=tuple(row.entities),
            item_ids=None
            if item_ids is None
            else ItemIds(**{k: tuple(v) for k, v in item_ids.items()}),
        ),
        author_agent=row.author_agent,
        source_session_id=row.source_session_id,
        source_turn_range=None
        if row.source_first is None or row.source_last is None
        else TurnRange(first=row.source_first, last=row.source_last),
        base_sequence=row.base_sequence,
        created_at=row.created_at,
        merge_parent_id=row.merge_parent_id,  # type: ignore[attr-defined]
        author_id=row.author_id,
        author_token=row.author_token,
    )


def _orm_space(row: models.Space) -> Space:
    return Space(
        id=row.id,
        name=row.name,
        description=row.description,
        owner_id=row.owner_id,  # type: ignore[attr-defined]
        created_at=row.created_at,
        updated_at=row.updated_at,
        settings=ChatSettings.from_json(row.settings),
    )


async def _save(space_id: int, content: CheckpointContent, **extra: object) -> Checkpoint:
    arguments: dict[str, object] = {
        "space_id": space_id,
        "branch_name": "main",
        "content": content,
        "author_agent": "user",
        "source_session_id": None,
        "source_turn_range": None,
        "base_sequence": 0,
        "compute_hash": checkpoint_hash,
    }
    return await checkpoints.create(**{**arguments, **extra})  # type: ignore[arg-type]


async def test_a_read_is_the_orm_read(app: Starlette) -> None:
    session_id, space_id, _ = await make_session()
    assert space_id is not None
    first = await _save(space_id, CheckpointContent(title="bare"))
    second = await _save(
        space_id,
        CheckpointContent(
            title="full",
            objective="Plan the trip",
            summary="Mostly decided",
            decisions=("Fly", "Drive"),
            tasks=("Pack",),
            open_questions=("When?",),
            entities=("Cairns", "Ünïcode ✓"),
            item_ids=ItemIds(
                decisions=("a1", "b2"), tasks=("c3",), open_questions=("d4",), entities=("e5", "f6")
            ),
        ),
        source_session_id=session_id,
        source_turn_range=TurnRange(first=1, last=2),
        base_sequence=2,
        author_agent="agent-x",
    )
    saved = [first, second]
    orm = {
        row.id: _orm_checkpoint(row) for row in await models.Checkpoint.filter(space_id=space_id)
    }
    assert len(orm) == 2
    raw = await checkpoints.get_many([c.id for c in saved])
    assert raw == orm
    assert orm == {c.id: c for c in saved}  # what create returned is what was written
    assert raw[second.id].content.item_ids == ItemIds(
        decisions=("a1", "b2"), tasks=("c3",), open_questions=("d4",), entities=("e5", "f6")
    )
    assert raw[second.id].source_turn_range == TurnRange(first=1, last=2)
    assert raw[first.id].content.item_ids is None
    assert raw[first.id].created_at == orm[first.id].created_at
    assert raw[first.id].created_at.utcoffset() is not None
    assert await checkpoints.get(second.id) == orm[second.id]
    assert await checkpoints.children([first.id, second.id]) == {
        first.id: [orm[second.id]],
        second.id: [],
    }
    assert await checkpoints.get_many([]) == {}


def _keyset(saved: list[Checkpoint], request: PageRequest) -> tuple[list[Checkpoint], bool]:
    """The page by hand: the checkpoints between the cursors, the first
    ``first`` of them, else the last ``last`` (100 when neither is given),
    and whether more lie beyond the page in its direction."""
    between = [
        c
        for c in saved
        if (request.after is None or c.id > request.after)
        and (request.before is None or c.id < request.before)
    ]
    if request.last is not None and request.first is None:
        kept = between[-request.last :] if request.last else []
        return kept, len(between) > request.last
    limit = 100 if request.first is None else request.first
    return between[:limit], len(between) > limit


async def test_a_page_is_the_keyset_page(app: Starlette) -> None:
    _, space_id, _ = await make_session()
    assert space_id is not None
    saved = [await _save(space_id, CheckpointContent(title=f"c{n}")) for n in range(5)]
    keys = [c.id for c in saved]
    # each request, and the checkpoints read with its page (by index in
    # `saved`): the row past the limit, then the parents of those rows not
    # among them (a backward page's row past the limit has one)
    requests = [
        (PageRequest(first=2, after=None, last=None, before=None), [2]),
        (PageRequest(first=2, after=keys[1], last=None, before=None), [4, 1]),
        (PageRequest(first=10, after=keys[1], last=None, before=None), [1]),
        (PageRequest(first=None, after=None, last=2, before=None), [2, 1]),
        (PageRequest(first=None, after=None, last=2, before=keys[4]), [1, 0]),
        (PageRequest(first=None, after=keys[0], last=10, before=keys[4]), [0]),
        (PageRequest(first=1, after=keys[0], last=1, before=keys[4]), [2, 0]),
        (PageRequest(first=None, after=None, last=None, before=None), []),
        (PageRequest(first=0, after=None, last=None, before=None), [0]),
    ]
    for request, others in requests:
        kept, more = _keyset(saved, request)
        found, read_with_it = await checkpoints.page(space_id, request)
        assert found.items == tuple(kept), request
        if request.last is not None and request.first is None:
            assert (found.has_next, found.has_previous) == (request.before is not None, more)
        else:
            assert (found.has_next, found.has_previous) == (more, request.after is not None)
        assert read_with_it == tuple(saved[i] for i in others), request
    whole, _ = await checkpoints.page(space_id, requests[-2][0])
    assert [c.title for c in (c.content for c in whole.items)] == [f"c{n}" for n in range(5)]
    assert (whole.has_next, whole.has_previous) == (False, False)


async def test_a_page_reads_no_parent_of_another_space(app: Starlette) -> None:
    # Given a checkpoint whose parent is in another space (no API makes one:
    # the store's rule is tested, not a path to it)
    _, space_id, _ = await make_session()
    _, other_space_id, _ = await make_session()
    assert space_id is not None and other_space_id is not None
    elsewhere = await _save(other_space_id, CheckpointContent(title="elsewhere"))
    first = await _save(space_id, CheckpointContent(title="c0"))
    odd = await models.Checkpoint.create(
        hash="0" * 64,
        space_id=space_id,
        parent_id=elsewhere.id,
        merge_parent_id=elsewhere.id,
        branch_name="main",
        title="c1",
        created_at=first.created_at,
    )
    # When the page after the first is read
    found, read_with_it = await checkpoints.page(
        space_id, PageRequest(first=2, after=first.id, last=None, before=None)
    )
    # Then only the page comes back: the parent elsewhere is left to the
    # loader, which reads it for whoever may read its space
    assert [(c.id, c.parent_id, c.merge_parent_id) for c in found.items] == [
        (odd.id, elsewhere.id, elsewhere.id)
    ]
    assert read_with_it == ()


def test_json_columns_decoded_together_are_the_same_values() -> None:
    assert rows._json_columns(['["a", "b"]', None, "[]", '{"x": [1]}', ["kept"]]) == [
        ["a", "b"],
        None,
        [],
        {"x": [1]},
        ["kept"],
    ]
    # a text that is not one JSON value fails as it failed alone
    with pytest.raises(json.JSONDecodeError):
        rows._json_columns(["[1]", "1, 2"])


async def test_spaces_read_are_the_orm_rows(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    plain = await spaces.create(owner, "Plain", "")
    tuned = await spaces.create(owner, "Tuned", "with settings")
    await spaces.update(
        owner,
        tuned.id,
        name=None,
        description=None,
        roles=list(SpaceRole),
        settings=ChatSettings(instructions="Be brief.", temperature=0.5, stop=("END",)),
    )
    stranger = await models.User.create(name="stranger", created_at=plain.created_at)
    theirs = await spaces.create(stranger.id, "Theirs", "")
    orm = {row.id: _orm_space(row) for row in await models.Space.all()}
    raw = await spaces.get_many(owner, [plain.id, tuned.id, theirs.id, 10**12])
    # only the spaces the user is a member of, each as the ORM reads it
    assert raw == {plain.id: orm[plain.id], tuned.id: orm[tuned.id]}
    assert raw[tuned.id].settings == ChatSettings(
        instructions="Be brief.", temperature=0.5, stop=("END",)
    )
    assert raw[plain.id].created_at.utcoffset() is not None
    assert await spaces.get_many(stranger.id, [plain.id, theirs.id]) == {theirs.id: orm[theirs.id]}
    assert await spaces.get_many(owner, []) == {}
