"""The three-way merge of checkpoint list fields, on item identity (issue 18)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.domain.compare import normalize_item
from api.domain.merge import (
    Change,
    Conflict,
    Dropped,
    FieldMerge,
    MatchedBy,
    MergedItem,
    Origin,
    Resolution,
    SimilarityMatch,
    merge_checkpoints,
    merge_items,
    resolve,
)
from api.domain.types import CheckpointContent, ItemIds
from api.errors import ErrorCode, InputError
from tests.domain.builders import checkpoint

A, OU, T, B = Origin.ANCESTOR, Origin.OURS, Origin.THEIRS, Origin.BOTH
SIM = MatchedBy.SIMILARITY

Pairs = list[tuple[str, str]]


# Every three-way case of the module doc, by identity ("1" is the item's id).
@pytest.mark.parametrize(
    ("ancestor", "ours", "theirs", "entries", "dropped"),
    [
        # unchanged on both → kept
        ([("1", "x")], [("1", "x")], [("1", "x")], [MergedItem("1", "x", A)], []),
        # edited on one side, untouched on the other → the edit
        ([("1", "x")], [("1", "x2")], [("1", "x")], [MergedItem("1", "x2", OU)], []),
        ([("1", "x")], [("1", "x")], [("1", "x2")], [MergedItem("1", "x2", T)], []),
        # a change of case is an edit too
        ([("1", "x")], [("1", "X")], [("1", "x")], [MergedItem("1", "X", OU)], []),
        # edited the same on both → the edit (ours' spelling when they differ in case)
        ([("1", "x")], [("1", "y z")], [("1", "y z")], [MergedItem("1", "y z", B)], []),
        ([("1", "x")], [("1", "Y z")], [("1", "y z.")], [MergedItem("1", "Y z", B)], []),
        # edited differently on both → conflict
        ([("1", "x")], [("1", "y")], [("1", "z")], [Conflict("1", "x", "y", "z")], []),
        # removed on one side, untouched on the other → dropped, reporting who removed it
        ([("1", "x")], [], [("1", "x")], [], [Dropped("1", "x", OU)]),
        ([("1", "x")], [("1", "x")], [], [], [Dropped("1", "x", T)]),
        # removed on one side, edited on the other → conflict
        ([("1", "x")], [], [("1", "x2")], [Conflict("1", "x", None, "x2")], []),
        ([("1", "x")], [("1", "x2")], [], [Conflict("1", "x", "x2", None)], []),
        # added on one side → added
        ([], [("1", "x")], [], [MergedItem("1", "x", OU)], []),
        ([], [], [("1", "x")], [MergedItem("1", "x", T)], []),
        # added on both under one id: same text → once; different → conflict
        ([], [("1", "x")], [("1", "X!")], [MergedItem("1", "x", B)], []),
        ([], [("1", "x")], [("1", "y")], [Conflict("1", None, "x", "y")], []),
        # removed on both → gone, not reported
        ([("1", "x")], [], [], [], []),
        # order: ours' items in ours' order, then theirs' additions in theirs' order
        (
            [("k", "k")],
            [("o1", "o1"), ("k", "k"), ("o2", "o2")],
            [("t1", "t1"), ("k", "k"), ("t2", "t2")],
            [
                MergedItem("o1", "o1", OU),
                MergedItem("k", "k", A),
                MergedItem("o2", "o2", OU),
                MergedItem("t1", "t1", T),
                MergedItem("t2", "t2", T),
            ],
            [],
        ),
        # two items with the same text and different ids stay two items
        (
            [("1", "x")],
            [("1", "x"), ("2", "x")],
            [("1", "x")],
            [
                MergedItem("1", "x", A),
                MergedItem("2", "x", OU),
            ],
            [],
        ),
    ],
)
def test_every_three_way_case(
    ancestor: Pairs,
    ours: Pairs,
    theirs: Pairs,
    entries: list[MergedItem | Conflict],
    dropped: list[Dropped],
) -> None:
    result = merge_items(ancestor, ours, theirs)
    assert list(result.entries) == entries
    assert list(result.dropped) == dropped
    assert result.matches == ()


RENT = "Rent a campervan for the Queensland coast"
RENT_4WD = "Rent a 4WD campervan for the Queensland coast"
TRAIN = "Take the train"


def test_the_issues_case_is_a_conflict_by_identity() -> None:
    # rail removed the campervan and added the train; main edited the campervan.
    result = merge_items(
        [("c1", RENT)],
        [("c1", RENT_4WD)],  # main (ours)
        [("t1", TRAIN)],  # rail (theirs)
    )
    assert result.entries == (Conflict("c1", RENT, RENT_4WD, None), MergedItem("t1", TRAIN, T))
    conflict = result.conflicts[0]
    assert (conflict.ours_change, conflict.theirs_change) == (Change.EDITED, Change.REMOVED)


def test_the_issues_case_is_a_conflict_by_similarity_without_ids_in_common() -> None:
    # main's client sent plain text: its edit came back under a new id.
    result = merge_items([("c1", RENT)], [("n9", RENT_4WD)], [("t1", TRAIN)])
    assert result.entries == (
        Conflict("c1", RENT, RENT_4WD, None, SIM),
        MergedItem("t1", TRAIN, T),
    )
    assert result.matches == (SimilarityMatch("c1", RENT, RENT_4WD, None, 0.875),)


def test_items_added_on_both_sides_under_two_ids_match_by_similarity() -> None:
    result = merge_items([], [("b", "Use Redis.")], [("a", "use redis")])
    # The match takes the smaller id, whichever side it came from.
    assert result.entries == (MergedItem("a", "Use Redis.", B, SIM),)
    assert result.matches == (SimilarityMatch("a", None, "Use Redis.", "use redis", 1.0),)
    near = merge_items([], [("o", "Book the ferry to Fraser")], [("t", "Book ferry to Fraser")])
    assert near.entries == (
        Conflict("o", None, "Book the ferry to Fraser", "Book ferry to Fraser", SIM),
    )


def test_dissimilar_items_do_not_match() -> None:
    # 3 words in common of 5: 0.6, under the 0.7 threshold.
    result = merge_items(
        [("a", "Book flights to Cairns")],
        [("n", "Book flights to Sydney")],
        [("a", "Book flights to Cairns")],
    )
    assert result.entries == (MergedItem("n", "Book flights to Sydney", OU),)
    assert result.dropped == (Dropped("a", "Book flights to Cairns", OU),)
    assert result.matches == ()


def test_an_item_kept_on_a_side_is_not_matched_again_by_similarity() -> None:
    # Ours kept the ancestor's item and added a similar one: two items.
    result = merge_items(
        [("a", "Visit the reef")], [("a", "Visit the reef"), ("n", "Visit the reef!")], []
    )
    assert result.entries == (MergedItem("n", "Visit the reef!", OU),)
    assert result.dropped == (Dropped("a", "Visit the reef", T),)


def ids(**by_field: tuple[str, ...]) -> ItemIds:
    return ItemIds(**by_field)


def test_merge_checkpoints_uses_stored_and_implicit_ids() -> None:
    # An ancestor saved before ids existed: its ids are implicit; a side that
    # carried its item forward has stored that id.
    base = checkpoint(1, body=CheckpointContent(title="b", decisions=(RENT,)))
    from api.domain.identity import item_ids

    carried = item_ids(base).decisions[0]
    main = checkpoint(
        2,
        parent=base,
        body=CheckpointContent(
            title="m", decisions=(RENT_4WD,), item_ids=ids(decisions=(carried,))
        ),
    )
    rail = checkpoint(
        3,
        parent=base,
        branch_name="rail",
        body=CheckpointContent(title="r", decisions=(TRAIN,), item_ids=ids(decisions=("t1",))),
    )
    result = merge_checkpoints(base, main, rail)
    assert result.decisions == FieldMerge(
        (Conflict(carried, RENT, RENT_4WD, None), MergedItem("t1", TRAIN, T))
    )
    assert result.conflict_count == 1


def test_no_common_ancestor_makes_every_item_an_addition() -> None:
    ours = checkpoint(
        1,
        body=CheckpointContent(
            title="a", decisions=("d1", "shared"), item_ids=ids(decisions=("1", "2"))
        ),
    )
    theirs = checkpoint(
        2,
        body=CheckpointContent(
            title="b",
            decisions=("shared", "d2"),
            tasks=("t",),
            item_ids=ids(decisions=("3", "4"), tasks=("5",)),
        ),
    )
    result = merge_checkpoints(None, ours, theirs)
    assert result.decisions.entries == (
        MergedItem("1", "d1", OU),
        MergedItem("2", "shared", B, SIM),
        MergedItem("4", "d2", T),
    )
    assert result.tasks.entries == (MergedItem("5", "t", T),)
    assert result.conflict_count == 0


CONFLICTED = merge_items(
    [("1", "a"), ("2", "b"), ("3", "c")],
    [("1", "a ours"), ("3", "c")],  # removed 2, edited 1
    [("1", "a theirs"), ("2", "b edited"), ("3", "c")],
)


def test_resolve_takes_a_side_keeps_or_drops_each_conflict_in_place() -> None:
    from api.domain.merge import Merge

    empty = FieldMerge(())
    merge = Merge(decisions=CONFLICTED, tasks=empty, open_questions=empty, entities=empty)
    assert merge.conflict_count == 2
    lists = resolve(
        merge,
        [
            Resolution("decisions", item_id="1", take=T),
            Resolution("decisions", item="B EDITED", keep=True),
        ],
    )
    assert lists["decisions"] == (("1", "a theirs"), ("3", "c"), ("2", "b edited"))
    dropped = resolve(
        merge,
        [
            Resolution("decisions", item="a", take=OU),
            Resolution("decisions", item_id="2", keep=False),
        ],
    )
    assert dropped["decisions"] == (("1", "a ours"), ("3", "c"))


def test_resolve_refuses_an_undecided_conflict_and_a_vague_or_stray_resolution() -> None:
    from api.domain.merge import Merge

    empty = FieldMerge(())
    merge = Merge(decisions=empty, tasks=CONFLICTED, open_questions=empty, entities=empty)

    def refused(resolutions: list[Resolution]) -> tuple[ErrorCode, str]:
        with pytest.raises(InputError) as caught:
            resolve(merge, resolutions)
        assert caught.value.field == "resolutions"
        return caught.value.code, caught.value.message

    assert refused([]) == (
        ErrorCode.CONFLICT,
        'Resolve the conflict on tasks "a": keep a side\'s text or drop it.',
    )
    both = [Resolution("tasks", item_id="2", keep=False)]
    assert refused([Resolution("tasks", item_id="1", keep=True), *both]) == (
        ErrorCode.INVALID,
        'The conflict on tasks "a" has a text on both sides: say which to take.',
    )
    assert refused(
        [Resolution("tasks", item_id="1", take=OU), Resolution("tasks", item_id="2", take=OU)]
    ) == (
        ErrorCode.INVALID,
        'The conflict on tasks "b": that side removed it; take the other side\'s text or drop it.',
    )
    assert refused(
        [Resolution("tasks", item_id="1", keep=False), *both, Resolution("entities", "y", True)]
    ) == (ErrorCode.INVALID, 'No conflict on entities matches "y".')
    assert refused([Resolution("tasks", keep=True)]) == (
        ErrorCode.INVALID,
        "A resolution names its item or itemId.",
    )
    assert refused([Resolution("tasks", item="a")]) == (
        ErrorCode.INVALID,
        "A resolution says keep (true or false) or which side's text to take.",
    )
    assert refused([Resolution("title", "x", True)]) == (
        ErrorCode.INVALID,
        "A resolution's field is one of decisions, tasks, openQuestions, entities.",
    )


# Properties. Ids from a small set and texts from a small alphabet, so that
# sides overlap (by id and by text) often.
TEXTS = ["alpha", "Alpha.", "beta", "beta gamma", "gamma", "delta one", "delta two"]


@st.composite
def side(draw: st.DrawFn) -> Pairs:
    chosen = draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=6))
    return [(i, draw(st.sampled_from(TEXTS))) for i in chosen]


def swap_conflict(c: Conflict) -> Conflict:
    return dataclasses.replace(c, ours=c.theirs, theirs=c.ours)


SWAP = {OU: T, T: OU, A: A, B: B}


def normalised(result: FieldMerge) -> tuple[set[object], set[object], set[object]]:
    items = {(e.id, normalize_item(e.text), e.origin) for e in result.items}
    conflicts = {
        (c.id, c.ancestor, *sorted([str(c.ours), str(c.theirs)])) for c in result.conflicts
    }
    dropped = {(d.id, d.text) for d in result.dropped}
    return items, conflicts, dropped


@given(ancestor=side(), ours=side(), theirs=side())
def test_merge_is_symmetric_up_to_naming(ancestor: Pairs, ours: Pairs, theirs: Pairs) -> None:
    forward = merge_items(ancestor, ours, theirs)
    backward = merge_items(ancestor, theirs, ours)
    items, conflicts, dropped = normalised(forward)
    assert {(i, t, SWAP[o]) for i, t, o in items} == {
        (e.id, normalize_item(e.text), e.origin) for e in backward.items
    }
    assert conflicts == normalised(backward)[1]
    assert {(d.id, d.text, SWAP[d.removed_by]) for d in forward.dropped} == {
        (d.id, d.text, d.removed_by) for d in backward.dropped
    }
    assert dropped == normalised(backward)[2]


@given(ancestor=side(), ours=side(), theirs=side())
def test_every_item_keeps_an_id_it_had_and_appears_once(
    ancestor: Pairs, ours: Pairs, theirs: Pairs
) -> None:
    result = merge_items(ancestor, ours, theirs)
    known = {i for i, _ in ancestor + ours + theirs}
    every = [e.id for e in result.entries] + [d.id for d in result.dropped]
    assert set(every) <= known
    assert len(every) == len(set(every))
    # An item both sides kept unchanged from the ancestor is kept, by its id.
    o, t = dict(ours), dict(theirs)
    for item_id, text in ancestor:
        if o.get(item_id) == text and t.get(item_id) == text:
            assert MergedItem(item_id, text, A) in result.items


@given(ancestor=side(), theirs=side())
def test_an_untouched_side_takes_the_other_sides_list(ancestor: Pairs, theirs: Pairs) -> None:
    # Ours is still the ancestor: the result is theirs' list, with no
    # conflicts (an addition like an item theirs removed takes that item's id).
    result = merge_items(ancestor, ancestor, theirs)
    assert result.conflicts == ()
    assert sorted(e.text for e in result.items) == sorted(t for _, t in theirs)
    assert {e.id for e in result.items} <= {i for i, _ in ancestor + theirs}


@given(ancestor=side(), both=side())
def test_merging_a_line_with_itself_changes_nothing(ancestor: Pairs, both: Pairs) -> None:
    result = merge_items(ancestor, both, both)
    assert result.conflicts == ()
    assert [(e.id, e.text) for e in result.items] == both
