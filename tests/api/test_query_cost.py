"""A query's worst-case node count is computed before it runs and refused above the limit."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import httpx
import pytest
from graphql import parse

from api.app import create_app
from api.graphql.core import cost
from api.graphql.core.cost import EXPORT_FIELDS, query_exports, query_nodes
from api.graphql.schema import build_schema
from api.services import transfer
from api.settings import Settings
from tests.support.graphql import GraphQLClient
from tests.support.lineage import key
from tests.support.ops import checkpoint, create_session, create_space
from tests.support.streams import graphql_ws, sse_events, ws_client

SCHEMA = build_schema()._schema  # type: ignore[attr-defined]

ANCESTORS_3 = """query($n: Int!) { checkpoint(id: "Checkpoint:1") {
  ancestors(first: $n) { ancestors(first: $n) { ancestors(first: $n) { id } } } } }"""


def nodes(document: str, **variables: Any) -> int | None:
    return query_nodes(SCHEMA, parse(document), None, variables)


@pytest.mark.parametrize(
    ("document", "variables", "expected"),
    [
        # 1 checkpoint + 1000 + 1000² + 1000³: the 3-minute, 2.4 GB query.
        (ANCESTORS_3, {"n": 1000}, 1 + 1000 + 1000**2 + 1000**3),
        (ANCESTORS_3, {"n": 40}, 1 + 40 + 40**2 + 40**3),
        # A list's default argument counts (ancestors: first = 10); a singular
        # object field counts one per enclosing item.
        ('{ checkpoint(id: "x") { ancestors { id parent { id } } } }', {}, 1 + 10 + 10),
        # Unpaged lists count at 100 (a checkpoint's children, forks, at 10).
        ('{ space(id: "x") { branches { head { id } } } }', {}, 1 + 100 + 100),
        ('{ checkpoint(id: "x") { children { children { id } } } }', {}, 1 + 10 + 10 * 10),
        # A connection counts its page once; edges, node, pageInfo and cursors are free.
        (
            """{ spaces(first: 10) { pageInfo { hasNextPage } edges { cursor node {
               sessions(first: 5) { edges { node { turns(last: 20) { edges { node { id } } } } } }
             } } } }""",
            {},
            10 + 10 * 5 + 10 * 5 * 20,
        ),
        # Without first/last a connection counts at its cap: 100, lineage 1000.
        (
            "{ spaces { edges { node { lineage { edges { node { id } } } } } } }",
            {},
            100 + 100 * 1000,
        ),
        # The lineage graph's nodes count at its cap (its `first` is on the field
        # above the list), its branches as an unpaged list.
        (
            '{ space(id: "x") { lineageGraph(first: 5) { nodes { id } branches { name } } } }',
            {},
            1 + 1 + 20_000 + 100,
        ),
        # Fragments count where they are spread, every branch of an abstract type.
        (
            """{ node(id: "x") { ...on Checkpoint { children { id } } ...S } }
               fragment S on Session { turns(first: 3) { edges { node { id } } } }""",
            {},
            1 + 10 + 3,
        ),
        # Scalars, __typename and introspection are free.
        ("{ __typename __schema { types { name fields { name args { name } } } } }", {}, 0),
        ("{ providers { chatDefault } }", {}, 1),
    ],
)
def test_the_node_count_of_a_query(document: str, variables: dict[str, Any], expected: int) -> None:
    assert nodes(document, **variables) == expected


def test_a_documents_walk_is_kept_and_counts_each_list_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given one parsed document (as the ParserCache hands every request of
    # the same text), a fragment spread twice, and lists sized by variables
    document = parse(
        """query($n: Int!, $m: Int, $after: String) { checkpoint(id: "x") {
           ...A c: children { ...A } } space(id: "y") { lineage(first: $m, after: $after) {
           edges { node { id } } } } }
           fragment A on Checkpoint { ancestors(first: $n) { id } }"""
    )
    walks: list[Any] = []
    count = cost._Counter.count

    def counting(self: Any, *args: Any, **kwargs: Any) -> int:
        # a counter that walks (not one that only sizes), at its first step
        if self.sized is not None and not any(w is self for w in walks):
            walks.append(self)
        return count(self, *args, **kwargs)

    monkeypatch.setattr(cost._Counter, "count", counting)
    asked = [
        ({"n": 5, "m": 7}, 1 + 5 + 10 + 10 * 5 + 1 + 7),
        ({"n": 5, "m": 7, "after": "a cursor"}, 1 + 5 + 10 + 10 * 5 + 1 + 7),
        ({"n": 2, "m": None}, 1 + 2 + 10 + 10 * 2 + 1 + 1000),
        ({"n": 5, "m": 7, "after": "another"}, 1 + 5 + 10 + 10 * 5 + 1 + 7),
        ({"n": 2}, 1 + 2 + 10 + 10 * 2 + 1 + 1000),
        ({"n": "ten"}, None),
    ]
    # When it is counted with each in turn, then the same again
    for variables, expected in [*asked, *asked]:
        # Then every count is the walk's
        assert query_nodes(SCHEMA, document, None, variables) == expected, variables
    # and the document was walked once per list sizes met (5, 5, 7 and 2, 2, 1000)
    assert len(walks) == 2


def test_variables_that_do_not_coerce_leave_nothing_to_count() -> None:
    # The operation fails before it runs; the coercion error is graphql's to report.
    assert nodes(ANCESTORS_3, n="ten") is None


async def test_a_costly_query_is_refused_before_it_runs_with_its_cost(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, title="t", spaceId=space))["id"]
    made = await checkpoint(gql, sid, title="root")
    query = ANCESTORS_3.replace('"Checkpoint:1"', "$id").replace("$n: Int!", "$n: Int!, $id: ID!")

    refused = await gql.raw(query, n=40, id=made["id"])
    allowed = await gql.raw(query, n=36, id=made["id"])

    cost = {"nodes": 1 + 40 + 40**2 + 40**3, "limit": 50_000}
    assert refused == {
        "data": None,
        "errors": [
            {
                "message": "This query could return up to 65,641 objects; the limit is 50,000: "
                "ask for smaller pages (`first`/`last`) or fewer nested lists.",
                "extensions": {"code": "QUERY_TOO_COSTLY", "cost": cost},
            }
        ],
        "extensions": {"cost": cost},
    }
    assert allowed == {
        "data": {"checkpoint": {"ancestors": []}},
        "extensions": {"cost": {"nodes": 1 + 36 + 36**2 + 36**3, "limit": 50_000}},
    }


async def test_a_get_has_the_budget_of_a_post(gql: GraphQLClient) -> None:
    # The web UI's sidebar: 100 spaces x 100 sessions at their `first`, and the
    # unattached sessions.
    sidebar = """{ spaces(first: 100) { edges { node { id name viewerRole
      sessions(first: 100) { edges { node { id title authorName visibility } } } } } }
      sessions(first: 100, unattached: true) { edges { node { id title } } } }"""
    over = "{ spaces(first: 100) { edges { node { sessions(first: 501) { edges { cursor } } } } } }"

    got = await gql.http.get("/graphql", params={"query": sidebar})
    posted = await gql.raw(sidebar)
    refused = await gql.http.get("/graphql", params={"query": over})

    assert posted == {
        "data": {"spaces": {"edges": []}, "sessions": {"edges": []}},
        "extensions": {"cost": {"nodes": 10_200, "limit": 50_000}},
    }
    assert got.json() == posted
    assert refused.json()["errors"][0]["message"] == (
        "This query could return up to 50,200 objects; the limit is 50,000: "
        "ask for smaller pages (`first`/`last`) or fewer nested lists."
    )


async def test_the_limits_come_from_the_settings(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, max_query_nodes=5))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost"
        ) as http,
    ):
        body = (
            await http.post(
                "/graphql", json={"query": "{ spaces(first: 6) { edges { node { id } } } }"}
            )
        ).json()
    assert body["extensions"] == {"cost": {"nodes": 6, "limit": 5}}
    assert body["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"


def test_the_environment_sets_the_limits() -> None:
    settings = Settings.from_environment(
        {"SMRITI_MAX_QUERY_NODES": "7000"}, database_url="sqlite://:memory:"
    )
    assert settings.max_query_nodes == 7000


async def test_the_lineage_cap_counted_is_the_one_the_resolver_enforces(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    body = await gql.raw(
        "query($s: ID!) { space(id: $s) { lineage(first: 1001) { edges { cursor } } } }", s=space
    )
    assert body["errors"][0]["message"] == "first must be between 0 and 1000."


async def test_a_costly_subscription_is_refused_over_a_websocket_before_it_writes(
    gql: GraphQLClient,
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    costly = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
      ... on StreamUserTurn { context { checkpoints { ancestors(first: 1000) {
        ancestors(first: 1000) { id } } } } } } }"""
    async with ws_client(gql.app) as http, graphql_ws(http) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hi"}, query=costly)
        answer = await ws.receive()
        done = await ws.receive()
    # the event, its context plan, 100 checkpoints, 1000 ancestors each, 1000 each again
    cost = {"nodes": 1 + 1 + 100 + 100 * 1000 + 100 * 1000 * 1000, "limit": 50_000}
    assert (answer["id"], answer["type"], done) == ("1", "next", {"id": "1", "type": "complete"})
    assert answer["payload"]["data"] is None
    assert [e["extensions"] for e in answer["payload"]["errors"]] == [
        {"code": "QUERY_TOO_COSTLY", "cost": cost}
    ]
    assert (await gql(LAST, s=sid))["session"]["lastSequenceNumber"] == 0


async def test_a_refusal_is_the_clients_mistake_not_logged_as_a_server_error(
    gql: GraphQLClient, caplog: pytest.LogCaptureFixture
) -> None:
    body = await gql.raw(ANCESTORS_3, n=1000)
    assert body["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_get_never_runs_a_mutation(gql: GraphQLClient) -> None:
    response = await gql.http.get(
        "/graphql",
        params={"query": 'mutation { createSpace(input: {name: "x"}) { errors { code } } }'},
    )
    assert response.status_code == 400
    assert (await gql("{ spaces(first: 1) { edges { cursor } } }"))["spaces"]["edges"] == []


LAST = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"


EXPORT = 'exportSpace(input: {spaceId: "x", format: JSON}) { document }'


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (f"{{ {EXPORT} }}", 1),
        (f"{{ a: {EXPORT} b: {EXPORT} c: {EXPORT} }}", 3),
        # Through fragments, named and inline, and beside an exportSession.
        (
            f"""{{ ...E ... on Query {{ again: {EXPORT} }}
                  exportSession(input: {{sessionId: "y"}}) {{ document }} }}
               fragment E on Query {{ {EXPORT} }}""",
            3,
        ),
        # The operation that runs is the one counted.
        (f"query One {{ {EXPORT} }} query Two {{ a: {EXPORT} b: {EXPORT} }}", 1),
        ("{ spaces(first: 1) { edges { cursor } } }", 0),
    ],
)
def test_the_exports_of_an_operation_are_counted(document: str, expected: int) -> None:
    assert query_exports(SCHEMA, parse(document), "One" if "query One" in document else None) == (
        expected
    )


def test_every_export_field_is_counted() -> None:
    exports = {name for name in SCHEMA.query_type.fields if name.startswith("export")}
    assert exports == EXPORT_FIELDS == {"exportSpace", "exportSession"}


async def test_aliases_cannot_multiply_an_export(
    gql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    space = await create_space(gql)
    built: list[list[int]] = []
    real = transfer.export_spaces

    async def counted(owner_id: int, space_ids: list[int]) -> Any:
        built.append(space_ids)
        return await real(owner_id, space_ids)

    monkeypatch.setattr(transfer, "export_spaces", counted)
    one = f'exportSpace(input: {{spaceId: "{space}", format: JSON}}) {{ fileName }}'
    aliased = "{ " + " ".join(f"e{i}: {one}" for i in range(10)) + " }"

    refused = await gql.raw(aliased)
    assert refused == {
        "data": None,
        "errors": [
            {
                "message": "This operation asks for 10 exports; the limit is 1 per operation: "
                "send each exportSpace or exportSession as its own request.",
                "extensions": {"code": "TOO_MANY_EXPORTS", "exports": {"count": 10, "limit": 1}},
            }
        ],
        "extensions": {"cost": {"nodes": 10, "limit": 50_000}},
    }
    assert built == []  # refused before any export was built

    mixed = await gql.raw(
        "query($s: ID!) { exportSpace(input: {spaceId: $s}) { fileName } "
        "exportSession(input: {sessionId: $s}) { fileName } }",
        s=space,
    )
    assert mixed["errors"][0]["extensions"]["exports"] == {"count": 2, "limit": 1}
    assert built == []

    alone = await gql("{ " + one + " }")
    assert alone == {"exportSpace": {"fileName": "Trips.json"}}
    assert built == [[key(space)]]


SMALL_STREAM = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
  __typename ... on StreamDelta { delta } ... on StreamAssistantTurn { assistantTurn { content } }
} }"""


@pytest.mark.parametrize("transport", ["sse", "websocket"])
async def test_a_subscription_carries_its_cost_on_its_first_answer_only(
    gql: GraphQLClient, transport: str
) -> None:
    # The cost is the operation's: on every event of a streamed reply it was
    # the same bytes, hundreds of times.
    sid = (await create_session(gql, title="t"))["id"]
    variables = {"input": {"sessionId": sid, "content": "Count me"}}
    if transport == "sse":
        response = await gql.http.post(
            "/graphql",
            json={"query": SMALL_STREAM, "variables": variables},
            headers={"Accept": "text/event-stream"},
        )
        answers = [data for name, data in sse_events(response.text) if name == "next"]
    else:
        async with ws_client(gql.app) as http, graphql_ws(http) as ws:
            await ws.send(
                {
                    "id": "1",
                    "type": "subscribe",
                    "payload": {"query": SMALL_STREAM, "variables": variables},
                }
            )
            answers = []
            while (message := await ws.receive())["type"] == "next":
                answers.append(message["payload"])
            assert message == {"id": "1", "type": "complete"}

    kinds = [answer["data"]["messageStream"]["__typename"] for answer in answers]
    assert kinds[0] == "StreamUserTurn" and kinds[-1] == "StreamAssistantTurn"
    assert set(kinds[1:-1]) == {"StreamDelta"}
    # the event, then the assistant turn: 2 nodes
    assert answers[0]["extensions"] == {"cost": {"nodes": 2, "limit": 50_000}}
    assert [answer.get("extensions") for answer in answers[1:]] == [None] * (len(answers) - 1)
