"""Plain subtrees (an edge, its node, the node's parent…) completed by a plan
answer exactly what graphql-core answers: the same data in the same key order,
the same errors at the same paths, on a schema made for the irregular cases
and on the API's own schema over either database."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
import strawberry
from strawberry import relay
from strawberry.extensions import ParserCache

from api.graphql.core import execution
from api.graphql.core.execution import ContextInfo, PlainFieldsExecutor, reads_context_only
from api.graphql.core.subscription_events import PlainEventsExecutor
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, send


@strawberry.interface
class Named:
    name: str


@strawberry.type
class Leaf(Named):
    size: int | None
    must: str  # None in some leaves: a null for a non-null field

    @strawberry.field
    def fails(self) -> str | None:
        raise ValueError(f"no {self.name}")


class OddLeaf(Leaf):
    """A subclass instance: the ordinary path (Strawberry's is_type_of)."""


@strawberry.type
class Other:
    label: str


Either = Annotated[Leaf | Other, strawberry.union("Either")]


@strawberry.type
class Entry(relay.Node):
    key: relay.NodeID[int]
    title: str
    leaf: Leaf | None
    strict_leaf: Leaf  # None in one node
    leaves: list[Leaf]
    loose_leaves: list[Leaf | None] | None
    either: Either | None

    @strawberry.field
    @reads_context_only
    def parent(self, info: strawberry.Info) -> Entry | None:
        """From the request's context: at once if held, an awaitable if not."""
        held = info.context["held"]
        parent_key = self.key - 1
        if parent_key < 1:
            return None
        if parent_key in held:
            return held[parent_key]
        return _later(_node(parent_key))  # type: ignore[return-value]

    @strawberry.field
    @reads_context_only
    def where(self, info: strawberry.Info) -> str:
        """Uses more than the context: the stand-in refuses, the real Info answers."""
        return f"{info.path.key}:{self.title}"

    @strawberry.field
    def upper(self) -> str:
        return self.title.upper()


async def _later(value: Any) -> Any:
    await asyncio.sleep(0)
    return value


@strawberry.type
class Edge:
    cursor: str
    node: Entry


@strawberry.type
class Info:
    has_more: bool
    last: str | None


@strawberry.type
class Page:
    info: Info
    edges: list[Edge]
    nodes: list[Entry | None]


def _node(key: int) -> Entry:
    leaf = Leaf(name=f"l{key}", size=key if key % 2 else None, must="m")
    broken = Leaf(name=f"b{key}", size=None, must=None)  # type: ignore[arg-type]
    kind = OddLeaf if key == 4 else Leaf
    return Entry(
        key=key,
        title=f"n{key}",
        leaf=kind(name=f"k{key}", size=1, must="x") if key != 3 else None,
        strict_leaf=None if key == 5 else leaf,  # type: ignore[arg-type]
        leaves=[leaf, broken] if key == 2 else [leaf],
        loose_leaves=[leaf, None, broken] if key == 6 else None,
        either=Other(label="o") if key % 2 else leaf,
    )


@strawberry.type
class Query:
    @strawberry.field
    def page(self, info: strawberry.Info, count: int = 7) -> Page:
        nodes = [_node(key) for key in range(1, count + 1)]
        # every node but 3 is held: node 4's parent comes as an awaitable
        info.context["held"].update({n.key: n for n in nodes if n.key != 3})
        edges = [Edge(cursor=f"c{n.key}", node=n) for n in nodes]
        return Page(info=Info(has_more=False, last="c7"), edges=edges, nodes=[*nodes, None])


def _schema(executor: Any) -> strawberry.Schema:
    return strawberry.Schema(query=Query, types=[Leaf], execution_context_class=executor)


QUERIES = [
    # leaves, objects in attributes, context-only resolvers, __typename everywhere
    "{ page { info { hasMore last } edges { cursor node { id title parent { id title } } } } }",
    "{ page { __typename edges { __typename node { __typename key: id leaf { __typename name } } } } }",
    # aliases, fragments on the type and on an interface, the same field twice
    """{ page { edges { ...E c: cursor } } }
       fragment E on Edge { node { t: title ...N leaf { ...on Named { name } size } title } }
       fragment N on Node { id } # the interface""",
    # a null where the schema allows one, and where it does not (node 5's strictLeaf:
    # the node, then the edge, then the list is null, with one error)
    "{ page { edges { node { title leaf { name size } } } } }",
    "{ page { edges { node { title strictLeaf { name } } } } }",
    "{ page { nodes { title strictLeaf { name } } } }",
    # a non-null leaf that is null inside a list inside the node (node 2's leaves)
    "{ page { edges { node { title leaves { name must } } } } }",
    "{ page { nodes { title looseLeaves { name must } } } }",
    # an error in a nested field (each node's leaf), located at its path
    "{ page { edges { node { title leaf { name fails } } } } }",
    # a resolver using more of info than the context; a parent not held (awaited)
    "{ page { edges { node { title where } } } }",
    "{ page { nodes { title parent { title parent { title upper } } } } }",
    # a union (abstract: the ordinary path) inside a plain subtree
    "{ page { edges { node { title either { __typename ... on Other { label } } } } } }",
    # a subclass instance where Strawberry checks the type (node 4's leaf)
    "{ page { nodes { leaf { name } } } }",
    # one page without node 3 and 4: everything plain
    "{ page(count: 2) { edges { cursor node { id title upper parent { id } } } } }",
]


@pytest.mark.parametrize("query", QUERIES)
async def test_the_same_answer_and_errors_as_graphql_core(query: str) -> None:
    expected = await _schema(None).execute(query, context_value={"held": {}})
    for executor in (PlainFieldsExecutor, PlainEventsExecutor):
        found = await _schema(executor).execute(query, context_value={"held": {}})
        assert repr(found.data) == repr(expected.data)  # the same keys in the same order
        assert [(e.message, e.path, e.locations) for e in found.errors or []] == [
            (e.message, e.path, e.locations) for e in expected.errors or []
        ]


SKIPPED = """query($with: Boolean!, $without: Boolean!) { page {
  edges { node { title parent @include(if: $with) { id } upper @skip(if: $without) } } } }"""


FLAGS = [(True, False), (False, True), (True, True), (False, False)]


@pytest.mark.parametrize("flags", FLAGS)
async def test_include_and_skip_with_variables(flags: tuple[bool, bool]) -> None:
    variables = {"with": flags[0], "without": flags[1]}
    expected = await _schema(None).execute(
        SKIPPED, variable_values=variables, context_value={"held": {}}
    )
    found = await _schema(PlainFieldsExecutor).execute(
        SKIPPED, variable_values=variables, context_value={"held": {}}
    )
    assert repr(found.data) == repr(expected.data)
    assert found.errors is None and expected.errors is None


async def test_plans_are_kept_across_requests_per_directive_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given one schema whose ParserCache hands each request of the same text
    # the same nodes, and the same operation asked with its directives'
    # variables changing between requests
    schema = strawberry.Schema(
        query=Query,
        types=[Leaf],
        execution_context_class=PlainFieldsExecutor,
        extensions=[lambda: ParserCache(maxsize=8)],
    )
    expected = {}
    for flags in FLAGS:
        variables = {"with": flags[0], "without": flags[1]}
        answer = await _schema(None).execute(
            SKIPPED, variable_values=variables, context_value={"held": {}}
        )
        expected[flags] = repr(answer.data)
    steps: list[str] = []
    step = PlainFieldsExecutor._step

    def counting(self: PlainFieldsExecutor, parent_type: Any, key: str, details: Any) -> Any:
        steps.append(key)
        return step(self, parent_type, key, details)

    monkeypatch.setattr(PlainFieldsExecutor, "_step", counting)
    compiled = []
    # When each is asked twice, interleaved
    for flags in [*FLAGS, *FLAGS]:
        steps.clear()
        variables = {"with": flags[0], "without": flags[1]}
        found = await schema.execute(SKIPPED, variable_values=variables, context_value={"held": {}})
        # Then each answers as graphql-core does for its own values
        assert found.errors is None
        assert repr(found.data) == expected[flags]
        compiled.append(len(steps))
    # and its plans were compiled by its first request only
    assert compiled[len(FLAGS) :] == [0] * len(FLAGS)
    assert all(compiled[: len(FLAGS)])


async def test_only_the_irregular_edges_take_the_ordinary_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ordinary: list[int] = []
    original = PlainFieldsExecutor.complete_list_item_value

    def counting(self: PlainFieldsExecutor, item: Any, *args: Any) -> bool:
        ordinary.append(item.node.key if isinstance(item, Edge) else item)
        return original(self, item, *args)

    monkeypatch.setattr(PlainFieldsExecutor, "complete_list_item_value", counting)
    query = "{ page { edges { cursor node { id title parent { id } } } } }"
    found = await _schema(PlainFieldsExecutor).execute(query, context_value={"held": {}})
    assert found.errors is None
    assert found.data is not None
    # node 4's parent (3) is not held: its resolver's awaitable is not awaited
    # by the plan; that edge alone is completed (and awaited) by graphql-core
    assert ordinary == [4]
    edges = found.data["page"]["edges"]
    assert [e["node"]["parent"] for e in edges] == [
        None,
        *({"id": relay.to_base64("Entry", k)} for k in range(1, 7)),
    ]
    assert edges[0] == {
        "cursor": "c1",
        "node": {"id": "RW50cnk6MQ==", "title": "n1", "parent": None},  # base64("Entry:1")
    }


def test_a_context_only_resolver_gets_only_the_context() -> None:
    stand_in = ContextInfo({"held": {}})
    assert stand_in.context == {"held": {}}
    with pytest.raises(AttributeError):
        stand_in.path  # type: ignore[attr-defined]  # noqa: B018
    schema = _schema(PlainFieldsExecutor)._schema  # type: ignore[attr-defined]
    node = schema.get_type("Entry")
    read = execution._value_reader(node.fields["parent"])
    assert read is not None and read[1] is True
    assert execution._value_reader(node.fields["leaf"]) is not None  # an attribute
    # without the mark, a resolver taking info is called the ordinary way
    unmarked = schema.get_type("Query").fields["page"]
    assert execution._value_reader(unmarked) is None


# The API's own schema, on the test database (SQLite or PostgreSQL): a
# lineage with a fork read in pages of 2 (a page's first parent is not held),
# and a session's turns, by the plan and by graphql-core alone.

LINEAGE = """query($id: ID!, $after: String, $with: Boolean!) { space(id: $id) {
  lineage(first: 2, after: $after) {
    pageInfo { hasNextPage endCursor startCursor hasPreviousPage }
    edges { cursor ...E } } } }
fragment E on CheckpointEdge { node { __typename id shortHash t: title branchName createdAt
  decisions tasks sourceTurnRange { first last } baseSequence
  parent @include(if: $with) { id title parent { id } } mergeParent { id }
  ... on Node { id } } }"""
LINEAGE_ERRORS = """query($id: ID!) { space(id: $id) { lineage(first: 10) {
  edges { node { title ancestors(first: -1) { id } parent { title } } } } } }"""
TURNS = """query($id: ID!, $after: String) { session(id: $id) {
  turns(first: 3, after: $after) { pageInfo { hasNextPage endCursor }
    edges { cursor node { __typename id role content sequenceNumber createdAt } }
    nodes { id role } } } }"""
NODE = """query($id: ID!) { node(id: $id) { __typename id
  ... on Checkpoint { title parent { id title } } } }"""


async def _pages(
    gql: GraphQLClient, query: str, key: str, **variables: Any
) -> list[dict[str, Any]]:
    bodies, after = [], None
    while True:
        body = await gql.raw(query, after=after, **variables)
        bodies.append(body)
        data = body["data"]
        page = data["space"][key] if "space" in data else data["session"][key]
        if not page["pageInfo"]["hasNextPage"]:
            return bodies
        after = page["pageInfo"]["endCursor"]


async def test_the_api_answers_as_graphql_core(
    gql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    space = await create_space(gql)
    session = (await create_session(gql, spaceId=space, title="t"))["id"]
    saved = []
    for i in range(5):
        await send(gql, session, f"step {i}")
        saved.append(await checkpoint(gql, session, f"C{i}", decisions=[f"d{i}"]))
    fork = await gql(
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=saved[1]["id"],
    )
    await checkpoint(gql, fork["forkSession"]["session"]["id"], "Alt")

    async def answers() -> list[Any]:
        return [
            await _pages(gql, LINEAGE, "lineage", id=space, **{"with": True}),
            await _pages(gql, LINEAGE, "lineage", id=space, **{"with": False}),
            await gql.raw(LINEAGE_ERRORS, id=space),
            await _pages(gql, TURNS, "turns", id=session),
            await gql.raw(NODE, id=saved[3]["id"]),
        ]

    completed: list[object] = []
    complete = execution._complete

    def counting(source: object, *args: Any) -> dict[str, Any]:
        completed.append(source)
        return complete(source, *args)

    monkeypatch.setattr(execution, "_complete", counting)
    fast = await answers()
    # the plans did answer: every edge, node and parent of the lineage pages…
    assert len(completed) > 30
    monkeypatch.setattr(execution, "_complete", complete)
    plain_allowed: list[bool] = []
    original = PlainFieldsExecutor.__init__

    def ordinary(self: PlainFieldsExecutor, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._plain_allowed = False  # every field by graphql-core's own path
        plain_allowed.append(False)

    monkeypatch.setattr(PlainFieldsExecutor, "__init__", ordinary)
    expected = await answers()
    assert plain_allowed  # the ordinary path did answer
    assert repr(fast) == repr(expected)
    lineage = fast[0]
    assert len(lineage) == 3  # 6 checkpoints in pages of 2
    nodes = [e["node"] for body in lineage for e in body["data"]["space"]["lineage"]["edges"]]
    assert [(n["t"], n["branchName"], n["parent"] and n["parent"]["title"]) for n in nodes] == [
        ("C0", "main", None),
        ("C1", "main", "C0"),
        ("C2", "main", "C1"),
        ("C3", "main", "C2"),
        ("C4", "main", "C3"),
        ("Alt", "alt", "C1"),
    ]
    assert nodes[3]["id"] == saved[3]["id"]
    assert nodes[3]["decisions"] == ["d3"]
    # the first node's error (a non-null list) nulls the lineage: one error
    assert [e["path"] for e in fast[2]["errors"]] == [
        ["space", "lineage", "edges", 0, "node", "ancestors"]
    ]
    assert fast[4]["data"]["node"]["parent"]["title"] == "C2"
