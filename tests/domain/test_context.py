"""Context resolution (docs/architecture.md#context-modes): a table of cases, then the isolation invariants."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain.branching import branch_mount
from api.domain.context import (
    Budget,
    ContextOverride,
    ContextPlan,
    ContextSource,
    build_plan,
    choose_source,
    head_boundary,
)
from api.domain.prompt import render_messages
from api.domain.types import (
    BranchPoint,
    Checkpoint,
    ContextMode,
    MemoryScope,
    Mount,
    Role,
    Session,
    Turn,
)
from api.errors import ErrorCode, InputError
from tests.domain.builders import checkpoint, lineage, newest_first, session, turn

L1, L3 = MemoryScope.LATEST_1, MemoryScope.LATEST_3
ROOMY = Budget(tokens=10_000, max_turns=100)


def turns(last: int, **overrides: Role) -> list[Turn]:
    """Turns 1..last; ``overrides`` maps "t<n>" to a role, e.g. t3=Role.SYSTEM."""
    return [turn(n, role=overrides.get(f"t{n}")) for n in range(1, last + 1)]


@dataclass
class Case:
    id: str
    session: Session
    history: list[Turn]
    checkpoints: list[Checkpoint] = field(default_factory=list)  # every checkpoint known
    head: Checkpoint | None = None
    turns_before_head: int = 0
    override: ContextOverride | None = None
    budget: Budget = ROOMY
    reserved: int = 0
    # expected
    mode: ContextMode | None = None
    space_id: int | None = None
    boundary: int = 0
    chain: tuple[int, ...] = ()  # checkpoint ids, oldest first
    window: tuple[int, ...] = ()  # sequence numbers
    error: tuple[ErrorCode, str] | None = None


def resolve(case: Case) -> ContextPlan:
    """What a caller does: choose, read what the choice names, build."""
    by_id = {c.id: c for c in case.checkpoints}
    if case.override and case.override.checkpoint_id is not None:
        named = by_id.get(case.override.checkpoint_id)
    elif case.session.mount is not None:
        named = by_id.get(case.session.mount.checkpoint_id)
    else:
        named = None
    source = choose_source(
        case.session, override=case.override, override_checkpoint=named, head=case.head
    )
    if source.boundary_from_head:
        assert case.head is not None
        boundary = head_boundary(case.session, case.head, case.turns_before_head)
    else:
        boundary = source.after_sequence
    chain: list[Checkpoint] = []
    tip = by_id.get(source.tip_checkpoint_id) if source.tip_checkpoint_id else None
    while tip is not None:
        chain.append(tip)
        tip = by_id.get(tip.parent_id) if tip.parent_id else None
    # All the turns, not only those after the boundary: the plan must cut them itself.
    return build_plan(
        source,
        boundary=boundary,
        chain=chain,
        recent_turns=newest_first(case.history),
        budget=case.budget,
        reserved_tokens=case.reserved,
    )


three = lineage(3)  # 1 <- 2 <- 3
four = lineage(4)  # 1 <- 2 <- 3 <- 4
own_head = checkpoint(3, parent=three[1], source_session_id=1, base_sequence=4)
others_head = checkpoint(3, parent=three[1], source_session_id=2, base_sequence=40)
foreign = checkpoint(50, space_id=99)

CASES = [
    Case(
        "fresh keeps the session's own turns",
        session(space_id=None, last=6),
        turns(6),
        mode=ContextMode.FRESH,
        space_id=None,
        window=(1, 2, 3, 4, 5, 6),
    ),
    Case(
        "fresh ignores a head and a memory scope",
        session(space_id=None, memory_scope=L3, last=2),
        turns(2),
        head=three[2],
        checkpoints=three,
        mode=ContextMode.FRESH,
        window=(1, 2),
    ),
    Case(
        "head without a checkpoint on the branch sees every turn",
        session(last=4),
        turns(4),
        mode=ContextMode.HEAD,
        space_id=10,
        window=(1, 2, 3, 4),
    ),
    Case(
        "head saved from this session: its own boundary",
        session(last=8),
        turns(8),
        checkpoints=[*three[:2], own_head],
        head=own_head,
        turns_before_head=99,  # must be ignored: the checkpoint knows its boundary
        mode=ContextMode.HEAD,
        space_id=10,
        boundary=4,
        chain=(3,),
        window=(5, 6, 7, 8),
    ),
    Case(
        "head saved from another session: the turns written before it are cut",
        session(last=8),
        turns(8),
        checkpoints=[*three[:2], others_head],
        head=others_head,
        turns_before_head=6,
        mode=ContextMode.HEAD,
        space_id=10,
        boundary=6,
        chain=(3,),
        window=(7, 8),
    ),
    Case(
        "head with LATEST_3 takes the head and two ancestors, oldest first",
        session(memory_scope=L3, last=2),
        turns(2),
        checkpoints=four,
        head=four[3],
        turns_before_head=0,
        mode=ContextMode.HEAD,
        space_id=10,
        chain=(2, 3, 4),
        window=(1, 2),
    ),
    Case(
        "LATEST_3 on a short chain takes what there is",
        session(memory_scope=L3),
        [],
        checkpoints=four[:2],
        head=four[1],
        mode=ContextMode.HEAD,
        space_id=10,
        chain=(1, 2),
    ),
    Case(
        "an override scope wins over the session's",
        session(memory_scope=L1),
        [],
        checkpoints=four,
        head=four[3],
        override=ContextOverride(memory_scope=L3),
        mode=ContextMode.HEAD,
        space_id=10,
        chain=(2, 3, 4),
    ),
    Case(
        "a session mount: the mounted checkpoint, turns after the mount only",
        session(mount=Mount(checkpoint_id=2, base_sequence=5), last=9),
        turns(9),
        checkpoints=three,
        head=three[2],
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=5,
        chain=(2,),
        window=(6, 7, 8, 9),
    ),
    Case(
        "a session mount with LATEST_3 walks back from the mounted checkpoint",
        session(mount=Mount(checkpoint_id=3, base_sequence=2), memory_scope=L3, last=3),
        turns(3),
        checkpoints=four,
        head=four[3],
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=2,
        chain=(1, 2, 3),
        window=(3,),
    ),
    Case(
        "an explicit checkpoint with baseSequence",
        session(last=8),
        turns(8),
        checkpoints=three,
        head=three[2],
        override=ContextOverride(checkpoint_id=1, base_sequence=3),
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=3,
        chain=(1,),
        window=(4, 5, 6, 7, 8),
    ),
    Case(
        "an explicit checkpoint without baseSequence never leaks earlier turns",
        session(last=8),
        turns(8),
        checkpoints=three,
        override=ContextOverride(checkpoint_id=2),
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=8,
        chain=(2,),
        window=(),
    ),
    Case(
        "an explicit checkpoint wins over the session's mount",
        session(mount=Mount(checkpoint_id=1, base_sequence=1), last=4),
        turns(4),
        checkpoints=three,
        override=ContextOverride(checkpoint_id=3, base_sequence=2),
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=2,
        chain=(3,),
        window=(3, 4),
    ),
    Case(
        "an explicit checkpoint on a session without a space",
        session(space_id=None, last=2),
        turns(2),
        checkpoints=three,
        override=ContextOverride(checkpoint_id=2, base_sequence=0),
        mode=ContextMode.MOUNTED,
        space_id=10,
        boundary=0,
        chain=(2,),
        window=(1, 2),
    ),
    Case(
        "an explicit space on a fresh session is HEAD there",
        session(space_id=None, last=2),
        turns(2),
        checkpoints=[*three[:2], others_head],
        head=others_head,
        turns_before_head=1,
        override=ContextOverride(space_id=10),
        mode=ContextMode.HEAD,
        space_id=10,
        boundary=1,
        chain=(3,),
        window=(2,),
    ),
    Case(
        "an explicit other space sets the session's mount aside",
        session(mount=Mount(checkpoint_id=1, base_sequence=3), last=4),
        turns(4),
        checkpoints=lineage(2, first_id=20, space_id=11),
        head=lineage(2, first_id=20, space_id=11)[1],
        turns_before_head=0,
        override=ContextOverride(space_id=11),
        mode=ContextMode.HEAD,
        space_id=11,
        chain=(21,),
        window=(1, 2, 3, 4),
    ),
    Case(
        "a checkpoint of another space is refused",
        session(last=2),
        turns(2),
        checkpoints=[*three, foreign],
        override=ContextOverride(checkpoint_id=50, base_sequence=0),
        error=(ErrorCode.WRONG_SPACE, "context.checkpointId"),
    ),
    Case(
        "a checkpoint of a space other than the explicit one is refused",
        session(space_id=None),
        [],
        checkpoints=[foreign],
        override=ContextOverride(space_id=10, checkpoint_id=50),
        error=(ErrorCode.WRONG_SPACE, "context.checkpointId"),
    ),
    Case(
        "a negative baseSequence is refused",
        session(last=2),
        turns(2),
        checkpoints=three,
        override=ContextOverride(checkpoint_id=1, base_sequence=-1),
        error=(ErrorCode.INVALID, "context.baseSequence"),
    ),
    Case(
        "an explicit checkpoint that was not found",
        session(last=2),
        turns(2),
        checkpoints=three,
        override=ContextOverride(checkpoint_id=77),
        error=(ErrorCode.NOT_FOUND, "checkpointId"),
    ),
    Case(
        "the token budget keeps the most recent turns",
        session(space_id=None, last=6),
        turns(6),
        budget=Budget(tokens=35, max_turns=100),
        mode=ContextMode.FRESH,
        window=(4, 5, 6),
    ),
    Case(
        "reserved tokens (checkpoint block, new message) shrink the window",
        session(space_id=None, last=6),
        turns(6),
        budget=Budget(tokens=35, max_turns=100),
        reserved=10,
        mode=ContextMode.FRESH,
        window=(5, 6),
    ),
    Case(
        "a budget filled exactly still takes the turn",
        session(space_id=None, last=6),
        turns(6),
        budget=Budget(tokens=30, max_turns=100),
        mode=ContextMode.FRESH,
        window=(4, 5, 6),
    ),
    Case(
        "max_turns caps the window",
        session(space_id=None, last=6),
        turns(6),
        budget=Budget(tokens=10_000, max_turns=2),
        mode=ContextMode.FRESH,
        window=(5, 6),
    ),
    Case(
        "a newest turn larger than the budget empties the window; older ones stay out",
        session(space_id=None, last=3),
        [turn(1), turn(2), turn(3, tokens=500)],
        budget=Budget(tokens=100, max_turns=100),
        mode=ContextMode.FRESH,
        window=(),
    ),
    Case(
        "system turns are skipped",
        session(space_id=None, last=6),
        turns(6, t3=Role.SYSTEM, t5=Role.SYSTEM),
        mode=ContextMode.FRESH,
        window=(1, 2, 4, 6),
    ),
    Case(
        "system turns cost nothing and do not count as turns",
        session(space_id=None, last=4),
        [turn(1), turn(2), turn(3, role=Role.SYSTEM, tokens=5000), turn(4)],
        budget=Budget(tokens=30, max_turns=3),
        mode=ContextMode.FRESH,
        window=(1, 2, 4),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_context_resolution(case: Case) -> None:
    if case.error is not None:
        with pytest.raises(InputError) as caught:
            resolve(case)
        assert (caught.value.code, caught.value.field) == case.error
        return
    plan = resolve(case)
    assert plan.mode is case.mode
    assert plan.space_id == case.space_id
    assert plan.boundary == case.boundary
    assert tuple(c.id for c in plan.checkpoints) == case.chain
    assert tuple(t.sequence_number for t in plan.turns) == case.window
    assert plan.token_estimate == case.reserved + sum(t.token_count for t in plan.turns)


def test_head_source_defers_its_boundary_to_the_head() -> None:
    source = choose_source(session(last=5), head=three[2])
    assert source == ContextSource(
        ContextMode.HEAD, 10, 3, 1, after_sequence=0, boundary_from_head=True
    )


def test_build_plan_refuses_turns_that_are_not_newest_first() -> None:
    with pytest.raises(ValueError, match="newest first"):
        build_plan(
            ContextSource(ContextMode.FRESH, None, None, 0, 0),
            boundary=0,
            chain=[],
            recent_turns=[turn(1), turn(2)],
            budget=ROOMY,
        )


def test_plan_tip_is_the_newest_checkpoint() -> None:
    case = Case("", session(memory_scope=L3), [], checkpoints=four, head=four[3])
    assert resolve(case).tip == four[3]
    assert resolve(Case("", session(space_id=None), [])).tip is None


# --- Isolation invariants, for any history -----------------------------------------


# history, boundary, budget, reserved tokens, chain (tip first), depth
Drawn = tuple[list[Turn], int, Budget, int, list[Checkpoint], int]


@st.composite
def histories(draw: st.DrawFn) -> Drawn:
    roles = draw(st.lists(st.sampled_from(list(Role)), max_size=30))
    # Markers are unique and none is a substring of another.
    history = [
        turn(n, role=role, content=f"<t{n:03d}>", tokens=draw(st.integers(0, 50)))
        for n, role in enumerate(roles, start=1)
    ]
    boundary = draw(st.integers(0, len(history) + 2))
    budget = Budget(tokens=draw(st.integers(0, 400)), max_turns=draw(st.integers(0, 15)))
    reserved = draw(st.integers(0, 60))
    chain_tip_first = list(reversed(lineage(draw(st.integers(0, 5)))))
    depth = draw(st.sampled_from([0, 1, 3]))
    return history, boundary, budget, reserved, chain_tip_first, depth


def plan_for(
    history: list[Turn],
    boundary: int,
    budget: Budget,
    reserved: int,
    chain: list[Checkpoint],
    depth: int,
    *,
    only_after_boundary: bool = False,
) -> ContextPlan:
    mode = ContextMode.FRESH if depth == 0 else ContextMode.MOUNTED
    source = ContextSource(mode, None, chain[0].id if chain else None, depth, boundary)
    given = [t for t in history if t.sequence_number > boundary] if only_after_boundary else history
    return build_plan(
        source,
        boundary=boundary,
        chain=chain,
        recent_turns=newest_first(given),
        budget=budget,
        reserved_tokens=reserved,
    )


def eligible(history: list[Turn], boundary: int) -> list[Turn]:
    return [t for t in history if t.sequence_number > boundary and t.role is not Role.SYSTEM]


ISOLATION = settings(max_examples=200, deadline=None)


@ISOLATION
@given(histories())
def test_no_turn_at_or_before_the_boundary_is_seen(
    drawn: Drawn,
) -> None:
    boundary = drawn[1]
    plan = plan_for(*drawn)
    assert all(t.sequence_number > boundary for t in plan.turns)
    assert all(t.role is not Role.SYSTEM for t in plan.turns)


@ISOLATION
@given(histories())
def test_window_is_the_newest_eligible_turns_in_order(
    drawn: Drawn,
) -> None:
    history, boundary, *_ = drawn
    plan = plan_for(*drawn)
    candidates = eligible(history, boundary)
    k = len(plan.turns)
    assert list(plan.turns) == candidates[len(candidates) - k :]


@ISOLATION
@given(histories())
def test_window_respects_the_budget_and_is_maximal(
    drawn: Drawn,
) -> None:
    history, boundary, budget, reserved, *_ = drawn
    plan = plan_for(*drawn)
    spent = reserved + sum(t.token_count for t in plan.turns)
    k = len(plan.turns)
    assert k <= budget.max_turns
    assert k == 0 or spent <= budget.tokens
    assert plan.token_estimate == spent
    candidates = eligible(history, boundary)
    if k < len(candidates):
        next_older = candidates[len(candidates) - k - 1]
        assert k + 1 > budget.max_turns or spent + next_older.token_count > budget.tokens


@ISOLATION
@given(histories())
def test_plan_does_not_depend_on_turns_before_the_boundary_being_passed(
    drawn: Drawn,
) -> None:
    assert plan_for(*drawn) == plan_for(*drawn, only_after_boundary=True)


@ISOLATION
@given(histories())
def test_checkpoints_are_the_first_depth_of_the_chain_oldest_first(
    drawn: Drawn,
) -> None:
    *_, chain, depth = drawn
    plan = plan_for(*drawn)
    assert plan.checkpoints == tuple(reversed(chain[:depth]))


@ISOLATION
@given(histories(), st.text(max_size=20))
def test_rendering_holds_exactly_the_window_and_the_new_message(
    drawn: Drawn, new_message: str
) -> None:
    history, *_ = drawn
    plan = plan_for(*drawn)
    messages = render_messages(plan, new_message)
    has_system = plan.mode is not ContextMode.FRESH and bool(plan.checkpoints)
    assert [m.role for m in messages[:1]].count("system") == int(has_system)
    conversation = messages[1:] if has_system else messages
    # One message per turn, in order, then the new message; a run of one role
    # is one message, its texts joined by a blank line (an empty one adds nothing).
    pieces = [("user" if t.role is Role.USER else "assistant", t.content) for t in plan.turns]
    expected: list[tuple[str, list[str]]] = []
    for role, content in [*pieces, ("user", new_message)]:
        if expected and expected[-1][0] == role:
            expected[-1][1].append(content)
        else:
            expected.append((role, [content]))
    assert [(m.role, m.content) for m in conversation] == [
        (role, "\n\n".join(c for c in contents if c)) for role, contents in expected
    ]
    shown = {t.sequence_number for t in plan.turns}
    everything = "\n".join(m.content for m in messages)
    for excluded in (t for t in history if t.sequence_number not in shown):
        assert excluded.content not in everything


# --- A conversation branch (issue 21 §1) ---------------------------------------------
#
# The origin (session 1) has 6 turns; the branch (session 2) holds copies of its
# turns 1..t with their creation times, then turns of its own up to 8. The
# branch keeps the origin's mode; it must see exactly its own line after the
# boundary: FRESH all of it, HEAD (a head saved from the origin at base 4) and
# MOUNTED (the origin's mount at base 4) the turns after min(4, t).

ORIGIN_BASE = 4
from_origin = checkpoint(3, parent=three[1], source_session_id=1, base_sequence=ORIGIN_BASE)


def branch_line(t: int, last: int = 8) -> list[Turn]:
    """The branch's turns: copies (ids of the origin's) then its own (other ids)."""
    copies = [turn(n) for n in range(1, t + 1)]
    own = [replace(turn(n, session_id=2), id=2000 + n) for n in range(t + 1, last + 1)]
    return copies + own


def branch_session(t: int, *, space_id: int | None, mount: Mount | None) -> Session:
    return session(
        id=2,
        space_id=space_id,
        mount=branch_mount(mount, t),
        last=8,
        branched_from=BranchPoint(1, t),
    )


BRANCH_CASES = [
    # (id, mode, t, expected boundary)
    ("fresh, branched at the start", ContextMode.FRESH, 0, 0),
    ("fresh, branched after 5", ContextMode.FRESH, 5, 0),
    ("head, branch point before the boundary", ContextMode.HEAD, 2, 2),
    ("head, branch point after the boundary", ContextMode.HEAD, 5, ORIGIN_BASE),
    ("mounted, branch point before the boundary", ContextMode.MOUNTED, 2, 2),
    ("mounted, branch point after the boundary", ContextMode.MOUNTED, 5, ORIGIN_BASE),
]


@pytest.mark.parametrize(
    ("mode", "t", "boundary"), [c[1:] for c in BRANCH_CASES], ids=[c[0] for c in BRANCH_CASES]
)
def test_a_branch_sees_exactly_its_own_line_after_the_boundary(
    mode: ContextMode, t: int, boundary: int
) -> None:
    history = branch_line(t)
    space_id = None if mode is ContextMode.FRESH else 10
    origin_mount = Mount(3, ORIGIN_BASE) if mode is ContextMode.MOUNTED else None
    case = Case(
        "",
        branch_session(t, space_id=space_id, mount=origin_mount),
        history,
        checkpoints=[*three[:2], from_origin],
        head=from_origin if mode is ContextMode.HEAD else None,
        # Not needed: the head names the origin, whose boundary it recorded.
        turns_before_head=0,
    )
    plan = resolve(case)
    assert plan.mode is mode
    assert plan.boundary == boundary
    assert [x.id for x in plan.turns] == [x.id for x in history if x.sequence_number > boundary]


def test_a_head_from_elsewhere_counts_the_branchs_turns_written_before_it() -> None:
    """A head saved from another session: the store's count (copies at their
    original times), as for any session on the branch."""
    elsewhere = checkpoint(3, parent=three[1], source_session_id=9, base_sequence=40)
    case = Case(
        "",
        branch_session(5, space_id=10, mount=None),
        branch_line(5),
        checkpoints=[*three[:2], elsewhere],
        head=elsewhere,
        turns_before_head=3,
    )
    assert resolve(case).boundary == 3


@ISOLATION
@given(
    st.integers(0, 10),
    st.integers(0, 10),
    st.integers(0, 6),
    st.sampled_from([ContextMode.HEAD, ContextMode.MOUNTED]),
)
def test_a_branch_boundary_is_the_origin_boundary_or_the_branch_point(
    base: int, t: int, own: int, mode: ContextMode
) -> None:
    """For any origin boundary and branch point, the branch sees exactly its
    turns after min(base, t): copies the origin saw, and all of its own."""
    saved = checkpoint(3, parent=three[1], source_session_id=1, base_sequence=base)
    last = t + own
    history = branch_line(t, last)
    branch = session(
        id=2,
        mount=branch_mount(Mount(3, base) if mode is ContextMode.MOUNTED else None, t),
        last=last,
        branched_from=BranchPoint(1, t),
    )
    case = Case(
        "",
        branch,
        history,
        checkpoints=[*three[:2], saved],
        head=saved if mode is ContextMode.HEAD else None,
    )
    plan = resolve(case)
    assert plan.boundary == min(base, t)
    assert [x.sequence_number for x in plan.turns] == list(range(min(base, t) + 1, last + 1))
