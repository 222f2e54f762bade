"""The three-way merge of checkpoint list fields (issue 11 §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.domain.compare import normalize_item
from api.domain.merge import (
    FieldMerge,
    MergedItem,
    Origin,
    Resolution,
    _Side,
    merge_checkpoints,
    merge_items,
    resolve,
)
from api.domain.types import CheckpointContent
from api.errors import ErrorCode, InputError

A, OU, T, B = Origin.ANCESTOR, Origin.OURS, Origin.THEIRS, Origin.BOTH


def merged(
    ancestor: list[str],
    ours: list[str],
    theirs: list[str],
    *,
    ours_line: list[list[str]] | None = None,
    theirs_line: list[list[str]] | None = None,
) -> list[tuple[str, Origin, bool]]:
    result = merge_items(ancestor, _Side(ours, ours_line or []), _Side(theirs, theirs_line or []))
    return [(e.text, e.origin, e.conflict) for e in result.entries]


@pytest.mark.parametrize(
    ("ancestor", "ours", "theirs", "expected"),
    [
        # kept by both → kept
        (["x"], ["x"], ["x"], [("x", A, False)]),
        # added on one side → added
        ([], ["x"], [], [("x", OU, False)]),
        ([], [], ["x"], [("x", T, False)]),
        # added on both sides (matched ignoring case and punctuation) → once, BOTH
        ([], ["Use Redis."], ["use redis"], [("Use Redis.", B, False)]),
        # removed on one side, untouched on the other → removed
        (["x", "y"], ["y"], ["x", "y"], [("y", A, False)]),
        (["x", "y"], ["x", "y"], ["y"], [("y", A, False)]),
        # removed on both → removed
        (["x"], [], [], []),
        # removed on one side, edited (respelled) on the other → conflict
        (["Use SQLite"], [], ["use sqlite!"], [("use sqlite!", T, True)]),
        (["Use SQLite"], ["USE SQLITE"], [], [("USE SQLITE", OU, True)]),
        # kept by both, respelled by theirs only → theirs' spelling
        (["Use SQLite"], ["Use SQLite"], ["use SQLite"], [("use SQLite", A, False)]),
        # kept by both, respelled by ours → ours' spelling
        (["Use SQLite"], ["USE SQLite"], ["use SQLite"], [("USE SQLite", A, False)]),
        # order: ours first, then theirs' additions
        (
            ["k"],
            ["o1", "k", "o2"],
            ["t1", "k", "t2"],
            [
                ("o1", OU, False),
                ("k", A, False),
                ("o2", OU, False),
                ("t1", T, False),
                ("t2", T, False),
            ],
        ),
        # repeats within a side count once
        ([], ["x", "X"], [], [("x", OU, False)]),
    ],
)
def test_merge_table(
    ancestor: list[str],
    ours: list[str],
    theirs: list[str],
    expected: list[tuple[str, Origin, bool]],
) -> None:
    assert merged(ancestor, ours, theirs) == expected


def test_removed_then_re_added_on_one_side_conflicts_with_a_removal() -> None:
    # theirs dropped "x"; ours dropped it in an intermediate checkpoint and re-added it.
    assert merged(["x"], ["x"], [], ours_line=[["y"]]) == [("x", OU, True)]
    # An intermediate checkpoint that kept it does not count as touching it.
    assert merged(["x"], ["x"], [], ours_line=[["x", "y"]]) == []
    assert merged(["x"], [], ["x"], theirs_line=[[]]) == [("x", T, True)]


def test_no_common_ancestor_makes_every_item_an_addition() -> None:
    result = merge_checkpoints(
        None,
        CheckpointContent(title="a", decisions=("d1", "shared")),
        CheckpointContent(title="b", decisions=("shared", "d2"), tasks=("t",)),
    )
    assert result.decisions == FieldMerge(
        (MergedItem("d1", OU), MergedItem("shared", B), MergedItem("d2", T))
    )
    assert result.tasks == FieldMerge((MergedItem("t", T),))
    assert result.conflict_count == 0


def test_resolve_keeps_or_drops_each_conflict_in_place() -> None:
    ancestor = CheckpointContent(title="base", decisions=("a", "b", "c"), entities=("e",))
    ours = CheckpointContent(title="o", decisions=("A!", "c"), entities=())
    theirs = CheckpointContent(title="t", decisions=("c", "new"), entities=("E",))
    result = merge_checkpoints(ancestor, ours, theirs)
    assert result.decisions.conflicts == (MergedItem("A!", OU, conflict=True),)
    assert result.entities.conflicts == (MergedItem("E", T, conflict=True),)
    assert result.conflict_count == 2
    lists = resolve(
        result,
        [Resolution("decisions", "a", keep=True), Resolution("entities", "e", keep=False)],
    )
    assert lists == {
        "decisions": ("A!", "c", "new"),
        "tasks": (),
        "open_questions": (),
        "entities": (),
    }


def test_resolve_refuses_an_unresolved_conflict_and_a_stray_resolution() -> None:
    result = merge_checkpoints(
        CheckpointContent(title="b", tasks=("x",)),
        CheckpointContent(title="o", tasks=("X.",)),
        CheckpointContent(title="t"),
    )
    with pytest.raises(InputError) as refused:
        resolve(result, [])
    assert (refused.value.code, refused.value.message, refused.value.field) == (
        ErrorCode.CONFLICT,
        'Resolve the conflict on tasks "X.": keep it or drop it.',
        "resolutions",
    )
    with pytest.raises(InputError) as stray:
        resolve(result, [Resolution("tasks", "x", True), Resolution("entities", "y", True)])
    assert (stray.value.code, stray.value.message) == (
        ErrorCode.INVALID,
        'No conflict on entities matches "y".',
    )
    with pytest.raises(InputError) as unknown:
        resolve(result, [Resolution("title", "x", True)])
    assert unknown.value.message == (
        "A resolution's field is one of decisions, tasks, openQuestions, entities."
    )


# Properties, over small alphabets so that sides overlap often.
words = st.lists(st.sampled_from(["a", "B", "b.", "c", "d", "e", "f"]), max_size=6)


def keys(entries: tuple[MergedItem, ...]) -> set[str]:
    return {normalize_item(e.text) for e in entries}


@given(ancestor=words, ours=words, theirs=words)
def test_result_is_drawn_from_the_sides_and_keeps_what_both_have(
    ancestor: list[str], ours: list[str], theirs: list[str]
) -> None:
    result = merge_items(ancestor, _Side(ours), _Side(theirs))
    k_a, k_o, k_t = ({normalize_item(i) for i in x} for x in (ancestor, ours, theirs))
    every = keys(result.entries)
    assert every <= k_o | k_t
    assert k_o & k_t <= keys(result.items)  # both have it: kept, never a conflict
    assert not every & (k_a - k_o - k_t)  # removed on both: gone
    assert (k_o | k_t) - k_a <= keys(result.items)  # additions are never conflicts
    assert len(every) == len(result.entries)  # each item once
    for entry in result.conflicts:
        key = normalize_item(entry.text)
        assert key in k_a and (key in k_o) != (key in k_t)


@given(ancestor=words, ours=words, theirs=words)
def test_swapping_sides_swaps_origins(
    ancestor: list[str], ours: list[str], theirs: list[str]
) -> None:
    swap = {OU: T, T: OU, A: A, B: B}
    forward = merge_items(ancestor, _Side(ours), _Side(theirs))
    backward = merge_items(ancestor, _Side(theirs), _Side(ours))
    as_set = {(normalize_item(e.text), e.origin, e.conflict) for e in forward.entries}
    swapped = {(normalize_item(e.text), swap[e.origin], e.conflict) for e in backward.entries}
    assert as_set == swapped


@given(ancestor=words, theirs=words)
def test_an_untouched_side_takes_the_other_sides_list(
    ancestor: list[str], theirs: list[str]
) -> None:
    # Ours is still the ancestor (a fast-forward): the result is theirs, no conflicts.
    result = merge_items(ancestor, _Side(ancestor), _Side(theirs))
    assert result.conflicts == ()
    assert keys(result.items) == {normalize_item(i) for i in theirs}


@given(ancestor=words, side=words)
def test_merging_a_line_with_itself_changes_nothing(ancestor: list[str], side: list[str]) -> None:
    result = merge_items(ancestor, _Side(side), _Side(side))
    assert result.conflicts == ()
    first_spellings: dict[str, str] = {}
    for item in side:
        first_spellings.setdefault(normalize_item(item), item)
    assert [e.text for e in result.items] == list(first_spellings.values())
