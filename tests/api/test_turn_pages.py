"""Session.turns read in bulk: pages up to 1,000, `nodes` beside `edges`, two statements a page."""

from __future__ import annotations

from api.domain.pages import PageRequest
from api.store import turns
from tests.support.graphql import GraphQLClient
from tests.support.lineage import key
from tests.support.ops import TURN, create_session, send
from tests.support.queries import count_statements

PAGE = f"""query($id: ID!, $first: Int, $after: String) {{ session(id: $id) {{
  turns(first: $first, after: $after) {{
    pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }}
    edges {{ cursor node {{ {TURN} createdAt }} }}
    nodes {{ {TURN} createdAt }} }} }} }}"""


async def session_with(gql: GraphQLClient, messages: int) -> str:
    sid: str = (await create_session(gql, title="t"))["id"]
    for i in range(messages):
        await send(gql, sid, f"message {i}")
    return sid


async def test_nodes_are_the_edges_nodes(gql: GraphQLClient) -> None:
    sid = await session_with(gql, 3)
    first = (await gql(PAGE, id=sid, first=4))["session"]["turns"]
    assert [n["sequenceNumber"] for n in first["nodes"]] == [1, 2, 3, 4]
    assert first["nodes"] == [e["node"] for e in first["edges"]]
    assert first["pageInfo"] == {
        "hasNextPage": True,
        "hasPreviousPage": False,
        "startCursor": first["edges"][0]["cursor"],
        "endCursor": first["edges"][-1]["cursor"],
    }
    rest = await gql(PAGE, id=sid, first=1000, after=first["pageInfo"]["endCursor"])
    turns = rest["session"]["turns"]
    assert [n["sequenceNumber"] for n in turns["nodes"]] == [5, 6]
    assert turns["nodes"] == [e["node"] for e in turns["edges"]]
    assert turns["pageInfo"]["hasNextPage"] is False


async def test_a_page_holds_at_most_1000(gql: GraphQLClient) -> None:
    sid = await session_with(gql, 1)
    body = await gql.raw(PAGE, id=sid, first=1001)
    assert [(e["message"], e["extensions"]["field"]) for e in body["errors"]] == [
        ("first must be between 0 and 1000.", "first")
    ]


async def test_statements_do_not_grow_with_the_page(gql: GraphQLClient) -> None:
    short = await session_with(gql, 1)
    long = await session_with(gql, 6)
    with count_statements() as few:
        two = await gql(PAGE, id=short, first=1000)
    with count_statements() as many:
        twelve = await gql(PAGE, id=long, first=1000)
    assert len(two["session"]["turns"]["nodes"]) == 2
    assert len(twelve["session"]["turns"]["nodes"]) == 12
    # the session, the page
    assert len(few) == len(many) == 2


async def test_a_page_stops_at_its_content_budget(gql: GraphQLClient) -> None:
    # Each "message i" is 9 characters and the echo's replies are longer: with a
    # budget of 20 characters, a page holds the turns that start within it.
    sid = await session_with(gql, 3)
    session_id = key(sid)
    lengths = [len(t.content) for t in (await turns.page(session_id, PageRequest(first=10))).items]
    assert len(lengths) == 6
    budget = lengths[0] + 1  # the second turn starts within it, the third does not
    forward = await turns.page(session_id, PageRequest(first=10), content_budget=budget)
    assert ([t.sequence_number for t in forward.items], forward.has_next) == ([1, 2], True)
    rest = await turns.page(session_id, PageRequest(first=10, after=2), content_budget=budget)
    assert ([t.sequence_number for t in rest.items], rest.has_next) == ([3, 4], True)
    # A budget smaller than one turn still gives that turn: a page is never empty.
    one = await turns.page(session_id, PageRequest(last=10), content_budget=1)
    assert ([t.sequence_number for t in one.items], one.has_previous) == ([6], True)
    whole = await turns.page(session_id, PageRequest(first=6))
    assert ([t.sequence_number for t in whole.items], whole.has_next) == ([1, 2, 3, 4, 5, 6], False)
    exact = await turns.page(session_id, PageRequest(first=5))
    assert (len(exact.items), exact.has_next) == (5, True)
