"""Organising sessions (issue 21 §3): pin, archive and tags through updateSession,
the filters of `sessions(...)` and `Space.sessions(...)`, their order and pages,
bad tags, a viewer refused, and the tags read in one statement for a listing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from api.settings import Settings
from tests.accounts.world import World, accounts_app
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, create_space, send
from tests.support.queries import count_statements

ERR = "errors { code message field }"
UPDATE = f"""mutation($input: UpdateSessionInput!) {{ updateSession(input: $input) {{
  session {{ id title pinned archived tags pinnedAt archivedAt }} {ERR} }} }}"""
LIST = """query($archived: Boolean, $pinned: Boolean, $tag: String, $first: Int, $after: String) {
  sessions(archived: $archived, pinned: $pinned, tag: $tag, first: $first, after: $after) {
    edges { node { title } } pageInfo { hasNextPage endCursor } } }"""
LIST_DEFAULT = "{ sessions { edges { node { title } } } }"


async def _update(gql: GraphQLClient, sid: str, **fields: Any) -> dict[str, Any]:
    data = await gql(UPDATE, input={"id": sid, **fields})
    payload: dict[str, Any] = data["updateSession"]
    return payload


async def _titles(gql: GraphQLClient, **variables: Any) -> list[str]:
    variables = {"archived": False, **variables}
    data = await gql(LIST, **variables)
    return [e["node"]["title"] for e in data["sessions"]["edges"]]


async def _sessions(gql: GraphQLClient, *titles: str) -> dict[str, str]:
    return {t: (await create_session(gql, title=t))["id"] for t in titles}


async def test_pin_archive_and_tags_are_set_and_read_back(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="Lisbon"))["id"]
    fresh = await _update(gql, sid, title="Lisbon")
    assert {k: fresh["session"][k] for k in ("pinned", "archived", "tags", "pinnedAt")} == {
        "pinned": False,
        "archived": False,
        "tags": [],
        "pinnedAt": None,
    }

    done = await _update(
        gql, sid, pinned=True, archived=True, tags=["  Travel  plans ", "food", "TRAVEL PLANS"]
    )
    assert done["errors"] == []
    session = done["session"]
    assert (session["pinned"], session["archived"], session["tags"]) == (
        True,
        True,
        ["Travel plans", "food"],
    )
    assert session["pinnedAt"] is not None and session["archivedAt"] is not None

    # Pinning a pinned session keeps when it was pinned; omitted fields stay.
    again = await _update(gql, sid, pinned=True)
    assert again["session"]["pinnedAt"] == session["pinnedAt"]
    assert again["session"]["tags"] == ["Travel plans", "food"]
    assert again["session"]["archived"] is True

    undone = await _update(gql, sid, pinned=False, archived=False, tags=[])
    assert {k: undone["session"][k] for k in ("pinned", "archived", "tags", "archivedAt")} == {
        "pinned": False,
        "archived": False,
        "tags": [],
        "archivedAt": None,
    }


async def test_pinned_sessions_come_first_most_recently_pinned_first(gql: GraphQLClient) -> None:
    ids = await _sessions(gql, "a", "b", "c", "d", "e")
    await _update(gql, ids["d"], pinned=True)
    await _update(gql, ids["b"], pinned=True)
    assert await _titles(gql) == ["b", "d", "a", "c", "e"]
    assert await _titles(gql, pinned=True) == ["b", "d"]
    assert await _titles(gql, pinned=False) == ["a", "c", "e"]
    await _update(gql, ids["d"], pinned=False)
    await _update(gql, ids["d"], pinned=True)
    assert await _titles(gql) == ["d", "b", "a", "c", "e"]


async def test_pages_follow_the_pinned_first_order(gql: GraphQLClient) -> None:
    ids = await _sessions(gql, "a", "b", "c", "d", "e")
    await _update(gql, ids["e"], pinned=True)
    await _update(gql, ids["c"], pinned=True)
    seen: list[list[str]] = []
    after = None
    while True:
        data = (await gql(LIST, archived=False, first=2, after=after))["sessions"]
        seen.append([e["node"]["title"] for e in data["edges"]])
        if not data["pageInfo"]["hasNextPage"]:
            break
        after = data["pageInfo"]["endCursor"]
    assert seen == [["c", "e"], ["a", "b"], ["d"]]


async def test_archived_sessions_are_hidden_unless_asked_for(gql: GraphQLClient) -> None:
    ids = await _sessions(gql, "kept", "old", "older")
    await _update(gql, ids["old"], archived=True)
    await _update(gql, ids["older"], archived=True, pinned=True)
    # The default hides them: existing callers see what is not archived.
    data = await gql(LIST_DEFAULT)
    assert [e["node"]["title"] for e in data["sessions"]["edges"]] == ["kept"]
    assert await _titles(gql, archived=True) == ["older", "old"]
    assert await _titles(gql, archived=None) == ["older", "kept", "old"]
    # Still readable by id.
    found = await gql("query($id: ID!) { session(id: $id) { title archived } }", id=ids["old"])
    assert found["session"] == {"title": "old", "archived": True}


async def test_the_tag_filter_compares_as_tags_are_compared(gql: GraphQLClient) -> None:
    ids = await _sessions(gql, "a", "b", "c")
    await _update(gql, ids["a"], tags=["Work", "Lisbon"])
    await _update(gql, ids["b"], tags=["work"])
    await _update(gql, ids["c"], tags=["home"], archived=True)
    assert await _titles(gql, tag="  WORK ") == ["a", "b"]
    assert await _titles(gql, tag="lisbon") == ["a"]
    assert await _titles(gql, tag="home") == []
    assert await _titles(gql, tag="home", archived=True) == ["c"]
    assert await _titles(gql, tag="nothing") == []


async def test_a_space_lists_its_sessions_with_the_same_filters(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    first = (await create_session(gql, spaceId=space, title="one"))["id"]
    second = (await create_session(gql, spaceId=space, title="two"))["id"]
    third = (await create_session(gql, spaceId=space, title="three"))["id"]
    await _update(gql, third, pinned=True, tags=["x"])
    await _update(gql, first, archived=True, tags=["x"])
    query = """query($id: ID!, $a: Boolean, $t: String) { space(id: $id) {
      all: sessions { edges { node { title } } }
      some: sessions(archived: $a, tag: $t) { edges { node { title } } } } }"""
    data = (await gql(query, id=space, a=None, t="X"))["space"]
    assert [e["node"]["title"] for e in data["all"]["edges"]] == ["three", "two"]
    assert [e["node"]["title"] for e in data["some"]["edges"]] == ["three", "one"]
    unattached = await gql("{ sessions(unattached: true) { edges { node { id } } } }")
    assert unattached["sessions"]["edges"] == []
    assert second


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["  "], "A tag cannot be empty."),
        (["x" * 41], f'The tag "{"x" * 40}…" is 41 characters; the limit is 40.'),
        (
            ["bell\x07"],
            "A tag contains characters that are not valid text (control characters, "
            "NUL or a lone surrogate).",
        ),
        ([f"t{i}" for i in range(21)], "A session has at most 20 tags; 21 were given."),
    ],
)
async def test_bad_tags_are_refused_and_nothing_is_written(
    gql: GraphQLClient, tags: list[str], message: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    await _update(gql, sid, tags=["kept"])
    refused = await _update(gql, sid, tags=tags, pinned=True, title="changed")
    assert refused == {
        "session": None,
        "errors": [{"code": "INVALID", "message": message, "field": "tags"}],
    }
    found = await gql("query($id: ID!) { session(id: $id) { title pinned tags } }", id=sid)
    assert found["session"] == {"title": "t", "pinned": False, "tags": ["kept"]}


async def test_twenty_tags_and_forty_characters_are_allowed(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    tags = [f"t{i}" for i in range(19)] + ["y" * 40, "T0"]  # "T0" is "t0" again
    done = await _update(gql, sid, tags=tags)
    assert done["errors"] == []
    assert done["session"]["tags"] == tags[:20]


async def test_archived_sessions_are_still_searched_and_exported(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="Archived trip"))["id"]
    sent = await send(gql, sid, "Which zebrafinch colony first?")
    await _update(gql, sid, archived=True)
    await gql.drain()
    found = await gql(
        'query { search(query: "zebrafinch") { edges { kind node { ... on Turn { id } } } } }'
    )
    # The question and the offline echo's reply, which repeats it.
    assert sorted(e["node"]["id"] for e in found["search"]["edges"]) == sorted(
        [sent["userTurn"]["id"], sent["assistantTurn"]["id"]]
    )
    exported = await gql(
        "query($s: ID!) { exportSession(input: {sessionId: $s, format: MARKDOWN}) "
        "{ document fileName } }",
        s=sid,
    )
    assert exported["exportSession"]["fileName"] == "Archived trip.md"
    assert "Which zebrafinch colony first?" in exported["exportSession"]["document"]


async def test_a_listing_reads_every_sessions_tags_in_one_statement(gql: GraphQLClient) -> None:
    query = "{ sessions(first: 100) { edges { node { id tags } } } }"
    ids = await _sessions(gql, "a", "b")
    await _update(gql, ids["a"], tags=["one", "two"])
    with count_statements() as few:
        data = await gql(query)
    assert [e["node"]["tags"] for e in data["sessions"]["edges"]] == [["one", "two"], []]
    more = await _sessions(gql, "c", "d", "e", "f")
    for sid in more.values():
        await _update(gql, sid, tags=["x"])
    with count_statements() as many:
        data = await gql(query)
    assert len(data["sessions"]["edges"]) == 6
    # the sessions, the tags
    assert len(few) == len(many) == 2, many


# --- accounts: who may organise a shared session ------------------------------


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    async with accounts_app(settings) as world:
        created = await world.data(
            "owner", 'mutation { createSpace(input: {name: "Trips"}) { space { id } } }'
        )
        space = created["createSpace"]["space"]["id"]
        world.ids["space"] = space
        added = await world.data(
            "owner",
            'mutation($s: ID!) { addSpaceMember(input: {spaceId: $s, userName: "viewer", '
            "role: VIEWER}) { errors { code } } }",
            s=space,
        )
        assert added["addSpaceMember"]["errors"] == []
        session = await world.data(
            "owner",
            'mutation($s: ID) { createSession(input: {spaceId: $s, title: "Shared"}) '
            "{ session { id } } }",
            s=space,
        )
        world.ids["session"] = session["createSession"]["session"]["id"]
        shared = await world.data(
            "owner",
            "mutation($id: ID!) { updateSession(input: {id: $id, visibility: SPACE}) "
            "{ errors { code } } }",
            id=world.ids["session"],
        )
        assert shared["updateSession"]["errors"] == []
        yield world


@pytest.mark.parametrize(
    "change", [{"pinned": True}, {"archived": True}, {"tags": ["mine"]}], ids=str
)
async def test_a_viewer_of_a_shared_session_may_not_organise_it(
    world: World, change: dict[str, Any]
) -> None:
    sid = world.ids["session"]
    refused = await world.data("viewer", UPDATE, input={"id": sid, **change})
    assert refused["updateSession"] == {
        "session": None,
        "errors": [
            {"code": "FORBIDDEN", "message": "Only its author writes to a session.", "field": "id"}
        ],
    }
    seen = await world.data(
        "owner", "query($id: ID!) { session(id: $id) { pinned archived tags } }", id=sid
    )
    assert seen["session"] == {"pinned": False, "archived": False, "tags": []}
    # The author may, and the viewer sees it in the space's listing.
    done = await world.data("owner", UPDATE, input={"id": sid, **change})
    assert done["updateSession"]["errors"] == []
    listed = await world.data(
        "viewer",
        "query($s: ID!) { space(id: $s) { sessions(archived: null) "
        "{ edges { node { pinned archived tags } } } } }",
        s=world.ids["space"],
    )
    node = listed["space"]["sessions"]["edges"][0]["node"]
    expected = {"pinned": False, "archived": False, "tags": [], **change}
    assert node == expected


async def test_a_cursor_is_read_again_where_its_session_is_now(gql: GraphQLClient) -> None:
    ids = await _sessions(gql, "a", "b", "c", "d")
    await _update(gql, ids["c"], pinned=True)
    first = (await gql(LIST, archived=False, first=2))["sessions"]
    assert [e["node"]["title"] for e in first["edges"]] == ["c", "a"]
    # "a" pinned since: the next page goes on after it among the pinned (after "a",
    # pinned most recently, comes "c"), then the others.
    await _update(gql, ids["a"], pinned=True)
    after = first["pageInfo"]["endCursor"]
    assert await _titles(gql, first=10, after=after) == ["c", "b", "d"]
    # A cursor whose session was deleted: its place among the unpinned, by id.
    page = (await gql(LIST, archived=False, first=3))["sessions"]
    assert [e["node"]["title"] for e in page["edges"]] == ["a", "c", "b"]
    await gql("mutation($id: ID!) { deleteSession(input: {id: $id}) { deletedId } }", id=ids["b"])
    after = page["pageInfo"]["endCursor"]
    assert await _titles(gql, first=10, after=after) == ["d"]
