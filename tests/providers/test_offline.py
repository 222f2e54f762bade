"""The offline models' answers, exactly, and the promises they keep on any input."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from api.domain.types import ChatMessage
from api.providers.offline import echo_reply, extract_draft, stream_chunks

SYSTEM_TWO_CHECKPOINTS = """\
You are continuing a conversation.

Checkpoint [1] \u2014 Trip plan (a1b2c3d)
Objective: Plan a trip
Summary:
Sydney first.

Checkpoint [2] \u2014 Budget (revised) (e4f5a6b)
Key Decisions:
- Fly economy"""

TRANSCRIPT = """\
[USER #1]
We need a plan for migrating Smriti to PostgreSQL. Which version should we target?

[ASSISTANT #2]
Version 16 is the current stable release. We decided to keep SQLite for local installs.
TODO: write the migration script
- [ ] benchmark the Tortoise queries

[USER #3]
Let's go with Postgres 16 for teams. Remember to update the Dockerfile.
Should we use asyncpg directly?
- [x] already done
If we chose MySQL instead, what then?"""

EXTRACT_SYSTEM = "You extract a checkpoint from a conversation.\n\nRules: ..."
TITLE_SYSTEM = "You write a short title for a conversation.\n\nRules: ..."


def msg(role: str, content: str) -> ChatMessage:
    return ChatMessage(role, content)


# --- echo -------------------------------------------------------------------------


def test_echo_fresh_counts_turns_and_collapses_the_question() -> None:
    reply = echo_reply(
        [msg("user", "Hi"), msg("assistant", "Hello!"), msg("user", "What   did\n I  say?")]
    )

    assert reply == (
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)\n"
        "Checkpoints (0): none\n"
        "Earlier turns: 2 (1 from the user, 1 from the assistant)\n"
        "You asked: What did I say?"
    )


def test_echo_with_checkpoints_says_head_or_mounted_and_lists_each_header() -> None:
    reply = echo_reply(
        [
            msg("system", SYSTEM_TWO_CHECKPOINTS),
            msg("user", "Where next?"),
            msg("assistant", "Melbourne."),
            msg("user", "And after that?"),
            msg("user", "Budget check"),
        ]
    )

    assert reply == (
        "Offline echo \u2014 mode: HEAD or MOUNTED (checkpoints received)\n"
        "Checkpoints (2): [1] Trip plan (a1b2c3d); [2] Budget (revised) (e4f5a6b)\n"
        "Earlier turns: 3 (2 from the user, 1 from the assistant)\n"
        "You asked: Budget check"
    )


def test_echo_system_message_without_checkpoint_headers() -> None:
    reply = echo_reply([msg("system", "You are continuing a conversation."), msg("user", "hi")])

    assert reply.splitlines()[:2] == [
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)",
        "Checkpoints (0): none",
    ]


def test_echo_truncates_the_question_to_200_characters() -> None:
    reply = echo_reply([msg("user", "word " * 100)])

    question = reply.splitlines()[-1].removeprefix("You asked: ")
    assert question == " ".join(["word"] * 40) + "\u2026"
    assert len(question) == 200


def test_echo_of_nothing() -> None:
    assert echo_reply([]) == (
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)\n"
        "Checkpoints (0): none\n"
        "Earlier turns: 0 (0 from the user, 0 from the assistant)\n"
        "You asked: "
    )


messages_strategy = st.lists(
    st.builds(
        ChatMessage,
        role=st.sampled_from(["system", "user", "assistant", "tool", ""]),
        content=st.text(),
    ),
    max_size=6,
)


@given(messages_strategy)
def test_echo_never_fails_and_always_has_four_lines(messages: list[ChatMessage]) -> None:
    lines = echo_reply(messages).split("\n")

    assert len(lines) == 4
    assert lines[0].startswith("Offline echo \u2014 mode: ")


# --- extractor --------------------------------------------------------------------


def test_extract_draft_applies_each_heuristic() -> None:
    answer = extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", TRANSCRIPT)])

    assert json.loads(answer) == {
        "title": "We need a plan for migrating Smriti to",
        "objective": "We need a plan for migrating Smriti to PostgreSQL.",
        "summary": "We need a plan for migrating Smriti to PostgreSQL. "
        "Version 16 is the current stable release. "
        "Let's go with Postgres 16 for teams.",
        "decisions": [
            "We decided to keep SQLite for local installs.",
            "Let's go with Postgres 16 for teams.",
        ],
        "tasks": [
            "write the migration script",
            "benchmark the Tortoise queries",
            "Remember to update the Dockerfile.",
        ],
        "openQuestions": [
            "Which version should we target?",
            "Should we use asyncpg directly?",
            "If we chose MySQL instead, what then?",
        ],
        "entities": [
            "Smriti",
            "PostgreSQL",
            "SQLite",
            "Tortoise",
            "Postgres",
            "Dockerfile",
            "MySQL",
        ],
    }
    assert list(json.loads(answer)) == [
        "title",
        "objective",
        "summary",
        "decisions",
        "tasks",
        "openQuestions",
        "entities",
    ]


def test_extract_questions_come_from_user_turns_only_and_lists_are_deduplicated() -> None:
    transcript = (
        "[USER #1]\nIs it ready? TODO: ship it\n\n"
        "[ASSISTANT #2]\nIs it ready? todo: Ship it\n\n"
        "[USER #3]\nis it READY?"
    )

    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))

    assert draft["openQuestions"] == ["Is it ready?"]
    assert draft["tasks"] == ["ship it"]


def test_extract_summary_is_capped_at_600_characters() -> None:
    sentence = "A" + "a" * 98 + "."  # 100 characters
    transcript = "\n\n".join(f"[USER #{n}]\n{sentence}" for n in range(1, 9))

    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))

    assert len(draft["summary"]) == 600
    assert draft["summary"] == (" ".join([sentence] * 6))[:599] + "\u2026"


def test_extract_entities_stop_at_twenty() -> None:
    names = [f"Name{chr(ord('a') + i)}x" for i in range(25)]
    transcript = "[USER #1]\nWe met " + " and ".join(names) + "."

    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))

    assert draft["entities"] == names[:20]


def test_extract_of_an_empty_transcript() -> None:
    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", "")]))

    assert draft == {
        "title": "Untitled conversation",
        "objective": "",
        "summary": "",
        "decisions": [],
        "tasks": [],
        "openQuestions": [],
        "entities": [],
    }


def test_extract_reads_text_without_headers_as_one_user_turn() -> None:
    draft = json.loads(
        extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", "Compare Rust and Go? Yes.")])
    )

    assert draft["objective"] == "Compare Rust and Go?"
    assert draft["openQuestions"] == ["Compare Rust and Go?"]
    assert draft["entities"] == ["Rust", "Go"]


def test_title_request_answers_a_plain_title() -> None:
    transcript = (
        "[USER #1]\nPlan a two-week trip to Japan in April, please! Budget matters.\n\n"
        "[ASSISTANT #2]\nSure."
    )

    title = extract_draft([msg("system", TITLE_SYSTEM), msg("user", transcript)])

    assert title == "Plan a two-week trip to Japan in April"


def test_title_strips_trailing_punctuation_of_a_short_sentence() -> None:
    title = extract_draft([msg("system", TITLE_SYSTEM), msg("user", "[USER #1]\nHello there!!")])

    assert title == "Hello there"


def _collapsed(text: str) -> str:
    return " ".join(text.split())


transcripts = st.lists(
    st.tuples(
        st.sampled_from(["USER", "ASSISTANT"]),
        st.lists(
            st.sampled_from(
                [*"abcXYZ .?!:-[]\n'", "TODO", "we will ", "need to ", "Decision: ", "- [ ] "]
            ),
            max_size=40,
        ).map("".join),
    ),
    max_size=5,
).map(lambda turns: "\n\n".join(f"[{r} #{n}]\n{t}" for n, (r, t) in enumerate(turns, 1)))


@given(transcripts)
def test_extract_never_invents_text(transcript: str) -> None:
    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))
    source = _collapsed(transcript)

    assert set(draft) == {
        "title",
        "objective",
        "summary",
        "decisions",
        "tasks",
        "openQuestions",
        "entities",
    }
    for item in [draft["objective"], *draft["decisions"], *draft["tasks"]]:
        assert item in source
    for item in [*draft["openQuestions"], *draft["entities"]]:
        assert item in source
    assert draft["title"] == "Untitled conversation" or draft["title"] in source
    assert len(draft["title"].split()) <= 8


def test_extract_skips_the_echo_models_own_replies() -> None:
    echo = echo_reply([msg("user", "Extend the trip to New Zealand.")])
    transcript = f"[USER #1]\nExtend the trip to New Zealand.\n\n[ASSISTANT #2]\n{echo}"

    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))

    assert draft["summary"] == "Extend the trip to New Zealand."
    assert draft["entities"] == ["New Zealand"]


def test_extract_joins_multi_word_names_and_drops_sentence_initial_words() -> None:
    transcript = (
        "[USER #1]\nNow we fly from Sydney to New Zealand and see Kings Park, Perth.\n"
        "New Zealand first. Extend the stay in Queenstown.\n\n"
        "[ASSISTANT #2]\nTrips to the Great Barrier Reef leave from Cairns."
    )

    draft = json.loads(extract_draft([msg("system", EXTRACT_SYSTEM), msg("user", transcript)]))

    assert draft["entities"] == [
        "Sydney",
        "New Zealand",
        "Kings Park",
        "Perth",
        "Queenstown",
        "Great Barrier Reef",
        "Cairns",
    ]


# --- streaming --------------------------------------------------------------------


def test_stream_chunks_are_words_with_their_leading_whitespace() -> None:
    assert stream_chunks("  Hello  big\nworld \n") == ["  Hello", "  big", "\nworld", " \n"]
    assert stream_chunks("") == []


@given(st.text())
def test_stream_chunks_join_back_to_the_text(text: str) -> None:
    assert "".join(stream_chunks(text)) == text
