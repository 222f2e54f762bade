"""The reading tools with the SDK's own client, over stdio (`smriti mcp`) and
over streamable HTTP (/mcp of `smriti serve`, local mode): they answer what
GraphQL answers for the same data, and mistakes carry GraphQL's codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_types import TextContent

from api.graphql.core import ids
from tests.mcp.support import READING_TOOLS, SESSION_TOOLS, WRITING_TOOLS, agent, call
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.mcp_results import outcome
from tests.support.ops import create_space
from tests.support.servers import add_user


async def test_the_tools_are_listed_with_their_schemas(database_url: str, transport: str) -> None:
    async with agent(database_url, transport) as session:
        tools = (await session.list_tools()).tools
    assert [tool.name for tool in tools] == READING_TOOLS + WRITING_TOOLS + SESSION_TOOLS
    assert len(tools) == 20
    by_name = {tool.name: tool for tool in tools}
    assert by_name["show_checkpoint"].input_schema["properties"]["hash"] == {
        "type": "string",
        "minLength": 4,
    }
    assert by_name["list_checkpoints"].input_schema["required"] == ["spaceId"]
    output = by_name["verify_lineage"].output_schema
    assert output is not None and output["required"] == ["ok", "checked", "firstBroken"]
    reading = [*READING_TOOLS, "preview_merge", "show_session"]
    assert [n for n, t in by_name.items() if t.annotations.read_only_hint] == reading  # type: ignore[union-attr]
    assert by_name["regenerate"].input_schema["required"] == ["turnId"]
    assert by_name["update_session_settings"].input_schema["required"] == ["sessionId", "settings"]
    assert by_name["compare_checkpoints"].input_schema["required"] == ["a", "b"]
    compared = by_name["compare_checkpoints"].output_schema
    assert compared is not None and compared["required"] == [
        "a",
        "b",
        "decisions",
        "tasks",
        "openQuestions",
        "entities",
        "commonAncestor",
    ]
    saving = by_name["save_checkpoint"].input_schema
    assert saving["required"] == ["sessionId"]
    assert saving["properties"]["markdown"]["type"] == "string"
    assert by_name["start_session"].input_schema["required"] == []
    assert by_name["start_session"].input_schema["properties"]["memoryScope"] == {
        "type": "string",
        "enum": ["LATEST_1", "LATEST_3"],
    }
    assert by_name["send_message"].input_schema["required"] == ["sessionId", "content"]
    sent = by_name["send_message"].output_schema
    assert sent is not None and sent["required"] == ["userTurn", "reply", "finishReason"]
    hit = by_name["search"].output_schema["properties"]["hits"]["items"]  # type: ignore[index]
    assert list(hit["properties"]) == [
        "kind",
        "id",
        "sessionId",
        "sequenceNumber",
        "checkpointId",
        "spaceId",
        "snippet",
    ]


async def test_each_tool_answers_as_graphql_does(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    c0, c1, c2 = built["main"]
    graphql = await gql(
        """query($s: ID!, $c: ID!) {
          spaces(first: 50) { edges { node { id name description } } }
          checkpoint(id: $c) { id hash title summary branchName decisions parent { id } }
          verifyLineage(spaceId: $s) { ok checked }
          search(query: "left", spaceId: $s) { edges { kind node {
            ... on Checkpoint { id } ... on Turn { id } ... on Session { id } ... on Space { id }
          } } }
          turnHits: search(query: "step", first: 50) { ...followed }
          sessionHits: search(query: "reader", first: 50) { ...followed }
          spaceHits: search(query: "lineage", first: 50) { ...followed }
          checkpointHits: search(query: "left", first: 50) { ...followed }
        }
        fragment followed on SearchHitConnection { edges { kind node {
          ... on Checkpoint { id space { id } }
          ... on Turn { id sequenceNumber session { id } }
          ... on Session { id inSpace: space { id } }
          ... on Space { id }
        } } }""",
        s=built["space"],
        c=c2["id"],
    )
    async with agent(database_url, transport) as session:
        spaces = await call(session, "list_spaces")
        shown = await call(session, "show_checkpoint", checkpointId=key(c2["id"]))
        by_prefix = await call(session, "show_checkpoint", spaceId=space, hash=c1["hash"][:8])
        line = await call(session, "list_checkpoints", spaceId=space)
        alt = await call(session, "list_checkpoints", spaceId=space, branch="alt", first=1)
        verified = await call(session, "verify_lineage", spaceId=space)
        found = await call(session, "search", query="left", spaceId=space)
        follow = {
            kind: await call(session, "search", query=query, first=50)
            for kind, query in FOLLOWED.items()
        }
    assert [(s["id"], s["name"], s["description"]) for s in spaces["spaces"]] == [
        (key(e["node"]["id"]), e["node"]["name"], e["node"]["description"])
        for e in graphql["spaces"]["edges"]
    ]
    expected = graphql["checkpoint"]
    checkpoint = shown["checkpoint"]
    assert {k: checkpoint[k] for k in ("hash", "title", "summary", "branchName", "decisions")} == {
        k: expected[k] for k in ("hash", "title", "summary", "branchName", "decisions")
    }
    assert (checkpoint["id"], checkpoint["parentId"]) == (key(c2["id"]), key(c1["id"]))
    assert by_prefix["checkpoint"]["id"] == key(c1["id"])
    assert [c["title"] for c in line["checkpoints"]] == ["C2", "C1", "C0"]
    assert [c["hash"] for c in line["checkpoints"]] == [c2["hash"], c1["hash"], c0["hash"]]
    assert [c["title"] for c in alt["checkpoints"]] == ["Alt1"]
    assert verified == {"ok": True, "checked": 4, "firstBroken": None}
    assert graphql["verifyLineage"] == {"ok": True, "checked": 4}
    hits = [(h["kind"], h["id"]) for h in found["hits"]]
    assert hits == [(e["kind"].lower(), key(e["node"]["id"])) for e in graphql["search"]["edges"]]
    assert ("checkpoint", key(built["alt"]["id"])) in hits
    # Each hit says how to follow it, as GraphQL's node does.
    for kind in FOLLOWED:
        hits = follow[kind]["hits"]
        assert [{k: v for k, v in h.items() if k != "snippet"} for h in hits] == [
            _followed(e["kind"], e["node"]) for e in graphql[f"{kind}Hits"]["edges"]
        ]
        assert kind in {h["kind"] for h in hits}


# A search that finds each kind of hit (GraphQL's alias: the kind + "Hits").
FOLLOWED = {"turn": "step", "session": "reader", "space": "lineage", "checkpoint": "left"}


def _followed(kind: str, node: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL search hit as the search tool answers it (without its snippet)."""
    hit = {"kind": kind.lower(), "id": key(node["id"])}
    if kind == "TURN":
        return {
            **hit,
            "sessionId": key(node["session"]["id"]),
            "sequenceNumber": node["sequenceNumber"],
        }
    if kind == "CHECKPOINT":
        return {**hit, "checkpointId": key(node["id"]), "spaceId": key(node["space"]["id"])}
    if kind == "SESSION":
        space = node["inSpace"]
        return {**hit, "sessionId": key(node["id"]), "spaceId": key(space["id"]) if space else None}
    return {**hit, "spaceId": key(node["id"])}


async def test_mistakes_carry_the_codes_and_words_of_graphql(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    async with agent(database_url, transport) as session:
        missing = await session.call_tool("show_checkpoint", {"checkpointId": 999})
        no_space = await session.call_tool("verify_lineage", {"spaceId": 999})
        ambiguous_or_short = await session.call_tool(
            "show_checkpoint", {"spaceId": space, "hash": "zz"}
        )
        empty = await session.call_tool("search", {"query": "   "})
        not_a_number = await session.call_tool("show_checkpoint", {"checkpointId": "abc"})
        unknown = await session.call_tool("verify_lineage", {"spaceId": space, "colour": "red"})
    # GraphQL's reads answer null for an unknown id; its mutations name it.
    graphql = await gql(
        """mutation($c: ID!, $s: ID!) {
          forkSession(input: {checkpointId: $c}) { errors { code message field } }
          createSession(input: {spaceId: $s}) { errors { code message field } }
        }""",
        c=ids.encode("Checkpoint", 999),
        s=ids.encode("Space", 999),
    )
    assert missing.is_error is True
    assert outcome(missing) == {"error": graphql["forkSession"]["errors"][0]}
    assert outcome(missing) == {
        "error": {"code": "NOT_FOUND", "message": "No such checkpoint.", "field": "checkpointId"}
    }
    assert missing.content == [TextContent(text="NOT_FOUND: No such checkpoint.")]
    assert outcome(no_space) == {"error": graphql["createSession"]["errors"][0]}
    assert ambiguous_or_short.is_error is True
    graphql_search = (await gql.raw('query { search(query: "   ") { edges { cursor } } }'))[
        "errors"
    ]
    assert outcome(empty)["error"]["code"] == graphql_search[0]["extensions"]["code"]
    assert outcome(empty)["error"]["message"] == graphql_search[0]["message"]
    assert outcome(not_a_number) == {
        "error": {
            "code": "INVALID",
            "message": "`checkpointId` is a positive whole number.",
            "field": "checkpointId",
        }
    }
    assert outcome(unknown) == {
        "error": {"code": "INVALID", "message": "Unknown argument `colour`.", "field": "colour"}
    }


async def test_space_state_of_a_new_space_says_it_has_no_checkpoint_yet(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    space = key(await create_space(gql, "Fresh"))
    async with agent(database_url, transport) as session:
        now = await call(session, "space_state", spaceId=space)
        later = await call(session, "space_state", spaceId=space, since="2026-01-01T00:00:00")
        since = await session.call_tool("space_state", {"spaceId": space, "since": 1})
        other = await session.call_tool("space_state", {"spaceId": space, "branch": "alt"})
    brief = f"Space {space} 'Fresh', branch main: no checkpoint yet."
    assert now == {
        "brief": brief,
        "tokens": -(-len(brief) // 4),
        "headId": None,
        "branches": [],
        "changedIds": [],
    }
    assert later["brief"] == brief and later["changedIds"] == []
    assert since.is_error and outcome(since) == {
        "error": {
            "code": "NOT_FOUND",
            "message": "No such checkpoint in this space.",
            "field": "since",
        }
    }
    assert other.is_error and outcome(other) == {
        "error": {
            "code": "NOT_FOUND",
            "message": 'The space has no branch "alt".',
            "field": "branch",
        }
    }


async def test_space_state_is_a_brief_of_the_branch_and_what_changed_since(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    c0, c1, c2 = built["main"]
    graphql = await gql(
        "query($s: ID!) { space(id: $s) { branches { name head { id } } } }", s=built["space"]
    )
    async with agent(database_url, transport) as session:
        now = await call(session, "space_state", spaceId=space)
        since = await call(session, "space_state", spaceId=space, since=key(c0["id"]))
        from_alt = await call(
            session, "space_state", spaceId=space, branch="alt", since=key(c2["id"])
        )
        later = await call(session, "space_state", spaceId=space, since="2999-01-01T00:00:00")
        bad = await session.call_tool("space_state", {"spaceId": space, "since": "yesterday"})
    assert now["headId"] == key(c2["id"])
    assert now["branches"] == [
        {"name": b["name"], "headId": key(b["head"]["id"])} for b in graphql["space"]["branches"]
    ]
    alt = built["alt"]
    first, *rest = now["brief"].split("\n")
    assert first.startswith(
        f"Space {space} 'Lineage', branch main: head {key(c2['id'])} {c2['hash'][:7]} \"C2\" ("
    )
    assert first.endswith(" UTC)")
    assert rest == [
        "Summary: summary 2",
        "Other branches:",
        f'- alt → {key(alt["id"])} {alt["hash"][:7]} "Alt1"',
    ]
    assert now["tokens"] == -(-len(now["brief"]) // 4)  # the offline model's estimate
    assert since["changedIds"] == [key(c1["id"]), key(c2["id"])]
    assert since["brief"].split("\n")[4] == (
        f'Since checkpoint {key(c0["id"])} {c0["hash"][:7]} "C0", 2 checkpoint(s) on main:'
    )
    # From main's head, the alt branch's change is what it added after C0.
    assert from_alt["changedIds"] == [key(alt["id"])]
    assert from_alt["brief"].split("\n")[-1] == "Decisions added: go left"
    assert later["changedIds"] == []
    assert later["brief"].split("\n")[-1] == ("Nothing changed on main since 2999-01-01 00:00 UTC.")
    assert outcome(bad) == {
        "error": {
            "code": "INVALID",
            "message": "`since` is a checkpoint id or an ISO 8601 time.",
            "field": "since",
        }
    }


def _refused(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", "mcp", "--database", database_url, *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_with_accounts_it_says_whose_data_and_names_no_stranger(database_url: str) -> None:
    add_user(database_url, "alice", "correct horse battery")
    unnamed = _refused(database_url)
    stranger = _refused(database_url, "--user", "nobody")
    assert (unnamed.returncode, unnamed.stderr) == (
        2,
        "smriti: This database has accounts: say whose data with --user NAME.\n",
    )
    assert stranger.returncode == 4


def test_a_missing_sqlite_file_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.db"
    done = _refused(f"sqlite://{missing}")
    assert done.returncode == 3
    assert not missing.exists()
