"""The search query through GraphQL: hits, snippets, scope, pages, bad input, cost."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse

from api.domain.types import MemoryScope, Role
from api.graphql.core import ids
from api.graphql.core.cost import query_nodes
from api.graphql.schema import build_schema
from api.store import sessions, spaces, sql, turns
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient, GraphQLError
from tests.support.ops import checkpoint, create_session, create_space, send

SEARCH = """
query($text: String!, $spaceId: ID, $kinds: [SearchKind!], $first: Int, $after: String) {
  search(query: $text, spaceId: $spaceId, kinds: $kinds, first: $first, after: $after) {
    edges {
      cursor kind snippet rank
      node {
        __typename
        ... on Turn { id sequenceNumber }
        ... on Checkpoint { id title }
        ... on Session { id title }
        ... on Space { id name }
      }
    }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}
"""


async def _search(gql: GraphQLClient, query: str, **variables: Any) -> dict[str, Any]:
    data = await gql(SEARCH, text=query, **variables)
    found: dict[str, Any] = data["search"]
    return found


def _hits(found: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["kind"], e["snippet"]) for e in found["edges"]]


async def test_turns_checkpoints_sessions_and_spaces_are_found_with_safe_snippets(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql, "Kyoto <trip>")
    session = await create_session(gql, spaceId=space_id, model="lab/my-model", title="Temples")
    fake_openai.reply("Visit <b>Kinkaku-ji</b> & the moss temple at dawn.")
    sent = await send(gql, session["id"], "Which temple in Kyoto first?")
    saved = await checkpoint(gql, session["id"], "Kyoto temples", decisions=["Moss temple first"])

    found = await _search(gql, "temple")
    assert sorted((e["kind"], e["node"]["__typename"]) for e in found["edges"]) == [
        ("CHECKPOINT", "Checkpoint"),
        ("TURN", "Turn"),
        ("TURN", "Turn"),
    ]
    by_kind = {(e["kind"], e["node"]["id"]): e["snippet"] for e in found["edges"]}
    assert by_kind == {
        ("TURN", sent["userTurn"]["id"]): "Which <mark>temple</mark> in Kyoto first?",
        ("TURN", sent["assistantTurn"]["id"]): (
            "Visit &lt;b&gt;Kinkaku-ji&lt;/b&gt; &amp; the moss <mark>temple</mark> at dawn."
        ),
        ("CHECKPOINT", saved["id"]): ("Kyoto temples\n\n\nMoss <mark>temple</mark> first"),
    }
    assert all(e["rank"] > 0 for e in found["edges"])
    assert [e["rank"] for e in found["edges"]] == sorted(
        (e["rank"] for e in found["edges"]), reverse=True
    )

    assert _hits(await _search(gql, "temp*", kinds=["SESSION", "SPACE"])) == [
        ("SESSION", "<mark>Temples</mark>")
    ]
    assert _hits(await _search(gql, "trip", kinds=["SPACE"])) == [
        ("SPACE", "Kyoto &lt;<mark>trip</mark>&gt;\n")
    ]
    assert _hits(await _search(gql, '"moss temple" dawn')) == [
        (
            "TURN",
            "Visit &lt;b&gt;Kinkaku-ji&lt;/b&gt; &amp; the <mark>moss</mark> "
            "<mark>temple</mark> at <mark>dawn</mark>.",
        )
    ]


async def test_scope_space_and_other_owner(gql: GraphQLClient) -> None:
    owner = await spaces.local_user_id()
    conn = sql.connection()
    row = await sql.fetch_one(
        conn,
        "INSERT INTO smriti_user (name, created_at) VALUES (?, CURRENT_TIMESTAMP) RETURNING id",
        ["mallory"],
    )
    assert row is not None
    theirs = await spaces.create(int(row["id"]), "Mallory's iguana space", "")
    mine = await spaces.create(owner, "Iguana notes", "")
    other = await spaces.create(owner, "Other", "")
    for space, owner_id in ((theirs, int(row["id"])), (mine, owner), (other, owner)):
        session = await sessions.create(
            owner_id,
            title="",
            space_id=space.id,
            memory_scope=MemoryScope.LATEST_1,
            provider="offline",
            model="echo",
        )
        await turns.append(session.id, role=Role.USER, content="an iguana", token_count=1)

    everything = await _search(gql, "iguana")
    assert sorted(_hits(everything)) == [
        ("SPACE", "<mark>Iguana</mark> notes\n"),
        ("TURN", "an <mark>iguana</mark>"),
        ("TURN", "an <mark>iguana</mark>"),
    ]
    space_gid = ids.encode("Space", mine.id)
    assert sorted(_hits(await _search(gql, "iguana", spaceId=space_gid))) == [
        ("SPACE", "<mark>Iguana</mark> notes\n"),
        ("TURN", "an <mark>iguana</mark>"),
    ]
    assert _hits(await _search(gql, "iguana", spaceId=ids.encode("Space", theirs.id))) == []
    assert _hits(await _search(gql, "iguana", spaceId="nonsense")) == []


async def test_pages_follow_the_ranking(gql: GraphQLClient) -> None:
    owner = await spaces.local_user_id()
    session = await sessions.create(
        owner,
        title="",
        space_id=None,
        memory_scope=MemoryScope.LATEST_1,
        provider="offline",
        model="echo",
    )
    for repeats in range(1, 6):
        await turns.append(
            session.id, role=Role.USER, content=" ".join(["owl"] * repeats), token_count=1
        )
    first = await _search(gql, "owl", first=2)
    assert [e["snippet"].count("<mark>") for e in first["edges"]] == [5, 4]
    assert first["pageInfo"] == {
        "hasNextPage": True,
        "hasPreviousPage": False,
        "endCursor": first["edges"][1]["cursor"],
    }
    second = await _search(gql, "owl", first=2, after=first["pageInfo"]["endCursor"])
    assert [e["snippet"].count("<mark>") for e in second["edges"]] == [3, 2]
    third = await _search(gql, "owl", first=2, after=second["pageInfo"]["endCursor"])
    assert [e["snippet"].count("<mark>") for e in third["edges"]] == [1]
    assert third["pageInfo"]["hasNextPage"] is False
    assert third["pageInfo"]["hasPreviousPage"] is True


async def test_a_deleted_sessions_turns_are_not_found(gql: GraphQLClient) -> None:
    session = await create_session(gql, title="Scratch")
    owner = await spaces.local_user_id()
    key = ids.decode(session["id"], "Session", field="id")
    await turns.append(key, role=Role.USER, content="ephemeral narwhal", token_count=1)
    assert _hits(await _search(gql, "narwhal")) == [("TURN", "ephemeral <mark>narwhal</mark>")]
    await sessions.delete(owner, key)
    assert _hits(await _search(gql, "narwhal")) == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "A search needs at least one word (letters or digits)."),
        ('" ( * ^ : _', "A search needs at least one word (letters or digits)."),
        ("x" * 501, "A search is at most 500 characters."),
    ],
)
async def test_bad_queries_are_typed_errors(gql: GraphQLClient, query: str, message: str) -> None:
    with pytest.raises(GraphQLError) as raised:
        await _search(gql, query)
    (error,) = raised.value.args[0]
    assert error["message"] == message
    assert error["extensions"]["code"] == "INVALID"


async def test_hostile_syntax_is_not_a_database_error(gql: GraphQLClient) -> None:
    await create_space(gql, "near the quote")
    assert _hits(await _search(gql, 'NEAR( "quote')) == [
        ("SPACE", "<mark>near</mark> the <mark>quote</mark>\n")
    ]
    assert _hits(await _search(gql, "quote OR x")) == []


def test_the_cost_extension_counts_a_search_page() -> None:
    schema = build_schema()._schema  # type: ignore[attr-defined]
    document = (
        '{ search(query: "x", first: 7) { edges { node { ... on Session { '
        "turns(first: 3) { edges { node { id } } } } } } } }"
    )
    assert query_nodes(schema, parse(document), None, {}) == 7 + 7 * 3
    assert query_nodes(schema, parse('{ search(query: "x") { edges { rank } } }'), None, {}) == 100
