"""Prompt layout (DESIGN §2): the exact messages a provider receives."""

from __future__ import annotations

from api.domain.context import ContextPlan
from api.domain.prompt import render_checkpoint_block, render_messages
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
        plan((checkpoint(1),), (turn(1, content="hi"),), mode=ContextMode.FRESH), "again"
    )
    assert messages == [ChatMessage("user", "hi"), ChatMessage("user", "again")]


def test_head_without_checkpoints_has_no_system_message() -> None:
    assert render_messages(plan(), "hello") == [ChatMessage("user", "hello")]


def test_a_system_turn_in_a_hand_built_plan_is_not_rendered() -> None:
    window = (turn(1, content="q"), turn(2, role=Role.SYSTEM, content="secret"), turn(3))
    messages = render_messages(plan(turns=window), "new")
    assert [m.content for m in messages] == ["q", "turn 3", "new"]
    assert [m.role for m in messages] == ["user", "user", "user"]


def test_the_new_message_is_sent_as_written() -> None:
    assert render_messages(plan(), "  spaced \n")[-1] == ChatMessage("user", "  spaced \n")
