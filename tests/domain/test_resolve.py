"""``resolve``: the one function every caller gets its context from.

It composes the rules tested in test_context.py and adds one: the window
starts at a user turn (issue 7, finding 12), whatever trimmed it — the turn
or token budget, the mount's boundary, or an explicit baseSequence.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain.context import (
    Budget,
    ContextFacts,
    ContextOverride,
    ContextSource,
    ResolvedContext,
    build_plan,
    facts_wanted,
    resolve,
)
from api.domain.prompt import render_messages
from api.domain.types import ContextMode, MemoryScope, Mount, Role, Session, Turn
from tests.domain.builders import lineage, newest_first, session, turn

ROOMY = Budget(tokens=10_000, max_turns=100)
CHAIN = list(reversed(lineage(3)))  # tip first, as the store reads it


def words(text: str) -> int:
    return len(text.split())


def exchanges(count: int) -> list[Turn]:
    """``count`` question/answer pairs: odd sequence numbers are the user's."""
    return [turn(n) for n in range(1, 2 * count + 1)]


def resolved(
    current: Session,
    history: list[Turn],
    *,
    override: ContextOverride | None = None,
    budget: Budget = ROOMY,
) -> ResolvedContext:
    facts = ContextFacts(
        checkpoint=CHAIN[0],
        head=None,
        chain=tuple(CHAIN),
        written_before_head=0,
        recent=tuple(newest_first(history)[: budget.max_turns]),
    )
    return resolve(current, override, facts, budget=budget, count_tokens=words, new_message="next")


def mounted(last: int, base: int = 0) -> Session:
    return session(last=last, mount=Mount(checkpoint_id=CHAIN[0].id, base_sequence=base))


def test_a_window_trimmed_to_an_odd_number_of_turns_starts_at_the_question() -> None:
    # 24 exchanges and room for 5 turns: the newest 5 begin with an answer (44).
    context = resolved(mounted(48), exchanges(24), budget=Budget(10_000, max_turns=5))

    assert [t.sequence_number for t in context.plan.turns] == [45, 46, 47, 48]
    block = words(context.messages[0].content)  # the checkpoint block, then 10 tokens a turn
    assert context.plan.token_estimate == words("next") + block + 4 * 10
    assert [m.role for m in context.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_an_explicit_base_sequence_on_an_answer_starts_at_the_next_question() -> None:
    override = ContextOverride(checkpoint_id=CHAIN[0].id, base_sequence=3)
    context = resolved(session(last=8, space_id=10), exchanges(4), override=override)

    assert context.plan.mode is ContextMode.MOUNTED
    assert context.plan.boundary == 3
    assert [t.sequence_number for t in context.plan.turns] == [5, 6, 7, 8]


def test_a_window_of_answers_only_is_empty() -> None:
    answers = [turn(n, role=Role.ASSISTANT) for n in range(1, 4)]
    context = resolved(mounted(3), answers)

    assert context.plan.turns == ()
    assert context.plan.token_estimate == 1 + sum(
        words(m.content) for m in context.messages if m.role == "system"
    )


def test_facts_wanted_names_the_mount_or_the_head_never_both() -> None:
    on_mount = facts_wanted(mounted(4), None)
    elsewhere = facts_wanted(mounted(4), ContextOverride(space_id=11))
    fresh = facts_wanted(session(space_id=None, memory_scope=MemoryScope.LATEST_3), None)

    assert (on_mount.checkpoint_id, on_mount.head_of, on_mount.explicit) == (
        CHAIN[0].id,
        None,
        False,
    )
    assert (elsewhere.checkpoint_id, elsewhere.head_of, elsewhere.space_id) == (
        None,
        (11, "main"),
        11,
    )
    assert (fresh.checkpoint_id, fresh.head_of, fresh.depth) == (None, None, 3)


Drawn = tuple[list[Turn], int, Budget]


@st.composite
def histories(draw: st.DrawFn) -> Drawn:
    roles = draw(st.lists(st.sampled_from(list(Role)), max_size=30))
    history = [
        turn(n, role=role, tokens=draw(st.integers(0, 50))) for n, role in enumerate(roles, 1)
    ]
    base = draw(st.integers(0, len(history) + 1))
    budget = Budget(tokens=draw(st.integers(0, 400)), max_turns=draw(st.integers(0, 15)))
    return history, base, budget


@settings(max_examples=300, deadline=None)
@given(histories(), st.booleans())
def test_the_window_is_the_budgeted_window_from_its_first_user_turn(
    drawn: Drawn, explicit: bool
) -> None:
    history, base, budget = drawn
    last = len(history)
    if explicit:
        current = session(last=last)
        override = ContextOverride(checkpoint_id=CHAIN[0].id, base_sequence=base)
    else:
        current, override = mounted(last, base), None
    context = resolved(current, history, override=override, budget=budget)

    # The window the budget alone allows from what the store read (tested in
    # test_context.py) …
    source = ContextSource(ContextMode.MOUNTED, 10, CHAIN[0].id, 1, base)
    reserved = words("next") + words(context.messages[0].content)
    budgeted = build_plan(
        source,
        boundary=base,
        chain=CHAIN,
        recent_turns=newest_first(history)[: budget.max_turns],
        budget=budget,
        reserved_tokens=reserved,
    ).turns
    # … from its first user turn on: never a leading answer, nothing else lost.
    first_user = next((i for i, t in enumerate(budgeted) if t.role is Role.USER), len(budgeted))
    assert context.plan.turns == budgeted[first_user:]
    assert not context.plan.turns or context.plan.turns[0].role is Role.USER
    assert context.plan.token_estimate == reserved + sum(t.token_count for t in context.plan.turns)
    assert context.messages == render_messages(context.plan, "next")
    assert [m.role for m in context.messages[1:2]] == ["user"]
