"""Sequence numbers: 1, 2, 3, … per session, gapless, under concurrent writers."""

from __future__ import annotations

import asyncio

from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

ALL_TURNS = """query($id: ID!) { session(id: $id) { lastSequenceNumber
  turns(first: 100) { edges { node { sequenceNumber role replyToSequence } } } } }"""


async def test_32_concurrent_messages_get_sequence_numbers_1_to_64(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    results = await asyncio.gather(*(send(gql, sid, f"message {i}") for i in range(32)))
    assert all(r["errors"] == [] for r in results)
    data = await gql(ALL_TURNS, id=sid)
    numbers = [e["node"]["sequenceNumber"] for e in data["session"]["turns"]["edges"]]
    assert numbers == list(range(1, 65))
    assert data["session"]["lastSequenceNumber"] == 64
    # Every reply answers the user turn of its own request.
    for result in results:
        assert result["assistantTurn"]["replyToSequence"] == result["userTurn"]["sequenceNumber"]
