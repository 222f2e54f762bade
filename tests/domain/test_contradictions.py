"""Likely contradictions between the sides of a merge: the word-level heuristic,
the prompt asking the background model, and the strict reading of its answer."""

from __future__ import annotations

import json

import pytest

from api.domain.contradictions import (
    CONTRADICTION_INSTRUCTIONS,
    Contradiction,
    Side,
    UnusableAnswer,
    WarningSource,
    build_contradiction_messages,
    heuristic_contradictions,
    merge_sides,
    parse_contradictions,
)
from api.domain.merge import FieldMerge, Merge, MergedItem, Origin
from api.domain.types import ChatMessage

DECISIONS = Side(
    "decisions",
    "decisions",
    (("d1", "Rent a 4WD campervan for the coast"), ("d2", "Book hostels")),
    (("d3", "Do not rent a campervan"), ("d4", "Take the train")),
)


def test_a_shared_word_with_one_side_negated_is_flagged() -> None:
    assert heuristic_contradictions([DECISIONS]) == (
        Contradiction(
            "decisions",
            "d1",
            "Rent a 4WD campervan for the coast",
            "d3",
            "Do not rent a campervan",
            'Both mention "campervan", and only one of them says it negatively.',
            WarningSource.HEURISTIC,
        ),
    )


def test_opposite_leading_verbs_on_a_shared_word_are_flagged() -> None:
    tasks = Side("tasks", "tasks", (("t1", "Add the Redis cache"),), (("t2", "Remove Redis"),))
    assert heuristic_contradictions([tasks]) == (
        Contradiction(
            "tasks",
            "t1",
            "Add the Redis cache",
            "t2",
            "Remove Redis",
            'Both mention "redis", one with "add" and the other with "remove".',
            WarningSource.HEURISTIC,
        ),
    )


def test_the_heuristic_is_only_a_heuristic() -> None:
    # No word in common: the issue's own example goes unflagged; the same verb,
    # both negated, or a field of names or questions: nothing either.
    sides = [
        Side("decisions", "decisions", (("a", "Take the train"),), (("b", "Rent a campervan"),)),
        Side("decisions", "decisions", (("a", "Use Postgres"),), (("b", "Use Postgres 16"),)),
        Side("tasks", "tasks", (("a", "Never skip tests"),), (("b", "No flaky tests"),)),
        Side("entities", "entities", (("a", "Redis"),), (("b", "Not Redis"),)),
        Side("open_questions", "openQuestions", (("a", "Redis?"),), (("b", "No Redis?"),)),
    ]
    assert heuristic_contradictions(sides) == ()


def test_sides_are_what_each_branch_added_or_edited_in_fields_both_changed() -> None:
    def field(*items: tuple[str, str, Origin]) -> FieldMerge:
        return FieldMerge(tuple(MergedItem(i, t, o) for i, t, o in items))

    merge = Merge(
        decisions=field(
            ("d0", "Go in May", Origin.ANCESTOR),
            ("d1", "Rent a campervan", Origin.OURS),
            ("d2", "Take the train", Origin.THEIRS),
            ("d3", "Pack light", Origin.BOTH),
        ),
        tasks=field(("t1", "Book", Origin.OURS)),
        open_questions=field(),
        entities=field(("e1", "Cairns", Origin.THEIRS)),
    )
    assert merge_sides(merge) == (
        Side("decisions", "decisions", (("d1", "Rent a campervan"),), (("d2", "Take the train"),)),
    )


def test_the_prompt_holds_the_branches_and_the_items_and_nothing_else() -> None:
    questions = Side(
        "open_questions", "openQuestions", (("q1", "Which ferry?"),), (("q2", "When?"),)
    )
    assert build_contradiction_messages("main", "rail", [DECISIONS, questions]) == [
        ChatMessage("system", CONTRADICTION_INSTRUCTIONS),
        ChatMessage(
            "user",
            "Merging branch rail into branch main.\n\n"
            "Field decisions:\n- main (merged into):\n"
            "  - Rent a 4WD campervan for the coast\n  - Book hostels\n"
            "- rail (merged in):\n  - Do not rent a campervan\n  - Take the train\n\n"
            "Field openQuestions:\n- main (merged into):\n  - Which ferry?\n"
            "- rail (merged in):\n  - When?",
        ),
    ]


def answer(*entries: dict[str, str]) -> str:
    return json.dumps({"contradictions": list(entries)})


TRAIN = {
    "field": "decisions",
    "into": "Rent a 4WD campervan for the coast",
    "from": "Take the train",
    "reason": "Two  ways to travel the coast.",
}


def test_a_good_answer_gives_model_warnings_once_per_pair() -> None:
    expected = Contradiction(
        "decisions",
        "d1",
        "Rent a 4WD campervan for the coast",
        "d4",
        "Take the train",
        "Two ways to travel the coast.",
        WarningSource.MODEL,
    )
    assert parse_contradictions(answer(TRAIN, TRAIN), [DECISIONS]) == (expected,)
    fenced = "```json\n" + answer(TRAIN) + "\n```"
    assert parse_contradictions(fenced, [DECISIONS]) == (expected,)
    assert parse_contradictions(answer(), [DECISIONS]) == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Sure! " + answer(TRAIN), "the answer is not a JSON object"),
        ("[]", 'the answer is not an object with the one key "contradictions"'),
        (
            json.dumps({"contradictions": [], "note": "x"}),
            'the answer is not an object with the one key "contradictions"',
        ),
        (json.dumps({"contradictions": {}}), '"contradictions" is not a list'),
        (
            answer({**TRAIN, "extra": "x"}),
            'a contradiction is not an object with the keys "field", "into", "from", "reason"',
        ),
        (
            json.dumps({"contradictions": [{**TRAIN, "reason": 1}]}),
            "a contradiction has a value that is not a string",
        ),
        (answer({**TRAIN, "field": "tasks"}), "a contradiction names a field that was not sent"),
        (
            answer({**TRAIN, "from": "take the train"}),
            "a contradiction quotes an item that was not sent",
        ),
        (
            answer({**TRAIN, "into": "Take the train"}),
            "a contradiction quotes an item that was not sent",
        ),
        (answer({**TRAIN, "reason": "  "}), "a contradiction has no reason"),
    ],
)
def test_anything_else_is_an_unusable_answer(text: str, problem: str) -> None:
    with pytest.raises(UnusableAnswer) as raised:
        parse_contradictions(text, [DECISIONS])
    assert str(raised.value) == problem
