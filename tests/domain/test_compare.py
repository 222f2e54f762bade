"""compareCheckpoints (docs/architecture.md#comparing-and-merging): list fields side by side, and the common ancestor."""

from __future__ import annotations

from api.domain.compare import FieldComparison, compare_checkpoints, compare_items, normalize_item
from api.domain.types import Checkpoint, CheckpointContent
from tests.domain.builders import checkpoint, lineage


def test_items_match_ignoring_case_punctuation_and_spacing() -> None:
    assert compare_items(
        ["Use Postgres.", "Fly  via\tSingapore", "Book hotels"],
        ["use postgres", "fly via singapore!", "Rent a car"],
    ) == FieldComparison(
        only_a=("Book hotels",),
        only_b=("Rent a car",),
        shared=("Use Postgres.", "Fly  via\tSingapore"),
    )


def test_order_follows_each_side() -> None:
    result = compare_items(["c", "x", "a", "y"], ["b", "y", "d", "x"])
    assert result == FieldComparison(only_a=("c", "a"), only_b=("b", "d"), shared=("x", "y"))


def test_unicode_punctuation_and_case() -> None:
    assert normalize_item("\u00abSTRASSE\u00bb \u2014 Caf\u00e9\u2026") == "strasse caf\u00e9"
    assert normalize_item("Stra\u00dfe") == "strasse"  # casefold, not lower
    assert compare_items(["\u201cDone\u201d"], ["done"]).shared == ("\u201cDone\u201d",)


def test_words_stay_apart() -> None:
    # Spacing collapses; it does not disappear.
    assert compare_items(["new york"], ["newyork"]) == FieldComparison(
        only_a=("new york",), only_b=("newyork",), shared=()
    )


def test_symbols_are_not_punctuation() -> None:
    assert compare_items(["C++", "$5"], ["C", "5"]).shared == ()


def test_repeats_are_reported_once() -> None:
    result = compare_items(["Tea", "tea.", "Milk"], ["milk", "MILK", "Sugar", "sugar!"])
    assert result == FieldComparison(only_a=("Tea",), only_b=("Sugar",), shared=("Milk",))


def test_items_of_only_punctuation_are_not_all_equal() -> None:
    assert compare_items(["?"], ["!"]) == FieldComparison(only_a=("?",), only_b=("!",), shared=())
    assert compare_items(["?"], ["?"]).shared == ("?",)


def with_lists(id: int, parent: Checkpoint | None = None, **lists: tuple[str, ...]) -> Checkpoint:
    return checkpoint(id, parent=parent, body=CheckpointContent(title=f"cp {id}", **lists))


def test_every_list_field_is_compared() -> None:
    a = with_lists(
        1, decisions=("D1", "Both"), tasks=("T",), open_questions=("Q?",), entities=("Perth",)
    )
    b = with_lists(2, decisions=("both",), tasks=("T",), entities=("Auckland",))
    comparison = compare_checkpoints(a, b, [], [])
    assert comparison.decisions == FieldComparison(("D1",), (), ("Both",))
    assert comparison.tasks == FieldComparison((), (), ("T",))
    assert comparison.open_questions == FieldComparison(("Q?",), (), ())
    assert comparison.entities == FieldComparison(("Perth",), ("Auckland",), ())
    assert (comparison.a, comparison.b) == (a, b)


def test_common_ancestor_of_two_branches_is_the_fork_point() -> None:
    root, fork_point = lineage(2)
    left = checkpoint(3, parent=fork_point)
    left_tip = checkpoint(4, parent=left)
    right = checkpoint(5, parent=fork_point, branch_name="nz")
    comparison = compare_checkpoints(left_tip, right, [left, fork_point, root], [fork_point, root])
    assert comparison.common_ancestor == fork_point


def test_common_ancestor_of_a_checkpoint_and_its_descendant_is_the_checkpoint() -> None:
    one, two, three = lineage(3)
    assert compare_checkpoints(one, three, [], [two, one]).common_ancestor == one
    assert compare_checkpoints(three, one, [two, one], []).common_ancestor == one


def test_common_ancestor_of_a_checkpoint_and_itself_is_itself() -> None:
    one, two = lineage(2)
    assert compare_checkpoints(two, two, [one], [one]).common_ancestor == two


def test_unrelated_checkpoints_have_no_common_ancestor() -> None:
    one, two = lineage(2)
    other_root = checkpoint(7)
    other = checkpoint(8, parent=other_root)
    assert compare_checkpoints(two, other, [one], [other_root]).common_ancestor is None
