"""Sessions, spaces, mounts and the GraphQL surface around them."""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, mount, preview, send


async def test_a_new_session_is_titled_after_its_first_reply(gql: GraphQLClient) -> None:
    sid = (await create_session(gql))["id"]
    result = await send(gql, sid, "Plan a weekend in Lisbon with good food and tiles")
    assert result["errors"] == []
    await gql.drain()
    data = await gql("query($id: ID!) { session(id: $id) { title } }", id=sid)
    assert data["session"]["title"] == "Plan a weekend in Lisbon with good food"


async def test_offline_echo_describes_the_context_it_received(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "Plan Australia")
    saved = await checkpoint(gql, sid, "Australia plan")
    result = await send(gql, sid, "What next?")
    assert result["assistantTurn"]["content"] == (
        "Offline echo — mode: HEAD or MOUNTED (checkpoints received)\n"
        f"Checkpoints (1): [1] Australia plan ({saved['shortHash']})\n"
        "Earlier turns: 0 (0 from the user, 0 from the assistant)\n"
        "You asked: What next?"
    )
    assert result["assistantTurn"]["provider"] == "offline"
    assert result["assistantTurn"]["model"] == "echo"


async def test_attach_detach_and_unmount_change_the_mode(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, title="t"))["id"]
    await send(gql, sid, "one")
    assert (await preview(gql, sid, "x"))["mode"] == "FRESH"

    attached = await gql(
        """mutation($s: ID!, $p: ID!) { attachSpace(input: {sessionId: $s, spaceId: $p, memoryScope: LATEST_3}) {
           session { memoryScope space { id } } errors { code } } }""",
        s=sid,
        p=space,
    )
    assert attached["attachSpace"] == {
        "session": {"memoryScope": "LATEST_3", "space": {"id": space}},
        "errors": [],
    }
    plan = await preview(gql, sid, "x")
    assert (plan["mode"], plan["boundary"], len(plan["turns"])) == ("HEAD", 0, 2)

    first = await checkpoint(gql, sid, "First")
    await mount(gql, sid, first["id"])
    await send(gql, sid, "two")
    plan = await preview(gql, sid, "x")
    assert (plan["mode"], plan["boundary"]) == ("MOUNTED", 2)
    assert [t["content"] for t in plan["turns"]] == ["two", result_of_two(plan)]

    unmounted = await gql(
        """mutation($s: ID!) { unmountCheckpoint(input: {sessionId: $s}) { session { mount { baseSequence } } errors { code } } }""",
        s=sid,
    )
    assert unmounted["unmountCheckpoint"] == {"session": {"mount": None}, "errors": []}
    assert (await preview(gql, sid, "x"))["mode"] == "HEAD"

    detached = await gql(
        """mutation($s: ID!) { detachSpace(input: {sessionId: $s}) { session { space { id } mount { baseSequence } } errors { code } } }""",
        s=sid,
    )
    assert detached["detachSpace"] == {"session": {"space": None, "mount": None}, "errors": []}
    plan = await preview(gql, sid, "x")
    assert (plan["mode"], plan["checkpoints"], len(plan["turns"])) == ("FRESH", [], 4)


def result_of_two(plan: dict[str, object]) -> str:
    turns = plan["turns"]
    assert isinstance(turns, list)
    content: str = turns[1]["content"]
    assert content.startswith("Offline echo")
    return content


async def test_memory_scope_latest_3_sends_three_checkpoints_oldest_first(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t", memoryScope="LATEST_3"))["id"]
    for title in ("A", "B", "C", "D"):
        await send(gql, sid, f"about {title}")
        await checkpoint(gql, sid, title)
    plan = await preview(gql, sid, "x")
    assert [c["title"] for c in plan["checkpoints"]] == ["B", "C", "D"]
    plan = await preview(gql, sid, "x", context={"memoryScope": "LATEST_1"})
    assert [c["title"] for c in plan["checkpoints"]] == ["D"]


async def test_explicit_context_for_stateless_clients(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "one")
    first = await checkpoint(gql, sid, "First")
    await send(gql, sid, "two")
    # A checkpoint without baseSequence: the boundary is the current last sequence.
    plan = await preview(gql, sid, "x", context={"checkpointId": first["id"]})
    assert (plan["mode"], plan["boundary"], plan["turns"]) == ("MOUNTED", 4, [])
    # With baseSequence: turns after it.
    plan = await preview(gql, sid, "x", context={"checkpointId": first["id"], "baseSequence": 2})
    assert [t["sequenceNumber"] for t in plan["turns"]] == [3, 4]
    # A FRESH session can borrow a space's head.
    other = (await create_session(gql, title="t"))["id"]
    plan = await preview(gql, other, "x", context={"spaceId": space})
    assert (plan["mode"], [c["title"] for c in plan["checkpoints"]]) == ("HEAD", ["First"])


async def test_deleting_a_space_deletes_its_sessions(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "x")
    deleted = await gql(
        """mutation($id: ID!) { deleteSpace(input: {id: $id}) { deletedId errors { code } } }""",
        id=space,
    )
    assert deleted["deleteSpace"] == {"deletedId": space, "errors": []}
    data = await gql(
        "query($s: ID!, $p: ID!) { session(id: $s) { id } space(id: $p) { id } }", s=sid, p=space
    )
    assert data == {"session": None, "space": None}
    again = await gql(
        """mutation($id: ID!) { deleteSpace(input: {id: $id}) { deletedId errors { code field } } }""",
        id=space,
    )
    assert again["deleteSpace"] == {
        "deletedId": None,
        "errors": [{"code": "NOT_FOUND", "field": "id"}],
    }


async def test_node_resolves_every_node_type(gql: GraphQLClient) -> None:
    space = await create_space(gql, "Home")
    sid = (await create_session(gql, spaceId=space, title="Chat"))["id"]
    sent = await send(gql, sid, "hello")
    saved = await checkpoint(gql, sid, "Saved")
    query = """query($id: ID!) { node(id: $id) { __typename id
      ... on Space { name } ... on Session { title } ... on Turn { content } ... on Checkpoint { title } } }"""
    for node_id, expected in [
        (space, {"__typename": "Space", "name": "Home"}),
        (sid, {"__typename": "Session", "title": "Chat"}),
        (sent["userTurn"]["id"], {"__typename": "Turn", "content": "hello"}),
        (saved["id"], {"__typename": "Checkpoint", "title": "Saved"}),
    ]:
        data = await gql(query, id=node_id)
        assert data["node"] == {**expected, "id": node_id}
    assert (await gql(query, id="bm9wZTox"))["node"] is None


async def test_turns_page_from_either_end(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    for i in range(3):
        await send(gql, sid, f"m{i}")
    query = """query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
      session(id: $id) { turns(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { sequenceNumber } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }"""
    tail = (await gql(query, id=sid, last=2))["session"]["turns"]
    assert [e["node"]["sequenceNumber"] for e in tail["edges"]] == [5, 6]
    assert tail["pageInfo"]["hasPreviousPage"] is True
    earlier = (await gql(query, id=sid, last=4, before=tail["pageInfo"]["startCursor"]))["session"][
        "turns"
    ]
    assert [e["node"]["sequenceNumber"] for e in earlier["edges"]] == [1, 2, 3, 4]
    assert earlier["pageInfo"]["hasPreviousPage"] is False
    head = (await gql(query, id=sid, first=2, after=earlier["edges"][1]["cursor"]))["session"][
        "turns"
    ]
    assert [e["node"]["sequenceNumber"] for e in head["edges"]] == [3, 4]
    assert head["pageInfo"]["hasNextPage"] is True


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("{ spaces(first: 101) { edges { cursor } } }", "first must be between 0 and 100."),
        (
            '{ spaces(after: "garbage") { edges { cursor } } }',
            "after is not a cursor from this API.",
        ),
    ],
)
async def test_list_arguments_are_capped_and_checked(
    gql: GraphQLClient, query: str, message: str
) -> None:
    body = await gql.raw(query)
    assert [e["message"] for e in body["errors"]] == [message]
    assert body["errors"][0]["extensions"]["code"] == "INVALID"


async def test_query_depth_and_aliases_are_limited(gql: GraphQLClient) -> None:
    # spaces > edges > node > lineage > edges > node > parent x 10 > id: depth 17
    deep = (
        "{ spaces { edges { node { lineage { edges { node { "
        + "parent { " * 10
        + "id"
        + " }" * 10
        + " } } } } } } }"
    )
    body = await gql.raw(deep)
    assert body["errors"][0]["message"] == "'anonymous' exceeds maximum operation depth of 15"
    aliases = "{ " + " ".join(f"a{i}: providers {{ chatDefault }}" for i in range(31)) + " }"
    body = await gql.raw(aliases)
    assert body["errors"][0]["message"] == "31 aliases found. Allowed: 30"


async def test_the_memory_scope_changes_in_place_keeping_space_branch_and_mount(
    gql: GraphQLClient,
) -> None:
    # Given a session on a space with three checkpoints, mounted on the newest
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    saved = []
    for title in ("One", "Two", "Three"):
        await send(gql, sid, f"About {title}")
        saved.append(await checkpoint(gql, sid, title))
    await mount(gql, sid, saved[-1]["id"])
    assert [c["title"] for c in (await preview(gql, sid, "x"))["checkpoints"]] == ["Three"]

    # When the scope is changed with updateSession
    changed = await gql(
        """mutation($id: ID!) { updateSession(input: {id: $id, memoryScope: LATEST_3}) {
             session { memoryScope branchName space { id } mount { checkpoint { id } } }
             errors { code } } }""",
        id=sid,
    )

    # Then only the scope changed, and the next message sees three checkpoints
    assert changed["updateSession"] == {
        "session": {
            "memoryScope": "LATEST_3",
            "branchName": "main",
            "space": {"id": space},
            "mount": {"checkpoint": {"id": saved[-1]["id"]}},
        },
        "errors": [],
    }
    plan = await preview(gql, sid, "x")
    assert (plan["mode"], [c["title"] for c in plan["checkpoints"]]) == (
        "MOUNTED",
        ["One", "Two", "Three"],
    )


async def test_offline_echo_in_head_mode_before_any_checkpoint_agrees_with_the_badge(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]

    result = await send(gql, sid, "Plan Australia")

    assert result["context"]["mode"] == "HEAD"
    assert result["context"]["checkpoints"] == []
    assert result["assistantTurn"]["content"].splitlines()[0] == (
        "Offline echo — mode: FRESH or HEAD (no checkpoint received)"
    )
