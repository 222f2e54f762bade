"""Space.lineageGraph: the whole lineage, compact and typed, in a constant number of statements."""

from __future__ import annotations

from typing import Any

from tests.support.graphql import GraphQLClient
from tests.support.lineage import build_lineage
from tests.support.merging import MERGE, diverged, merge_input
from tests.support.queries import count_statements

NODE = "id hash shortHash title branchName parentId mergeParentId createdAt"
GRAPH = f"""query($id: ID!, $first: Int, $after: String) {{ space(id: $id) {{
  lineageGraph(first: $first, after: $after) {{
    nodes {{ {NODE} }} branches {{ name headId }} hasNextPage endCursor }} }} }}"""
# The same checkpoints through the connection of full Checkpoint nodes.
LINEAGE = """query($id: ID!) { space(id: $id) { lineage(first: 1000) { edges { cursor node {
  id hash shortHash title branchName createdAt parent { id } mergeParent { id } } } } } }"""


async def merged_space(gql: GraphQLClient) -> dict[str, Any]:
    """main: Base → M1 → Merged (merging alt's A1); alt: Base → A1."""
    lab = await diverged(gql)
    data = await gql(MERGE, input=merge_input(lab, title="Merged"))
    assert data["mergeCheckpoints"]["errors"] == []
    return {**lab, "merged": data["mergeCheckpoints"]["checkpoint"]}


async def test_every_checkpoint_with_its_parents_and_the_branch_tips(gql: GraphQLClient) -> None:
    lab = await merged_space(gql)
    base, m1, a1, merged = (lab[k]["id"] for k in ("base", "m1", "a1", "merged"))
    graph = (await gql(GRAPH, id=lab["space"]))["space"]["lineageGraph"]
    edges = (await gql(LINEAGE, id=lab["space"]))["space"]["lineage"]["edges"]
    full = {e["node"]["id"]: e["node"] for e in edges}

    assert [
        (n["id"], n["title"], n["branchName"], n["parentId"], n["mergeParentId"])
        for n in graph["nodes"]
    ] == [
        (base, "Base", "main", None, None),
        (m1, "M1", "main", base, None),
        (a1, "A1", "alt", base, None),
        (merged, "Merged", "main", m1, a1),
    ]
    # hash, shortHash and createdAt exactly as the Checkpoint nodes spell them
    # (SQLite returns the raw query's timestamps as text, PostgreSQL as values).
    for node in graph["nodes"]:
        checkpoint = full[node["id"]]
        assert node == {
            "id": checkpoint["id"],
            "hash": checkpoint["hash"],
            "shortHash": checkpoint["hash"][:7],
            "title": checkpoint["title"],
            "branchName": checkpoint["branchName"],
            "parentId": (checkpoint["parent"] or {}).get("id"),
            "mergeParentId": (checkpoint["mergeParent"] or {}).get("id"),
            "createdAt": checkpoint["createdAt"],
        }
    assert graph["branches"] == [
        {"name": "alt", "headId": a1},
        {"name": "main", "headId": merged},
    ]
    assert graph["hasNextPage"] is False
    assert graph["endCursor"] == edges[-1]["cursor"]


async def test_pages_follow_the_end_cursor(gql: GraphQLClient) -> None:
    lab = await merged_space(gql)
    first = (await gql(GRAPH, id=lab["space"], first=3))["space"]["lineageGraph"]
    assert [n["title"] for n in first["nodes"]] == ["Base", "M1", "A1"]
    assert first["hasNextPage"] is True
    rest = (await gql(GRAPH, id=lab["space"], after=first["endCursor"]))["space"]["lineageGraph"]
    assert [n["title"] for n in rest["nodes"]] == ["Merged"]
    assert rest["hasNextPage"] is False
    empty = (await gql(GRAPH, id=lab["space"], after=rest["endCursor"]))["space"]["lineageGraph"]
    assert empty == {
        "nodes": [],
        "branches": [
            {"name": "alt", "headId": lab["a1"]["id"]},
            {"name": "main", "headId": lab["merged"]["id"]},
        ],
        "hasNextPage": False,
        "endCursor": None,
    }


async def test_bad_arguments_are_refused_by_name(gql: GraphQLClient) -> None:
    lab = await merged_space(gql)
    too_many = await gql.raw(GRAPH, id=lab["space"], first=20_001)
    assert [(e["message"], e["extensions"]["field"]) for e in too_many["errors"]] == [
        ("first must be between 0 and 20000.", "first")
    ]
    turns = await gql(
        """query($id: ID!) { session(id: $id) { turns(first: 1) { edges { cursor } } } }""",
        id=lab["main"],
    )
    foreign = turns["session"]["turns"]["edges"][0]["cursor"]
    refused = await gql.raw(GRAPH, id=lab["space"], after=foreign)
    assert [(e["message"], e["extensions"]["field"]) for e in refused["errors"]] == [
        ("after is a cursor from another list.", "after")
    ]


async def test_statements_do_not_grow_with_the_lineage(gql: GraphQLClient) -> None:
    small, _ = await build_lineage(gql, 2)
    large, _ = await build_lineage(gql, 12)
    with count_statements() as few:
        small_graph = await gql(GRAPH, id=small)
    with count_statements() as many:
        large_graph = await gql(GRAPH, id=large)
    assert len(small_graph["space"]["lineageGraph"]["nodes"]) == 2
    assert len(large_graph["space"]["lineageGraph"]["nodes"]) == 12
    # the space (ownership), the checkpoints, the branches
    assert len(few) == len(many) == 3
