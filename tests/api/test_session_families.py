"""A conversation once in a listing: `sessions(branches: LATEST_PER_FAMILY)` and
`Space.sessions(...)` hold, of a family's branches, the most recently updated one
the caller may read under the listing's filters, with `branchCount`; pages never
split a family, and a page of 100 rows costs a fixed number of statements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from api.settings import Settings
from tests.accounts.world import World, accounts_app
from tests.support.ops import CREATE_SESSION, SEND
from tests.support.queries import count_statements

ROW = "id title branchCount"
SPACE_LIST = f"""query($s: ID!, $archived: Boolean) {{ space(id: $s) {{
  sessions(branches: LATEST_PER_FAMILY, archived: $archived) {{ edges {{ node {{ {ROW} }} }} }} }} }}"""
LIST = f"""query($first: Int, $after: String, $branches: SessionBranches!) {{
  sessions(first: $first, after: $after, branches: $branches) {{
    edges {{ node {{ {ROW} }} }} pageInfo {{ hasNextPage endCursor }} }} }}"""
FORK = """mutation($at: ID!, $title: String) { forkSession(input: {atTurnId: $at, title: $title})
  { session { id } errors { code } } }"""
UPDATE = """mutation($input: UpdateSessionInput!) { updateSession(input: $input)
  { errors { code } } }"""


async def _session(world: World, actor: str, title: str, space: str) -> str:
    data = await world.data(actor, CREATE_SESSION, input={"title": title, "spaceId": space})
    sid: str = data["createSession"]["session"]["id"]
    shared = await world.data(actor, UPDATE, input={"id": sid, "visibility": "SPACE"})
    assert shared["updateSession"]["errors"] == []
    return sid


async def _update(world: World, sid: str, **fields: Any) -> None:
    done = await world.data("owner", UPDATE, input={"id": sid, **fields})
    assert done["updateSession"]["errors"] == []


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    """In the owner's space "Trips" (viewer a member): the conversation "Plan"
    (shared) with branches "b1", "b2" (made private) and "b3" (archived, the
    last updated), the plain session "Solo", and the viewer's private "Mine"."""
    async with accounts_app(settings) as world:
        created = await world.data(
            "owner", 'mutation { createSpace(input: {name: "Trips"}) { space { id } } }'
        )
        space = world.ids["space"] = created["createSpace"]["space"]["id"]
        added = await world.data(
            "owner",
            'mutation($s: ID!) { addSpaceMember(input: {spaceId: $s, userName: "viewer", '
            "role: VIEWER}) { errors { code } } }",
            s=space,
        )
        assert added["addSpaceMember"]["errors"] == []
        plan = world.ids["Plan"] = await _session(world, "owner", "Plan", space)
        world.ids["Solo"] = await _session(world, "owner", "Solo", space)
        sent = await world.data("owner", SEND, input={"sessionId": plan, "content": "Where?"})
        assert sent["sendMessage"]["errors"] == []
        at = sent["sendMessage"]["assistantTurn"]["id"]
        for title in ("b1", "b2", "b3"):
            forked = await world.data("owner", FORK, at=at, title=title)
            assert forked["forkSession"]["errors"] == []
            world.ids[title] = forked["forkSession"]["session"]["id"]
        await _update(world, world.ids["b2"], visibility="PRIVATE")
        await _update(world, world.ids["b3"], archived=True)
        mine = await world.data("viewer", CREATE_SESSION, input={"title": "Mine"})
        world.ids["Mine"] = mine["createSession"]["session"]["id"]
        yield world


def _rows(world: World, *expected: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"id": world.ids[t], "title": t, "branchCount": n} for t, n in expected]


async def test_a_space_lists_each_conversation_once_as_its_latest_branch(world: World) -> None:
    space = world.ids["space"]
    owner = await world.data("owner", SPACE_LIST, s=space, archived=False)
    # b3 is archived: of the others, b2 was updated last; its family has 4 sessions.
    assert [e["node"] for e in owner["space"]["sessions"]["edges"]] == _rows(
        world, ("Solo", 1), ("b2", 4)
    )
    both = await world.data("owner", SPACE_LIST, s=space, archived=None)
    assert [e["node"] for e in both["space"]["sessions"]["edges"]] == _rows(
        world, ("Solo", 1), ("b3", 4)
    )
    archived = await world.data("owner", SPACE_LIST, s=space, archived=True)
    assert [e["node"] for e in archived["space"]["sessions"]["edges"]] == _rows(world, ("b3", 4))
    # The viewer reads neither b2 (private) nor the owner's count of it; "Mine" is
    # not in the space.
    viewer = await world.data("viewer", SPACE_LIST, s=space, archived=False)
    assert [e["node"] for e in viewer["space"]["sessions"]["edges"]] == _rows(
        world, ("Solo", 1), ("b1", 3)
    )
    theirs = await world.data("viewer", LIST, first=10, branches="LATEST_PER_FAMILY")
    assert [e["node"] for e in theirs["sessions"]["edges"]] == _rows(world, ("Mine", 1))


async def test_all_branches_stay_the_default(world: World) -> None:
    data = await world.data("owner", LIST, first=10, branches="ALL")
    titles = [e["node"]["title"] for e in data["sessions"]["edges"]]
    assert titles == ["Plan", "Solo", "b1", "b2"]
    assert {e["node"]["branchCount"] for e in data["sessions"]["edges"]} == {1, 4}


async def test_pages_never_split_a_family(world: World) -> None:
    # Plan is before Solo in the order, its latest branch after: one page of one
    # row at a time holds Solo, then b2, then nothing.
    seen: list[str] = []
    after = None
    for _ in range(3):
        page = await world.data("owner", LIST, first=1, after=after, branches="LATEST_PER_FAMILY")
        seen += [e["node"]["title"] for e in page["sessions"]["edges"]]
        after = page["sessions"]["pageInfo"]["endCursor"]
        if not page["sessions"]["pageInfo"]["hasNextPage"]:
            break
    assert seen == ["Solo", "b2"]


async def test_branch_counts_of_a_page_cost_one_statement(world: World) -> None:
    query = (
        "{ sessions(first: 100, branches: LATEST_PER_FAMILY) { edges { node { branchCount } } } }"
    )
    with count_statements() as few:
        await world.data("owner", query)
    space = world.ids["space"]
    for title in ("x", "y", "z"):
        await _session(world, "owner", title, space)
    with count_statements() as many:
        data = await world.data("owner", query)
    assert [e["node"]["branchCount"] for e in data["sessions"]["edges"]] == [1, 4, 1, 1, 1]
    assert len(few) == len(many), many
