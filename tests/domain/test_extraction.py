"""Drafting and titling (docs/architecture.md#drafting-and-carrying-forward): the prompts, and strict parsing of the answers."""

from __future__ import annotations

import json

import pytest

from api.domain.extraction import (
    build_extraction_messages,
    build_title_messages,
    parse_draft,
    parse_title,
)
from api.domain.types import ChatMessage, CheckpointContent, Role
from api.errors import ErrorCode, InputError, ProviderError
from tests.domain.builders import turn

WINDOW = [
    turn(3, content="Shall we fly via Singapore?"),
    turn(4, content="Yes.\n\nIt is cheaper."),
    turn(5, role=Role.SYSTEM, content="hidden system note"),
    turn(6, role=Role.USER, content="Decided: Singapore."),
]
TRANSCRIPT = (
    "[USER #3]\nShall we fly via Singapore?\n"
    "\n"
    "[ASSISTANT #4]\nYes.\n\nIt is cheaper.\n"
    "\n"
    "[USER #6]\nDecided: Singapore."
)


def draft(**overrides: object) -> str:
    document: dict[str, object] = {
        "title": "Trip",
        "objective": "Plan it",
        "summary": "We planned.",
        "decisions": ["Fly via Singapore"],
        "tasks": [],
        "openQuestions": ["Visa?"],
        "entities": ["Singapore"],
    }
    document.update(overrides)
    return json.dumps(document)


EXPECTED = CheckpointContent(
    title="Trip",
    objective="Plan it",
    summary="We planned.",
    decisions=("Fly via Singapore",),
    open_questions=("Visa?",),
    entities=("Singapore",),
)


def malformed(text: str) -> str:
    with pytest.raises(ProviderError) as caught:
        parse_draft(text)
    assert caught.value.code is ErrorCode.MALFORMED_OUTPUT
    return caught.value.message


# --- prompts ---------------------------------------------------------------------


def test_extraction_prompt_is_instructions_then_the_transcript() -> None:
    system, user = build_extraction_messages(WINDOW)
    assert system.role == "system"
    assert system.content.startswith("You extract a checkpoint from a conversation.\n")
    assert user == ChatMessage("user", TRANSCRIPT)


@pytest.mark.parametrize(
    "rule",
    [
        "Extract only what this conversation discusses or decides.",
        "Do not infer or carry over anything",
        "Decisions are explicit choices made in the conversation, not hypotheticals",
        "Use an empty list when nothing fits.",
        "a single JSON object with exactly these keys",
        '"openQuestions"',
        "No prose",
    ],
)
def test_extraction_prompt_states_the_rules(rule: str) -> None:
    assert rule in build_extraction_messages(WINDOW)[0].content


def test_extraction_prompt_carries_no_system_turn() -> None:
    messages = build_extraction_messages(WINDOW)
    assert all("hidden system note" not in m.content for m in messages)


def test_title_prompt_reads_the_first_four_turns() -> None:
    turns = [turn(n, content=f"<{n}>") for n in range(1, 8)]
    system, user = build_title_messages([turn(0, role=Role.SYSTEM, content="<s>"), *turns])
    assert system.content.startswith("You write a short title for a conversation.\n")
    assert "At most 8 words." in system.content
    assert user.content == (
        "[USER #1]\n<1>\n\n[ASSISTANT #2]\n<2>\n\n[USER #3]\n<3>\n\n[ASSISTANT #4]\n<4>"
    )


@pytest.mark.parametrize("build", [build_extraction_messages, build_title_messages])
def test_nothing_to_read_is_an_input_error(build: object) -> None:
    with pytest.raises(InputError) as caught:
        build([turn(1, role=Role.SYSTEM)])  # type: ignore[operator]
    assert caught.value.code is ErrorCode.INVALID


# --- parse_draft -----------------------------------------------------------------


@pytest.mark.parametrize(
    "wrap",
    [
        "{}",
        "```json\n{}\n```",
        "```\n{}\n```",
        "Here is the checkpoint:\n```json\n{}\n```\nLet me know if you need more.",
        "Sure! {} Hope that helps.",
        "Notes {in braces} first, then {}",
        "  \n{}\n  ",
    ],
)
def test_one_object_bare_fenced_or_among_prose(wrap: str) -> None:
    assert parse_draft(wrap.replace("{}", draft(), 1)) == EXPECTED


def test_unknown_keys_are_ignored() -> None:
    assert parse_draft(draft(confidence=0.9, notes=["x"])) == EXPECTED


def test_strings_and_items_are_tidied() -> None:
    text = draft(
        title="  Trip \n",
        summary=" We planned. ",
        decisions=[" Fly via Singapore ", "", "   ", "Fly via Singapore", "Rent a car"],
    )
    assert parse_draft(text) == CheckpointContent(
        title="Trip",
        objective="Plan it",
        summary="We planned.",
        decisions=("Fly via Singapore", "Rent a car"),
        open_questions=("Visa?",),
        entities=("Singapore",),
    )


def test_a_drafted_title_loses_its_markdown() -> None:
    content = parse_draft(draft(title="What to pack for **Sydney** in `October`"))
    assert content.title == "What to pack for Sydney in October"


def test_long_values_are_cut_to_the_limits() -> None:
    content = parse_draft(
        draft(title="T" * 250, tasks=[f"task {n}" for n in range(60)], entities=["e" * 1200])
    )
    assert content.title == "T" * 200
    assert content.tasks == tuple(f"task {n}" for n in range(50))
    assert content.entities == ("e" * 1000,)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("I could not find anything to extract.", "no JSON object"),
        ("", "no JSON object"),
        ('{"title": "Trip", "summary": ', "no JSON object"),
        ("[1, 2]", "no JSON object"),
        (draft() + "\n" + draft(), "more than one JSON object"),
        ("```json\n" + draft() + "\n```\n```json\n" + draft() + "\n```", "more than one fenced"),
        (
            json.dumps({"title": "Trip", "x": 1}),
            "lacks objective, summary, decisions, tasks, openQuestions, entities.",
        ),
        (draft(title="   "), "needs a title"),
        (draft(title=None), "title must be a string, not null"),
        (draft(summary=None), "summary must be a string, not null"),
        (draft(objective=["a"]), "objective must be a string, not a list"),
        (draft(decisions="Fly"), "decisions must be a list of strings, not a string"),
        (draft(tasks={"a": 1}), "tasks must be a list of strings, not an object"),
        (draft(entities=["ok", 3]), "entities[1] must be a string, not a number"),
        (draft(openQuestions=[True]), "openQuestions[0] must be a string, not a boolean"),
        (draft(summary="a\x00b"), "summary contains characters that are not valid text"),
    ],
)
def test_a_malformed_answer_says_what_was_wrong(text: str, says: str) -> None:
    message = malformed(text)
    assert says in message
    assert message.startswith("The background model's answer could not be used: ")


def test_the_error_never_quotes_the_answer() -> None:
    message = malformed('{"title": "SECRET-MARKER", "summary": "SECRET-MARKER"}')
    assert "SECRET-MARKER" not in message


# --- parse_title -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Planning an Australia trip", "Planning an Australia trip"),
        ('"Planning an Australia trip."', "Planning an Australia trip"),
        ("\u201cTrip planning\u201d\n", "Trip planning"),
        ("Title: Trip planning!", "Trip planning"),
        ("**Title:** 'Trip   planning'...", "Trip planning"),
        ("\n\n  Trip planning\nBecause the user asked about trips.", "Trip planning"),
        ("# Trip planning \u2014", "Trip planning"),
        ("**Plan** a *two-week* trip", "Plan a two-week trip"),
        ("Plan a __two-week__ trip to `Sydney`", "Plan a two-week trip to Sydney"),
        ("## 1. **_Plan_** the [Sydney](https://example.com) leg", "Plan the Sydney leg"),
        ("- Compare ~~Perth~~ and ![map](m.png) options", "Compare Perth and map options"),
        ("snake_case_names and 2*3*4 stay", "snake_case_names and 2*3*4 stay"),
        ("Setup (v2)", "Setup (v2)"),
        ("It's a plan", "It's a plan"),
    ],
)
def test_title_is_tidied(answer: str, title: str) -> None:
    assert parse_title(answer) == title


def test_long_title_is_cut_at_a_word() -> None:
    title = parse_title(" ".join(["word"] * 30))
    assert title == " ".join(["word"] * 16)  # 16 * 5 - 1 = 79 characters
    assert parse_title("x" * 100) == "x" * 80


@pytest.mark.parametrize("answer", ["", "   \n ", '""', "...", "**"])
def test_an_empty_title_is_malformed(answer: str) -> None:
    with pytest.raises(ProviderError) as caught:
        parse_title(answer)
    assert caught.value.code is ErrorCode.MALFORMED_OUTPUT
