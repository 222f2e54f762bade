"""Item identities (issue 18 §1): given, kept, carried, and implicit for old checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.domain.carry import carry_forward
from api.domain.export_format import Export, SpaceExport, from_document, to_document
from api.domain.identity import (
    assign_ids,
    given_ids,
    implicit_item_ids,
    item_ids,
    similarity,
)
from api.domain.types import CheckpointContent, ItemIds, Space
from api.errors import ErrorCode, InputError
from tests.domain.builders import T0, checkpoint

OLD = checkpoint(
    1, body=CheckpointContent(title="old", decisions=("Fly", "Drive"), tasks=("Pack",))
)


def counter() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"new{next(numbers)}"


def test_implicit_ids_are_a_function_of_hash_field_and_position() -> None:
    ids = implicit_item_ids(OLD.hash, OLD.content)

    def expected(name: str, index: int) -> str:
        return hashlib.sha256(f"{OLD.hash}:{name}:{index}".encode()).hexdigest()[:12]

    assert ids == ItemIds(
        decisions=(expected("decisions", 0), expected("decisions", 1)),
        tasks=(expected("tasks", 0),),
    )
    assert item_ids(OLD) == ids  # no stored ids: the implicit ones
    stored = dataclasses.replace(OLD.content, item_ids=ItemIds(decisions=("a", "b"), tasks=("c",)))
    assert item_ids(dataclasses.replace(OLD, content=stored)) == stored.item_ids


def test_carry_forward_carries_the_ids_of_an_old_checkpoint() -> None:
    carried = carry_forward(OLD)
    assert carried.item_ids == implicit_item_ids(OLD.hash, OLD.content)
    assert carry_forward(None).item_ids == ItemIds()


def test_assign_ids_keeps_given_ids_matches_plain_text_and_makes_new_ones() -> None:
    implicit = item_ids(OLD)
    content = CheckpointContent(title="next", decisions=("Fly business", "drive!", "Walk"))
    # Plain strings: "drive!" is the parent's "Drive"; the others are new.
    plain = assign_ids(content, {}, OLD, new_id=counter())
    assert plain.item_ids == ItemIds(decisions=("new1", implicit.decisions[1], "new2"))
    # Items: an edited item sent with its id keeps it.
    sent = {"decisions": [implicit.decisions[0], None, None]}
    edited = assign_ids(content, sent, OLD, new_id=counter())
    assert edited.item_ids == ItemIds(
        decisions=(implicit.decisions[0], implicit.decisions[1], "new1")
    )


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        (
            {"tasks": ["elsewhere"]},
            'taskItems names item "elsewhere", which the checkpoint this one continues does '
            "not have; leave the id out for a new item.",
        ),
        ({"tasks": ["bad id!"]}, "An item id in taskItems is 1 to 64 letters, digits, '-' or '_'."),
    ],
)
def test_assign_ids_refuses_an_unknown_or_malformed_id(
    sent: dict[str, list[str | None]], message: str
) -> None:
    with pytest.raises(InputError) as refused:
        assign_ids(
            CheckpointContent(title="t", tasks=("Pack",)),
            sent,
            OLD,
            new_id=counter(),
        )
    assert (refused.value.code, refused.value.message, refused.value.field) == (
        ErrorCode.INVALID,
        message,
        "taskItems",
    )


def test_given_ids_follow_validation_stripping_and_dropping_repeats() -> None:
    valid = CheckpointContent(title="t", decisions=("a", "b"))
    assert given_ids(valid, {"decisions": [("1", " a "), ("2", "a"), (None, "b")]}) == {
        "decisions": ["1", None]
    }


def test_similarity_is_the_word_set_jaccard_index() -> None:
    assert similarity("Use Redis.", "use redis") == 1.0
    assert similarity(
        "Rent a campervan for the Queensland coast",
        "Rent a 4WD campervan for the Queensland coast",
    ) == pytest.approx(7 / 8)
    assert similarity("Book flights to Cairns", "Book flights to Sydney") == pytest.approx(3 / 5)
    assert similarity("Take the train", "Rent a campervan") == 0.0


ids_strategy = st.lists(
    st.text("abcdef0123456789", min_size=1, max_size=12), unique=True, max_size=4
)


@given(decisions=ids_strategy, tasks=ids_strategy)
def test_export_and_import_keep_item_ids_and_verify(decisions: list[str], tasks: list[str]) -> None:
    content = CheckpointContent(
        title="t",
        decisions=tuple(f"d{i}" for i in range(len(decisions))),
        tasks=tuple(f"t{i}" for i in range(len(tasks))),
        item_ids=ItemIds(decisions=tuple(decisions), tasks=tuple(tasks)),
    )
    saved = checkpoint(1, body=content)
    space = Space(id=10, name="s", description="", owner_id=1, created_at=T0, updated_at=T0)
    export = Export(spaces=(SpaceExport(space, 10, (), (saved,), ()),), sessions=())
    document = to_document(export, exported_at=datetime(2025, 1, 1, tzinfo=UTC))
    read = from_document(document)  # verifies every hash
    assert read.spaces[0].checkpoints[0].content == content


texts_strategy = st.lists(st.sampled_from(["Fly", "fly!", "Drive", "Walk", "Swim"]), max_size=5)


@given(decisions=texts_strategy, keep=st.lists(st.booleans(), min_size=5, max_size=5))
def test_carry_forward_and_save_preserve_every_kept_items_identity(
    decisions: list[str], keep: list[bool]
) -> None:
    # A parent with stored ids (or, for an old one, implicit ids): the form
    # sends back the items it keeps, some edited, with their ids, plus one new.
    parent = checkpoint(
        1,
        body=CheckpointContent(
            title="p",
            decisions=tuple(decisions),
            item_ids=ItemIds(decisions=tuple(f"id{i}" for i in range(len(decisions)))),
        ),
    )
    for tip in (
        parent,
        dataclasses.replace(parent, content=dataclasses.replace(parent.content, item_ids=None)),
    ):
        carried = carry_forward(tip)
        kept = [
            (item_id, f"{text} (edited)" if index % 2 else text)
            for index, (item_id, text) in enumerate(
                zip(carried.item_ids.decisions, carried.decisions, strict=True)
            )
            if keep[index]
        ]
        sent = [*kept, (None, "Something new")]
        content = CheckpointContent(title="next", decisions=tuple(t for _, t in sent))
        saved = assign_ids(
            content, {"decisions": [i for i, _ in sent]}, tip, new_id=lambda: "fresh"
        )
        assert saved.item_ids is not None
        assert saved.item_ids.decisions == (*(i for i, _ in kept), "fresh")
