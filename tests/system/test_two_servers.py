"""Two `smriti serve` processes on one PostgreSQL database share the sequence."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from tests.support.servers import SmritiServer

pytestmark = pytest.mark.postgres_only

SEND = """mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) {
  userTurn { sequenceNumber } assistantTurn { sequenceNumber } errors { code } } }"""


async def test_two_processes_number_turns_without_gaps_or_duplicates(
    database_url: str, tmp_path: object
) -> None:
    with SmritiServer(database_url) as first, SmritiServer(database_url) as second:
        async with httpx.AsyncClient(timeout=60) as http:
            created = await http.post(
                first.graphql_url,
                json={
                    "query": 'mutation { createSession(input: {title: "t"}) { session { id } } }'
                },
            )
            sid = created.json()["data"]["createSession"]["session"]["id"]

            async def one(server: SmritiServer, i: int) -> dict[str, object]:
                response = await http.post(
                    server.graphql_url,
                    json={"query": SEND, "variables": {"s": sid, "c": f"m{i}"}},
                )
                body: dict[str, object] = response.json()
                return body

            results = await asyncio.gather(*(one(first if i % 2 else second, i) for i in range(32)))
            assert all(not r.get("errors") for r in results), json.dumps(results)[:500]
            turns = await http.post(
                second.graphql_url,
                json={
                    "query": "query($id: ID!) { session(id: $id) { lastSequenceNumber "
                    "turns(first: 100) { edges { node { sequenceNumber } } } } }",
                    "variables": {"id": sid},
                },
            )
            session = turns.json()["data"]["session"]
            numbers = [e["node"]["sequenceNumber"] for e in session["turns"]["edges"]]
            assert numbers == list(range(1, 65))
            assert session["lastSequenceNumber"] == 64
