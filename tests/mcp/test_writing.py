"""The writing tools with the SDK's own client, over stdio and streamable HTTP:
an agent's flow checked step by step against GraphQL, a read-only token
refused as GraphQL refuses it (and nothing written), hostile input refused
with GraphQL's codes and words."""

from __future__ import annotations

from typing import Any

from tests.mcp.support import (
    CHECKPOINT,
    PASSWORD,
    PREVIEW,
    agent,
    call,
    counts,
    gid,
    graphql,
    http_agent,
    run,
    token,
)
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.mcp_results import outcome
from tests.support.ops import checkpoint, create_session, create_space, send
from tests.support.servers import SmritiServer, add_user

MERGE = """mutation($s: ID!, $into: String!, $from: ID!) {
  mergeCheckpoints(input: {spaceId: $s, into: $into, from: $from, title: "M"}) {
    fastForward errors { code message field } } }"""


async def test_an_agent_continues_forks_and_merges_as_graphql_sees_it(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space, c2 = key(built["space"]), built["main"][2]
    before = await counts(gql, built["space"])
    async with agent(database_url, transport) as session:
        state = await call(session, "space_state", spaceId=space)
        found = await call(session, "search", query="left", spaceId=space)
        assert ("checkpoint", key(built["alt"]["id"])) in [
            (h["kind"], h["id"]) for h in found["hits"]
        ]
        # Agent A: a branch from C2, a dry run, then the checkpoint for real.
        forked = await call(session, "fork", checkpointId=key(c2["id"]), branch="agent-a")
        assert forked == {
            "sessionId": forked["sessionId"],
            "spaceId": space,
            "branchName": "agent-a",
            "title": "Fork of C2",
        }
        dry = await call(
            session,
            "save_checkpoint",
            sessionId=forked["sessionId"],
            title="  A1 ",
            decisions=["Use SQLite", "Use SQLite"],
            dryRun=True,
        )
        assert await counts(gql, built["space"]) == (
            before[0],
            {**before[1], "agent-a": c2["id"]},
        )
        assert dry["saved"] is False
        assert (dry["content"]["title"], dry["content"]["decisions"]) == ("A1", ["Use SQLite"])
        assert dry["carried"]["fromCheckpointId"] == key(c2["id"])
        a1 = (
            await call(
                session,
                "save_checkpoint",
                sessionId=forked["sessionId"],
                title="A1",
                decisions=["Use SQLite"],
            )
        )["checkpoint"]
        # Main fast-forwards to A1.
        preview_ff = await call(
            session, "preview_merge", spaceId=space, into="main", fromId=a1["id"]
        )
        ff = await call(session, "merge", spaceId=space, into="main", fromId=a1["id"], title="M")
        # Agent B respells the decision on its branch while A drops it: a conflict.
        b = await call(session, "fork", checkpointId=a1["id"], branch="agent-b")
        b1 = (
            await call(
                session,
                "save_checkpoint",
                sessionId=b["sessionId"],
                title="B1",
                decisions=["use sqlite!"],
                tasks=["write the tests"],
            )
        )["checkpoint"]
        a2 = (await call(session, "save_checkpoint", sessionId=forked["sessionId"], title="A2"))[
            "checkpoint"
        ]
        preview = await call(
            session, "preview_merge", spaceId=space, into="agent-a", fromId=b1["id"]
        )
        refused = await session.call_tool(
            "merge", {"spaceId": space, "into": "agent-a", "fromId": b1["id"], "title": "M"}
        )
        refused_count = await counts(gql, built["space"])
        # GraphQL refuses the unresolved merge with the same code and words.
        graphql_refused = await gql(
            MERGE, s=built["space"], into="agent-a", **{"from": gid("Checkpoint", b1["id"])}
        )
        merged = await call(
            session,
            "merge",
            spaceId=space,
            into="agent-a",
            fromId=b1["id"],
            title="Merged",
            resolutions=[{"field": "decisions", "item": "USE SQLITE", "keep": True}],
        )
        after = await call(session, "space_state", spaceId=space, branch="agent-a", since=a1["id"])
    assert state["headId"] == key(c2["id"])
    saved = (await gql(CHECKPOINT, c=gid("Checkpoint", a1["id"])))["checkpoint"]
    assert saved == {
        "hash": a1["hash"],
        "title": "A1",
        "objective": "",
        "summary": "",
        "decisions": ["Use SQLite"],
        "tasks": [],
        "branchName": "agent-a",
        "parent": {"id": c2["id"]},
        "mergeParent": None,
        "author": {"name": "local", "viaToken": None},
    }
    graphql_ff = await gql(
        PREVIEW, s=built["space"], into="main", **{"from": gid("Checkpoint", a1["id"])}
    )
    assert (preview_ff["fastForward"], preview_ff["upToDate"]) == (True, False)
    assert ff == {"fastForward": True, "checkpoint": a1}
    assert graphql_ff["previewMerge"]["upToDate"] is True  # main now holds A1
    assert preview["conflictCount"] == 1
    assert preview["lists"]["decisions"] == {
        "items": [],
        "conflicts": [{"text": "use sqlite!", "origin": "THEIRS"}],
    }
    assert preview["lists"]["tasks"] == {
        "items": [{"text": "write the tests", "origin": "THEIRS"}],
        "conflicts": [],
    }
    assert (preview["oursId"], preview["theirsId"], preview["ancestorId"]) == (
        a2["id"],
        b1["id"],
        a1["id"],
    )
    assert refused.is_error is True
    assert outcome(refused) == {"error": graphql_refused["mergeCheckpoints"]["errors"][0]}
    assert outcome(refused)["error"]["code"] == "CONFLICT"
    assert refused_count[0] == before[0] + 3  # A1, B1, A2: the refused merge wrote nothing
    result = merged["checkpoint"]
    assert merged["fastForward"] is False
    shown = (await gql(CHECKPOINT, c=gid("Checkpoint", result["id"])))["checkpoint"]
    assert shown["title"] == "Merged"
    assert shown["decisions"] == ["use sqlite!"]
    assert shown["tasks"] == ["write the tests"]
    assert (shown["parent"], shown["mergeParent"]) == (
        {"id": gid("Checkpoint", a2["id"])},
        {"id": gid("Checkpoint", b1["id"])},
    )
    assert shown["hash"] == result["hash"]
    assert after["headId"] == result["id"]
    # The merge brought B1 in: it changed the branch too.
    assert after["changedIds"] == [b1["id"], a2["id"], result["id"]]
    # The respelled decision is the same item (matched as compareCheckpoints matches).
    assert after["brief"].split("\n")[-2:] == [
        f'- {result["id"]} {result["hash"][:7]} "Merged"',
        "Tasks added: write the tests",
    ]
    assert (await counts(gql, built["space"]))[1]["agent-a"] == gid("Checkpoint", result["id"])


def writes(
    space: int, session: int, checkpoint: int, turns: dict[str, int]
) -> list[tuple[str, dict[str, Any]]]:
    """Every writing tool, on things that exist and the token's user may write
    (``turns``: send_message's userTurn and reply ids)."""
    message, reply = turns["userTurn"], turns["reply"]
    return [
        ("create_space", {"name": "Nope"}),
        ("fork", {"checkpointId": checkpoint, "branch": "nope"}),
        ("save_checkpoint", {"sessionId": session, "title": "Nope"}),
        ("save_checkpoint", {"sessionId": session, "title": "Nope", "dryRun": True}),
        ("merge", {"spaceId": space, "into": "main", "fromId": checkpoint, "title": "Nope"}),
        ("save_checkpoint", {"sessionId": session, "markdown": "# Nope"}),
        ("start_session", {"spaceId": space, "title": "Nope"}),
        ("send_message", {"sessionId": session, "content": "Nope"}),
        ("update_session_settings", {"sessionId": session, "settings": {"temperature": 1}}),
        ("branch_session", {"atTurnId": reply}),
        ("regenerate", {"turnId": reply}),
        ("edit_and_resend", {"turnId": message, "content": "Nope"}),
        ("continue_reply", {"turnId": reply}),
    ]


EVERYTHING = """{ spaces(first: 50) { edges { node { id branches { name head { id } }
  lineage(first: 100) { edges { node { id } } } } } }
  sessions(first: 50) { edges { node { id lastSequenceNumber } } } }"""


async def test_a_read_only_token_cannot_write_and_nothing_is_written(database_url: str) -> None:
    add_user(database_url, "alice", PASSWORD)
    writer = token(database_url, "alice")
    reader = token(database_url, "alice", "--read-only")
    with SmritiServer(database_url) as server:
        url = f"{server.base_url}/mcp"
        async with http_agent(url, writer["token"]) as session:
            space = (await run(session, "create_space", {"name": "Agents"}))["space"]["id"]
            started = await graphql(
                server,
                writer["token"],
                'mutation { createSession(input: {spaceId: "'
                + gid("Space", space)
                + '"}) { session { id } } }',
            )
            sid = key(started["createSession"]["session"]["id"])
            saved = await run(session, "save_checkpoint", {"sessionId": sid, "title": "C0"})
            sent = await run(session, "send_message", {"sessionId": sid, "content": "Hi"})
        before = await graphql(server, writer["token"], EVERYTHING)
        async with http_agent(url, reader["token"]) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            turns = {name: sent[name]["id"] for name in ("userTurn", "reply")}
            attempts = writes(space, sid, saved["checkpoint"]["id"], turns)
            settings = (await run(session, "show_session", {"sessionId": sid}))["session"]
            refusals = [await session.call_tool(name, args) for name, args in attempts]
        graphql_refused = (
            await graphql(
                server,
                reader["token"],
                'mutation { createSpace(input: {name: "Nope"}) { errors { code message field } } }',
            )
        )["createSpace"]["errors"][0]
        after = await graphql(server, writer["token"], EVERYTHING)
    assert graphql_refused == {
        "code": "FORBIDDEN",
        "message": "This API token is read-only: it cannot change anything.",
        "field": None,
    }
    assert [outcome(r) for r in refusals] == [{"error": graphql_refused}] * len(attempts)
    assert after == before
    (only,) = after["spaces"]["edges"]
    assert only["node"]["branches"] == [
        {"name": "main", "head": {"id": gid("Checkpoint", saved["checkpoint"]["id"])}}
    ]
    assert len(only["node"]["lineage"]["edges"]) == 1
    assert len(after["sessions"]["edges"]) == 1
    annotations = {name: t.annotations for name, t in tools.items()}
    assert [n for n, a in annotations.items() if a and not a.read_only_hint] == [
        "create_space",
        "fork",
        "save_checkpoint",
        "merge",
        "start_session",
        "send_message",
        "update_session_settings",
        "branch_session",
        "regenerate",
        "edit_and_resend",
        "continue_reply",
    ]
    assert settings["settings"]["temperature"] is None  # the refused settings were not set


async def test_an_agents_checkpoint_is_bylined_with_its_tokens_name(database_url: str) -> None:
    add_user(database_url, "alice", PASSWORD)
    writer = token(database_url, "alice")
    with SmritiServer(database_url) as server:
        async with http_agent(f"{server.base_url}/mcp", writer["token"]) as session:
            space = (await run(session, "create_space", {"name": "Agents"}))["space"]["id"]
            started = await graphql(
                server,
                writer["token"],
                'mutation { createSession(input: {spaceId: "'
                + gid("Space", space)
                + '"}) { session { id } } }',
            )
            sid = key(started["createSession"]["session"]["id"])
            saved = await call(session, "save_checkpoint", sessionId=sid, title="By agent")
        shown = await graphql(
            server,
            writer["token"],
            'query { checkpoint(id: "'
            + gid("Checkpoint", saved["checkpoint"]["id"])
            + '") { author { name viaToken } } }',
        )
    assert shown["checkpoint"]["author"] == {"name": "alice", "viaToken": "agent"}


async def test_hostile_input_gets_graphqls_typed_errors(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    sid = built["sessions"][0]
    huge = "x" * 20_001
    many = [f"item {i}" for i in range(51)]
    async with agent(database_url, transport) as session:
        long_summary = await session.call_tool(
            "save_checkpoint", {"sessionId": key(sid), "title": "T", "summary": huge}
        )
        too_many = await session.call_tool(
            "save_checkpoint", {"sessionId": key(sid), "title": "T", "decisions": many}
        )
        empty_title = await session.call_tool(
            "save_checkpoint", {"sessionId": key(sid), "title": "   "}
        )
        long_name = await session.call_tool("create_space", {"name": "n" * 201})
        bad_list = await session.call_tool(
            "save_checkpoint", {"sessionId": key(sid), "title": "T", "tasks": "one"}
        )
    expected = await gql(
        """mutation($s: ID!, $huge: String!, $many: [String!]!, $name: String!) {
          a: createCheckpoint(input: {sessionId: $s, title: "T", summary: $huge}) {
            errors { code message field } }
          b: createCheckpoint(input: {sessionId: $s, title: "T", decisions: $many}) {
            errors { code message field } }
          c: createCheckpoint(input: {sessionId: $s, title: "   "}) {
            errors { code message field } }
          d: createSpace(input: {name: $name}) { errors { code message field } }
        }""",
        s=sid,
        huge=huge,
        many=many,
        name="n" * 201,
    )
    got = [outcome(r) for r in (long_summary, too_many, empty_title, long_name)]
    assert got == [{"error": expected[k]["errors"][0]} for k in "abcd"]
    assert [g["error"]["code"] for g in got] == ["INVALID"] * 4
    assert outcome(bad_list) == {
        "error": {"code": "INVALID", "message": "`tasks` is a list of strings.", "field": "tasks"}
    }


WARNINGS = """query($input: PreviewMergeInput!) { previewMerge(input: $input) {
  warnings { field intoItemId intoText fromItemId fromText reason source } } }"""

FORK_RAIL = """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "rail"}) {
  session { id } } }"""


async def test_preview_merge_warns_of_contradictions_as_graphql_does(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await checkpoint(gql, main, "Base", decisions=["Go north"])
    rail = (await gql(FORK_RAIL, c=base["id"]))["forkSession"]["session"]["id"]
    await checkpoint(gql, main, "M1", decisions=["Go north", "Rent a campervan for the coast"])
    await send(gql, rail, "rail work")
    r1 = await checkpoint(gql, rail, "R1", decisions=["Go north", "Do not rent a campervan"])
    async with agent(database_url, transport) as session:
        result = await session.call_tool(
            "preview_merge", {"spaceId": key(space), "into": "main", "fromId": key(r1["id"])}
        )
    preview = outcome(result)
    expected = (await gql(WARNINGS, input={"spaceId": space, "into": "main", "from": r1["id"]}))[
        "previewMerge"
    ]["warnings"]
    assert [w["intoText"] for w in expected] == ["Rent a campervan for the coast"]
    # GraphQL's warnings, the field named as the tool's lists and resolutions name it.
    assert preview["warnings"] == [{**w, "field": "decisions"} for w in expected]
    assert preview["warnings"][0]["reason"] == (
        'Both mention "campervan", and only one of them says it negatively.'
    )
    assert preview["warnings"][0]["source"] == "HEURISTIC"
    assert result.content[0].text == (  # type: ignore[union-attr]
        "A merge with 0 conflict(s) to resolve. 1 likely contradiction(s) to read (warnings)."
    )


ITEMS = """query($c: ID!) { checkpoint(id: $c) { decisions
  decisionItems { id text } taskItems { id text } openQuestionItems { id text }
  entityItems { id text } } }"""


async def test_checkpoints_list_their_items_with_ids_as_graphql_does(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="main"))["id"]
    async with agent(database_url, transport) as session:
        saved = (
            await call(
                session,
                "save_checkpoint",
                sessionId=key(sid),
                title="Plan",
                decisions=["Go north", "Take the train"],
                tasks=["Book the hut"],
            )
        )["checkpoint"]
        shown = (await call(session, "show_checkpoint", checkpointId=saved["id"]))["checkpoint"]
        listed = (await call(session, "list_checkpoints", spaceId=key(space)))["checkpoints"]
    expected = (await gql(ITEMS, c=gid("Checkpoint", saved["id"])))["checkpoint"]
    assert [item["text"] for item in expected["decisionItems"]] == ["Go north", "Take the train"]
    assert len({item["id"] for item in expected["decisionItems"]}) == 2
    for found in (saved, shown, listed[0]):
        # The plain lists stay; `…Items` beside them, ids as GraphQL gives them.
        assert found["decisions"] == ["Go north", "Take the train"]
        assert found["tasks"] == ["Book the hut"]
        assert {k: found[k] for k in ITEM_KEYS} == {k: expected[k] for k in ITEM_KEYS}
    assert shown["openQuestionItems"] == shown["entityItems"] == []


ITEM_KEYS = ("decisionItems", "taskItems", "openQuestionItems", "entityItems")
