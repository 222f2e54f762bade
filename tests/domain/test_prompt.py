"""Prompt layout (docs/architecture.md#context-modes): the exact messages a provider receives."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from api.domain.context import ContextPlan
from api.domain.prompt import (
    MERGE_SEPARATOR,
    MessageSource,
    message_sources,
    render_checkpoint_block,
    render_messages,
)
from api.domain.types import ChatMessage, Checkpoint, CheckpointContent, ContextMode, Role, Turn
from tests.domain.builders import checkpoint, turn

FULL = CheckpointContent(
    title="Australia trip",
    objective="Plan two weeks in Australia",
    summary="Flights chosen.\nHotels pending.",
    decisions=("Fly via Singapore", "Rent a car in Perth"),
    tasks=("Book hotels",),
    open_questions=("Visa needed?",),
    entities=("Perth", "Singapore"),
)
SPARSE = CheckpointContent(title="Add New Zealand", decisions=("Add 4 days in Auckland",))


def plan(
    checkpoints: tuple[Checkpoint, ...] = (),
    turns: tuple[Turn, ...] = (),
    mode: ContextMode = ContextMode.HEAD,
) -> ContextPlan:
    return ContextPlan(mode, 10, checkpoints, turns, boundary=0, token_estimate=0)


def test_checkpoint_block_layout() -> None:
    older = checkpoint(1, body=FULL)
    newer = checkpoint(2, parent=older, body=SPARSE)
    assert render_checkpoint_block([older, newer]) == (
        "You are continuing a conversation.\n"
        "\n"
        f"Checkpoint [1] \u2014 Australia trip ({older.hash[:7]})\n"
        "Objective: Plan two weeks in Australia\n"
        "Summary:\n"
        "Flights chosen.\n"
        "Hotels pending.\n"
        "Key Decisions:\n"
        "- Fly via Singapore\n"
        "- Rent a car in Perth\n"
        "Open Tasks:\n"
        "- Book hotels\n"
        "Open Questions:\n"
        "- Visa needed?\n"
        "\n"
        f"Checkpoint [2] \u2014 Add New Zealand ({newer.hash[:7]})\n"
        "Key Decisions:\n"
        "- Add 4 days in Auckland"
    )


def test_entities_are_not_rendered() -> None:
    block = render_checkpoint_block([checkpoint(1, body=FULL)])
    assert block is not None
    assert "Perth" in block  # as a decision
    assert "Entities" not in block


def test_blank_objective_and_summary_are_left_out() -> None:
    body = CheckpointContent(title="T", objective="  ", summary="\n", tasks=("x",))
    cp = checkpoint(1, body=body)
    assert render_checkpoint_block([cp]) == (
        f"You are continuing a conversation.\n\nCheckpoint [1] \u2014 T ({cp.short_hash})\n"
        "Open Tasks:\n- x"
    )


def test_no_checkpoints_no_block() -> None:
    assert render_checkpoint_block([]) is None


def test_messages_system_block_then_turns_then_new_message() -> None:
    cp = checkpoint(1, body=SPARSE)
    window = (turn(5, content="first q"), turn(6, content="first a"))
    messages = render_messages(plan((cp,), window), "next q")
    assert messages == [
        ChatMessage("system", render_checkpoint_block([cp]) or ""),
        ChatMessage("user", "first q"),
        ChatMessage("assistant", "first a"),
        ChatMessage("user", "next q"),
    ]


def test_fresh_has_no_system_message_even_with_checkpoints() -> None:
    messages = render_messages(
        plan(
            (checkpoint(1),), (turn(1, content="hi"), turn(2, content="hello")), ContextMode.FRESH
        ),
        "again",
    )
    assert messages == [
        ChatMessage("user", "hi"),
        ChatMessage("assistant", "hello"),
        ChatMessage("user", "again"),
    ]


def test_head_without_checkpoints_has_no_system_message() -> None:
    assert render_messages(plan(), "hello") == [ChatMessage("user", "hello")]


def test_a_system_turn_in_a_hand_built_plan_is_not_rendered() -> None:
    window = (turn(1, content="q"), turn(2, role=Role.SYSTEM, content="secret"), turn(3))
    messages = render_messages(plan(turns=window), "new")
    assert messages == [ChatMessage("user", "q\n\nturn 3\n\nnew")]
    assert message_sources(plan(turns=window)) == [MessageSource("user", (1, 3), True)]


def test_the_new_message_is_sent_as_written() -> None:
    assert render_messages(plan(), "  spaced \n")[-1] == ChatMessage("user", "  spaced \n")


# --- consecutive messages of one role are sent as one (issue 17) ----------------------


def test_questions_left_unanswered_go_with_the_next_message_in_order() -> None:
    # Two sends failed (3 and 4 have no answer), then "Which is cheaper?" is sent.
    cp = checkpoint(1, body=SPARSE)
    window = (
        turn(1, content="Plan a trip"),
        turn(2, content="Where to?"),
        turn(3, role=Role.USER, content="Japan"),
        turn(4, role=Role.USER, content="Or Korea"),
    )

    messages = render_messages(plan((cp,), window), "Which is cheaper?")

    assert messages == [
        ChatMessage("system", render_checkpoint_block([cp]) or ""),
        ChatMessage("user", "Plan a trip"),
        ChatMessage("assistant", "Where to?"),
        ChatMessage("user", "Japan\n\nOr Korea\n\nWhich is cheaper?"),
    ]
    assert message_sources(plan((cp,), window)) == [
        MessageSource("system"),
        MessageSource("user", (1,)),
        MessageSource("assistant", (2,)),
        MessageSource("user", (3, 4), new_message=True),
    ]
    assert [s.merged for s in message_sources(plan((cp,), window))] == [False, False, False, True]


def test_two_answers_in_a_row_are_one_assistant_message() -> None:
    # A Retry answered question 1 after question 2 had its answer.
    window = (
        turn(1, content="Will you answer?"),
        turn(2, role=Role.USER, content="Another question"),
        turn(3, role=Role.ASSISTANT, content="Second answer."),
        turn(4, role=Role.ASSISTANT, content="Late answer."),
    )

    assert render_messages(plan(turns=window), "Thanks") == [
        ChatMessage("user", "Will you answer?\n\nAnother question"),
        ChatMessage("assistant", "Second answer.\n\nLate answer."),
        ChatMessage("user", "Thanks"),
    ]
    assert message_sources(plan(turns=window)) == [
        MessageSource("user", (1, 2)),
        MessageSource("assistant", (3, 4)),
        MessageSource("user", (), new_message=True),
    ]


def test_an_empty_new_message_adds_nothing_to_the_unanswered_turn() -> None:
    # contextPreview of an empty composer after a failed send.
    window = (turn(1, content="Hello?"),)

    assert render_messages(plan(turns=window), "") == [ChatMessage("user", "Hello?")]
    assert message_sources(plan(turns=window)) == [MessageSource("user", (1,), new_message=True)]
    assert render_messages(plan(), "") == [ChatMessage("user", "")]


@st.composite
def windows(draw: st.DrawFn) -> tuple[ContextPlan, str]:
    """A hand-built plan of any roles (SYSTEM included) and texts (empty included)."""
    roles = draw(st.lists(st.sampled_from(list(Role)), max_size=20))
    text = st.text(alphabet="ab \n", max_size=6)
    window = tuple(turn(n, role=role, content=draw(text)) for n, role in enumerate(roles, start=1))
    checkpoints = draw(st.sampled_from([(), (checkpoint(1, body=SPARSE),)]))
    mode = draw(st.sampled_from(list(ContextMode)))
    return plan(checkpoints, window, mode), draw(text)


@given(windows())
def test_no_two_messages_in_a_row_have_one_role(drawn: tuple[ContextPlan, str]) -> None:
    messages = render_messages(*drawn)
    roles = [m.role for m in messages]
    assert all(a != b for a, b in pairwise(roles))
    assert roles[-1] == "user"
    assert [s.role for s in message_sources(drawn[0])] == roles


@given(windows())
def test_merging_keeps_every_turn_once_in_order_and_all_its_text(
    drawn: tuple[ContextPlan, str],
) -> None:
    window, new_message = drawn
    messages, sources = render_messages(window, new_message), message_sources(window)
    by_sequence = {t.sequence_number: t for t in window.turns}
    sent = [t.sequence_number for t in window.turns if t.role is not Role.SYSTEM]

    # Every turn the window sends is in exactly one message, in order …
    assert [n for s in sources for n in s.sequence_numbers] == sent
    # … the new message in the last one alone …
    assert [s.new_message for s in sources] == [False] * (len(sources) - 1) + [True]
    # … and each message is its texts, in order, joined by a blank line.
    for message, source in zip(messages, sources, strict=True):
        texts = [by_sequence[n].content for n in source.sequence_numbers]
        texts += [new_message] if source.new_message else []
        if source.role == "system":
            assert source.sequence_numbers == () and message.content.startswith("You are")
        else:
            assert message.content == MERGE_SEPARATOR.join(t for t in texts if t)
        assert source.merged == (len(texts) > 1)
