"""Conversation branches (issue 21 §1): alternatives at a position, against an
oracle that writes every session's line out turn by turn, and a branch's mount."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain.branching import Member, alternatives_at, branch_mount, branch_points, owner_at
from api.domain.types import Mount
from tests.domain.builders import T0


@st.composite
def families(draw: st.DrawFn) -> list[Member]:
    """A root, then branches of any earlier member after any of its turns, each
    with a few turns of its own; created in order."""
    members = [Member(1, None, None, draw(st.integers(0, 6)), T0)]
    for i in range(2, draw(st.integers(1, 9)) + 1):
        parent = draw(st.sampled_from(members))
        after = draw(st.integers(0, parent.last_sequence))
        own = draw(st.integers(0, 4))
        members.append(Member(i, parent.id, after, after + own, T0 + timedelta(seconds=i)))
    return members


def lines(members: list[Member]) -> dict[int, list[tuple[int, int]]]:
    """Each session's turns as (the session that wrote it, position): copies
    carry their original's identity."""
    written: dict[int, list[tuple[int, int]]] = {}
    for m in members:  # parents come first
        inherited = written[m.branched_from][: m.branched_after] if m.branched_from else []
        start = len(inherited) + 1
        written[m.id] = inherited + [(m.id, p) for p in range(start, m.last_sequence + 1)]
    return written


FAMILIES = settings(max_examples=300, deadline=None)


@FAMILIES
@given(families(), st.data())
def test_alternatives_are_the_distinct_turns_after_the_same_line(
    members: list[Member], data: st.DataObject
) -> None:
    written = lines(members)
    me = data.draw(st.sampled_from(members))
    position = data.draw(st.integers(1, 12))
    found = alternatives_at(members, me.id, position)
    mine = written[me.id]
    if len(mine) < position:
        assert found is None
        return
    assert found is not None
    prefix = mine[: position - 1]
    expected = {
        line[position - 1][0]
        for line in written.values()
        if len(line) >= position and line[: position - 1] == prefix
    }
    assert set(found.sessions) == expected
    assert list(found.sessions) == sorted(expected)  # created in id order here
    assert found.sessions[found.index] == mine[position - 1][0]


@FAMILIES
@given(families(), st.data())
def test_every_session_on_the_line_shares_the_position_with_exactly_one(
    members: list[Member], data: st.DataObject
) -> None:
    family = {m.id: m for m in members}
    me = data.draw(st.sampled_from(members))
    position = data.draw(st.integers(1, 8))
    found = alternatives_at(members, me.id, position)
    if found is None:
        return
    line = owner_at(family, me.id, position - 1)
    for m in members:
        if m.last_sequence >= position and owner_at(family, m.id, position - 1) == line:
            assert sum(owner_at(family, m.id, position) == a for a in found.sessions) == 1


@FAMILIES
@given(families())
def test_branch_points_are_every_position_with_more_than_one(members: list[Member]) -> None:
    for me in members:
        expected = [
            p
            for p in range(1, me.last_sequence + 1)
            if len(alternatives_at(members, me.id, p).sessions) > 1  # type: ignore[union-attr]
        ]
        assert [a.position for a in branch_points(members, me.id)] == expected


def test_a_regenerated_reply_and_an_edited_message() -> None:
    """1: q1 a1 q2 a2; 2 regenerates a2 (after 3); 3 edits q2 (after 2); 4
    regenerates 2's reply (after 3)."""
    members = [
        Member(1, None, None, 4, T0),
        Member(2, 1, 3, 4, T0 + timedelta(seconds=1)),
        Member(3, 1, 2, 4, T0 + timedelta(seconds=2)),
        Member(4, 2, 3, 4, T0 + timedelta(seconds=3)),
    ]
    at = {(s, p): alternatives_at(members, s, p) for s in (1, 2, 3, 4) for p in (3, 4)}
    assert at[(4, 4)] is not None and (at[(4, 4)].sessions, at[(4, 4)].index) == ((1, 2, 4), 2)
    assert at[(1, 4)] is not None and at[(1, 4)].index == 0
    assert at[(3, 3)] is not None and (at[(3, 3)].sessions, at[(3, 3)].index) == ((1, 3), 1)
    # 2 and 4 hold 1's q2: at 3 they show 1's turn.
    assert at[(2, 3)] is not None and (at[(2, 3)].sessions, at[(2, 3)].index) == ((1, 3), 0)
    assert at[(3, 4)] is not None and at[(3, 4)].sessions == (3,)
    assert alternatives_at(members, 1, 5) is None
    assert [(a.position, a.index) for a in branch_points(members, 4)] == [(3, 0), (4, 2)]


def test_a_deleted_origin_leaves_its_branch_on_its_own() -> None:
    members = [Member(1, None, None, 4, T0), Member(3, 2, 2, 4, T0 + timedelta(seconds=2))]
    found = alternatives_at(members, 3, 2)
    assert found is not None and found.sessions == (3,)


def test_a_branch_mount_is_based_no_later_than_the_branch_point() -> None:
    assert branch_mount(None, 3) is None
    assert branch_mount(Mount(7, 4), 6) == Mount(7, 4)
    assert branch_mount(Mount(7, 4), 2) == Mount(7, 2)
    assert branch_mount(Mount(7, 4), 4) == Mount(7, 4)
