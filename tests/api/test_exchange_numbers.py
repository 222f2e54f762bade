"""Turn.exchangeNumber: exchanges counted 1, 2, 3, … as Jupyter numbers cells, also
on a page that does not start at the session's first turn."""

from __future__ import annotations

from api.graphql.core import ids
from api.store import turns
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

TURNS = """query($id: ID!, $last: Int) { session(id: $id) {
  turns(last: $last) { edges { node { sequenceNumber role exchangeNumber } } } } }"""


async def numbered(gql: GraphQLClient, sid: str, last: int) -> list[tuple[int, str, int]]:
    edges = (await gql(TURNS, id=sid, last=last))["session"]["turns"]["edges"]
    return [
        (e["node"]["sequenceNumber"], e["node"]["role"], e["node"]["exchangeNumber"]) for e in edges
    ]


async def test_a_question_and_its_reply_share_the_exchange_number(gql: GraphQLClient) -> None:
    sid: str = (await create_session(gql, title="t"))["id"]
    for text in ("one", "two", "three"):
        assert (await send(gql, sid, text))["errors"] == []

    assert await numbered(gql, sid, 10) == [
        (1, "USER", 1),
        (2, "ASSISTANT", 1),
        (3, "USER", 2),
        (4, "ASSISTANT", 2),
        (5, "USER", 3),
        (6, "ASSISTANT", 3),
    ]
    # The newest page alone (the notebook loads older turns lazily): counted all the same.
    assert await numbered(gql, sid, 3) == [(4, "ASSISTANT", 2), (5, "USER", 3), (6, "ASSISTANT", 3)]


async def test_exchange_numbers_count_the_user_turns_up_to_each_anchor(
    gql: GraphQLClient,
) -> None:
    sid: str = (await create_session(gql, title="t"))["id"]
    for text in ("one", "two", "three"):
        await send(gql, sid, text)
    pk = ids.decode(sid, "Session", field="id")
    # A reply to an older question (a retried one) counts to that question: anchor 3.
    assert await turns.exchange_numbers(pk, [6, 3, 4, 1, 5]) == {6: 3, 3: 2, 4: 2, 1: 1, 5: 3}
    assert await turns.exchange_numbers(pk, []) == {}
