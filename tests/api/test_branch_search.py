"""Search over a branched conversation (issue 21): a turn the branches share
is one hit, in the session that first had it; a branch's own turns are hits
in the branch; deleting that session leaves the text findable once."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from api.store import sql
from tests.support.conversations import FORK, conversation, turn_id
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import send

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SEARCH = """query($text: String!) { search(query: $text, kinds: [TURN], first: 20) {
  edges { node { ... on Turn { id sequenceNumber session { id } } } } } }"""
DELETE = """mutation($id: ID!) { deleteSession(input: {id: $id}) { errors { code } } }"""


async def _hits(gql: GraphQLClient, text: str) -> list[tuple[str, int, str]]:
    data: dict[str, Any] = await gql(SEARCH, text=text)
    return [
        (e["node"]["id"], e["node"]["sequenceNumber"], e["node"]["session"]["id"])
        for e in data["search"]["edges"]
    ]


async def _fork(gql: GraphQLClient, sid: str, sequence: int) -> str:
    at = await turn_id(gql, sid, sequence)
    data = (await gql(FORK, input={"atTurnId": at}))["forkSession"]
    assert data["errors"] == [], data
    branch: str = data["session"]["id"]
    return branch


async def test_a_shared_turn_is_one_hit_in_the_session_that_first_had_it(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    origin = await conversation(gql, fake_openai, 2)  # q1 a1 q2 a2
    branch = await _fork(gql, origin, 2)
    # A branch of the branch: its copies name the origin's turns too.
    await _fork(gql, branch, 2)
    fake_openai.reply("a2 otherwise")
    assert (await send(gql, branch, "q2 walrus"))["errors"] == []

    assert await _hits(gql, "a1") == [(await turn_id(gql, origin, 2), 2, origin)]
    assert await _hits(gql, "walrus") == [(await turn_id(gql, branch, 3), 3, branch)]
    assert await _hits(gql, "otherwise") == [(await turn_id(gql, branch, 4), 4, branch)]
    assert len(await _hits(gql, "q2")) == 2  # the origin's and the branch's own


async def test_deleting_the_first_session_indexes_a_branch_s_copy_instead(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    origin = await conversation(gql, fake_openai, 2)
    first = await _fork(gql, origin, 2)
    second = await _fork(gql, first, 2)

    assert (await gql(DELETE, id=origin))["deleteSession"]["errors"] == []
    assert await _hits(gql, "a1") == [(await turn_id(gql, first, 2), 2, first)]
    assert (await gql(DELETE, id=first))["deleteSession"]["errors"] == []
    assert await _hits(gql, "a1") == [(await turn_id(gql, second, 2), 2, second)]
    assert (await gql(DELETE, id=second))["deleteSession"]["errors"] == []
    assert await _hits(gql, "a1") == []


async def test_copies_are_not_indexed_and_name_the_first_turn(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    origin = await conversation(gql, fake_openai, 1)
    branch = await _fork(gql, origin, 2)
    await _fork(gql, branch, 2)
    conn = sql.connection()
    rows = await sql.fetch(
        conn,
        "SELECT session_id, sequence_number, copied_from_id, id FROM turn ORDER BY id",
    )
    first = {r["sequence_number"]: r["id"] for r in rows if r["copied_from_id"] is None}
    assert [(r["sequence_number"], r["copied_from_id"]) for r in rows] == [
        (1, None),
        (2, None),
        (1, first[1]),
        (2, first[2]),
        (1, first[1]),
        (2, first[2]),
    ]
    table = "search_entry" if sql.dialect(conn) == "postgres" else "search_fts"
    indexed = await sql.fetch(
        conn, f"SELECT object_id FROM {table} WHERE kind = 0 ORDER BY object_id"
    )
    assert [int(r["object_id"]) for r in indexed] == [first[1], first[2]]


async def test_the_migration_leaves_one_entry_of_copies_indexed_before_it(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    migration = importlib.import_module("api.store.migrations.0016_search_skips_copies")
    origin = await conversation(gql, fake_openai, 1)
    await _fork(gql, origin, 2)
    await _fork(gql, origin, 2)
    conn = sql.connection()
    postgres = sql.dialect(conn) == "postgres"
    # As 0004 indexed them: every copy too.
    if postgres:
        await conn.execute_script(
            "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
            "SELECT 0, t.id, s.owner_id, NULL, t.session_id, t.content FROM turn t "
            "JOIN session s ON s.id = t.session_id WHERE t.copied_from_id IS NOT NULL"
        )
    else:
        await conn.execute_script(
            "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, "
            "session_id) SELECT t.id * 4, t.content, 0, t.id, s.owner_id, NULL, t.session_id "
            "FROM turn t JOIN session s ON s.id = t.session_id WHERE t.copied_from_id IS NOT NULL"
        )
    assert len(await _hits(gql, "a1")) == 3

    await conn.execute_script(migration._FORGET_COPIES["postgres" if postgres else "sqlite"])
    assert await _hits(gql, "a1") == [(await turn_id(gql, origin, 2), 2, origin)]
