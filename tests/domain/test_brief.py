"""The continuation brief of `space_state`: the head in full, the other
branches and what changed since, one line each."""

from __future__ import annotations

from datetime import timedelta

from api.domain.brief import CHANGED_LINES, SpaceState, render_state
from api.domain.types import CheckpointContent, Space
from tests.domain.builders import T0, checkpoint

SPACE = Space(id=10, name="Trips", description="", owner_id=1, created_at=T0, updated_at=T0)


def test_the_brief_holds_the_head_in_full_the_branches_and_what_changed_since() -> None:
    c1 = checkpoint(
        1,
        hash="a" * 64,
        body=CheckpointContent(
            title="Plan", decisions=("Fly", "Stay a week"), tasks=("Book",), entities=("Rome",)
        ),
    )
    c2 = checkpoint(2, parent=c1, hash="b" * 64, title="Booked")
    head = checkpoint(
        3,
        parent=c2,
        hash="c" * 64,
        body=CheckpointContent(
            title="Packed",
            objective="A week in Rome",
            summary="Flights and hotel are booked.",
            decisions=("fly!", "Take the train back"),
            open_questions=("Which museums?",),
            entities=("Rome",),
        ),
    )
    alt = checkpoint(4, parent=c1, hash="d" * 64, title="By car", branch_name="car")
    state = SpaceState(
        space=SPACE,
        branch="main",
        head=head,
        branches=(("car", alt), ("main", head)),
        since=c1,
        changed=(c2, head),
    )
    assert render_state(state) == "\n".join(
        [
            "Space 10 'Trips', branch main: head 3 ccccccc \"Packed\" (2024-05-01 12:03 UTC)",
            "Objective: A week in Rome",
            "Summary: Flights and hotel are booked.",
            "Decisions:",
            "- fly!",
            "- Take the train back",
            "Open questions:",
            "- Which museums?",
            "Entities:",
            "- Rome",
            "Other branches:",
            '- car → 4 ddddddd "By car"',
            'Since checkpoint 1 aaaaaaa "Plan", 2 checkpoint(s) on main:',
            '- 2 bbbbbbb "Booked"',
            '- 3 ccccccc "Packed"',
            "Decisions added: Take the train back",
            "Decisions gone: Stay a week",
            "Tasks gone: Book",
            "Open questions added: Which museums?",
        ]
    )


def test_since_a_time_lists_the_line_and_a_long_line_is_counted() -> None:
    line = [checkpoint(1, hash="0" * 64, title="Start")]
    for i in range(2, CHANGED_LINES + 4):
        line.append(checkpoint(i, parent=line[-1], hash=f"{i:02d}" * 32, title=f"Step {i}"))
    head = line[-1]
    state = SpaceState(
        space=SPACE,
        branch="main",
        head=head,
        branches=(("main", head),),
        since=T0,
        changed=tuple(line[1:]),
    )
    rendered = render_state(state).split("\n")
    assert rendered[1:4] == [
        f"Since 2024-05-01 12:00 UTC, {CHANGED_LINES + 2} checkpoint(s) on main:",
        "- … 2 earlier",
        '- 4 0404040 "Step 4"',
    ]
    assert rendered[-1] == f'- {head.id} {head.hash[:7]} "Step {head.id}"'
    assert len(rendered) == 3 + CHANGED_LINES
    nothing = SpaceState(SPACE, "main", head, (("main", head),), T0 + timedelta(days=1), ())
    assert render_state(nothing).split("\n")[-1] == (
        "Nothing changed on main since 2024-05-02 12:00 UTC."
    )


def test_a_space_with_no_checkpoint_yet_says_so() -> None:
    state = SpaceState(space=SPACE, branch="main", head=None, branches=(), since=None, changed=())
    assert render_state(state) == "Space 10 'Trips', branch main: no checkpoint yet."
