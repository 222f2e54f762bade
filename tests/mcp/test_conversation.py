"""start_session, send_message, save_checkpoint from Markdown and
compare_checkpoints with the SDK's own client, over stdio and streamable HTTP,
each result checked against what GraphQL answers or sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.support import PASSWORD, agent, call, counts, gid, graphql, http_agent, run, token
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.mcp_results import outcome
from tests.support.servers import SmritiServer, add_user

TURNS = """query($s: ID!) { session(id: $s) { title branchName activeProvider activeModel
  memoryScope space { id } turns(first: 50) { edges { node {
    role content sequenceNumber finishReason provider model } } } } }"""

CHECKPOINT = """query($c: ID!) { checkpoint(id: $c) {
  title objective summary decisions tasks openQuestions entities parent { id } } }"""

COMPARE = """query($a: ID!, $b: ID!) { compareCheckpoints(a: $a, b: $b) {
  a { id } b { id } commonAncestor { id }
  decisions { onlyA onlyB shared } tasks { onlyA onlyB shared }
  openQuestions { onlyA onlyB shared } entities { onlyA onlyB shared } } }"""

PREVIEW = """query($s: ID!, $c: String!) {
  contextPreview(input: {sessionId: $s, content: $c}) { messages { role content } } }"""

SEND = """mutation($s: ID!, $c: String!, $m: String) {
  sendMessage(input: {sessionId: $s, content: $c, model: $m}) {
    userTurn { sequenceNumber content } assistantTurn { content finishReason }
    errors { code message field } } }"""

PLAN = """# Agent plan

## Objective
Ship the <importer>

## Summary
What the agent concluded.

## Decisions
- go left
- Use SQLite

## Tasks
- write the tests
"""


def turns_of(found: dict[str, Any]) -> list[dict[str, Any]]:
    return [edge["node"] for edge in found["session"]["turns"]["edges"]]


async def test_an_agent_talks_saves_from_markdown_and_compares_as_graphql_sees_it(
    gql: GraphQLClient, database_url: str, transport: str, providers_file: Path
) -> None:
    built = await forked_space(gql)
    space, (c0, _, c2), alt = key(built["space"]), built["main"], built["alt"]
    before = await counts(gql, built["space"])
    async with agent(database_url, transport, providers_file) as session:
        started = await call(session, "start_session", spaceId=space, title="Agent talk")
        sid = started["sessionId"]
        sent = await call(session, "send_message", sessionId=sid, content="Where are we?")
        dry = await call(session, "save_checkpoint", sessionId=sid, markdown=PLAN, dryRun=True)
        after_dry = await counts(gql, built["space"])
        saved = (await call(session, "save_checkpoint", sessionId=sid, markdown=PLAN))["checkpoint"]
        compared = await call(session, "compare_checkpoints", a=key(alt["id"]), b=saved["id"])
        # The export of what was saved is Markdown save_checkpoint reads back.
        exported = await session.read_resource(f"smriti://checkpoints/{saved['id']}")
        text = exported.contents[0].text  # type: ignore[union-attr]
        again = await call(session, "save_checkpoint", sessionId=sid, markdown=text, dryRun=True)
    seen = await gql(TURNS, s=gid("Session", sid))
    assert started == {
        "sessionId": sid,
        "spaceId": space,
        "branchName": seen["session"]["branchName"],
        "title": "Agent talk",
        "model": "offline/echo",
        "memoryScope": seen["session"]["memoryScope"],
    }
    assert (seen["session"]["space"], seen["session"]["title"]) == (
        {"id": built["space"]},
        "Agent talk",
    )
    (user, reply) = turns_of(seen)
    assert sent == {
        "userTurn": {
            "id": sent["userTurn"]["id"],
            "sessionId": sid,
            "sequenceNumber": 1,
            "role": "USER",
            "content": "Where are we?",
            "model": "offline/echo",
            "finishReason": None,
            "createdAt": sent["userTurn"]["createdAt"],
        },
        "reply": {
            "id": sent["reply"]["id"],
            "sessionId": sid,
            "sequenceNumber": 2,
            "role": "ASSISTANT",
            "content": reply["content"],
            "model": "offline/echo",
            "finishReason": "STOP",
            "createdAt": sent["reply"]["createdAt"],
        },
        "finishReason": "STOP",
    }
    assert (user["content"], user["sequenceNumber"]) == ("Where are we?", 1)
    assert (reply["role"], reply["finishReason"], reply["sequenceNumber"]) == (
        "ASSISTANT",
        "STOP",
        2,
    )
    assert reply["content"].startswith("Offline echo \u2014")
    content = {
        "title": "Agent plan",
        "objective": "Ship the <importer>",
        "summary": "What the agent concluded.",
        "decisions": ["go left", "Use SQLite"],
        "tasks": ["write the tests"],
        "openQuestions": [],
        "entities": [],
    }
    assert (dry["saved"], dry["content"]) == (False, content)
    assert dry["carried"]["fromCheckpointId"] == key(c2["id"])
    assert after_dry == before  # the dry run wrote nothing
    shown = (await gql(CHECKPOINT, c=gid("Checkpoint", saved["id"])))["checkpoint"]
    assert shown == {**content, "parent": {"id": c2["id"]}}
    assert again["content"] == content
    graphql_compared = (await gql(COMPARE, a=alt["id"], b=gid("Checkpoint", saved["id"])))[
        "compareCheckpoints"
    ]
    assert graphql_compared["commonAncestor"] == {"id": c0["id"]}
    assert compared["commonAncestor"]["id"] == key(c0["id"])
    assert (compared["a"]["id"], compared["b"]["id"]) == (key(alt["id"]), saved["id"])
    lists = ("decisions", "tasks", "openQuestions", "entities")
    assert {name: compared[name] for name in lists} == {
        name: graphql_compared[name] for name in lists
    }
    assert compared["decisions"] == {"onlyA": [], "onlyB": ["Use SQLite"], "shared": ["go left"]}


async def test_the_model_gets_what_context_preview_shows_and_a_failed_call_keeps_the_turn(
    gql: GraphQLClient,
    database_url: str,
    transport: str,
    providers_file: Path,
    fake_openai: FakeOpenAI,
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    async with agent(database_url, transport, providers_file) as session:
        started = await call(
            session, "start_session", spaceId=space, title="Lab", model="lab/my-model"
        )
        sid = gid("Session", started["sessionId"])
        preview = (await gql(PREVIEW, s=sid, c="What next?"))["contextPreview"]
        fake_openai.reply("Write the tests.", finish="length")
        sent = await call(
            session, "send_message", sessionId=started["sessionId"], content="What next?"
        )
        fake_openai.fail(401)
        failed = await session.call_tool(
            "send_message", {"sessionId": started["sessionId"], "content": "And then?"}
        )
    request = fake_openai.requests[0]
    assert [{"role": m["role"], "content": m["content"]} for m in request["messages"]] == (
        preview["messages"]
    )
    assert preview["messages"][-1] == {"role": "user", "content": "What next?"}
    assert (sent["reply"]["content"], sent["finishReason"]) == ("Write the tests.", "LENGTH")
    assert sent["reply"]["model"] == "lab/my-model"
    fake_openai.fail(401)
    graphql_failed = (await gql(SEND, s=sid, c="Once more?"))["sendMessage"]
    assert failed.is_error is True
    assert outcome(failed) is not None
    assert outcome(failed)["error"] == graphql_failed["errors"][0]
    assert outcome(failed)["error"]["code"] == "PROVIDER_AUTH"
    assert outcome(failed)["userTurn"]["sequenceNumber"] == 3
    assert outcome(failed)["userTurn"]["content"] == "And then?"
    assert graphql_failed["userTurn"] == {"sequenceNumber": 4, "content": "Once more?"}
    assert graphql_failed["assistantTurn"] is None
    # Both kept the user's turn, and neither wrote a reply.
    assert [(t["role"], t["content"]) for t in turns_of(await gql(TURNS, s=sid))] == [
        ("USER", "What next?"),
        ("ASSISTANT", "Write the tests."),
        ("USER", "And then?"),
        ("USER", "Once more?"),
    ]


EVERYTHING = """{ sessions(first: 50) { edges { node { id activeModel lastSequenceNumber } } } }"""


async def test_a_model_kept_for_admins_is_refused_to_others_and_nothing_is_written(
    database_url: str,
) -> None:
    add_user(database_url, "root", PASSWORD, admin=True)
    add_user(database_url, "bob", PASSWORD)
    admin, bob = token(database_url, "root"), token(database_url, "bob")
    with SmritiServer(database_url) as server:
        kept = await graphql(
            server,
            admin["token"],
            'mutation { setModelAccess(input: {model: "offline/echo", adminsOnly: true}) '
            "{ adminsOnly errors { code } } }",
        )
        async with http_agent(f"{server.base_url}/mcp", bob["token"]) as session:
            space = (await run(session, "create_space", {"name": "Bob's"}))["space"]["id"]
            before = await graphql(server, bob["token"], EVERYTHING)
            refused_start = await session.call_tool(
                "start_session", {"spaceId": space, "model": "offline/echo"}
            )
            after_start = await graphql(server, bob["token"], EVERYTHING)
            started = await run(session, "start_session", {"spaceId": space})
            refused_send = await session.call_tool(
                "send_message",
                {"sessionId": started["sessionId"], "content": "hi", "model": "offline/echo"},
            )
            after_send = await graphql(server, bob["token"], EVERYTHING)
        graphql_refused = await graphql(
            server,
            bob["token"],
            'mutation { createSession(input: {spaceId: "'
            + gid("Space", space)
            + '", model: "offline/echo"}) { session { id } errors { code message field } } '
            'sendMessage(input: {sessionId: "'
            + gid("Session", started["sessionId"])
            + '", content: "hi", model: "offline/echo"}) { userTurn { id } '
            "errors { code message field } } }",
        )
        last = await graphql(server, bob["token"], EVERYTHING)
    assert kept["setModelAccess"] == {"adminsOnly": True, "errors": []}
    forbidden = {
        "code": "FORBIDDEN",
        "message": 'The model "offline/echo" is for admins only.',
        "field": "model",
    }
    assert graphql_refused["createSession"] == {"session": None, "errors": [forbidden]}
    assert graphql_refused["sendMessage"] == {"userTurn": None, "errors": [forbidden]}
    assert outcome(refused_start) == {"error": forbidden}
    assert outcome(refused_send) == {"error": forbidden}
    assert before == after_start == {"sessions": {"edges": []}}
    assert started["model"] != "offline/echo"
    assert (
        after_send
        == last
        == {
            "sessions": {
                "edges": [
                    {
                        "node": {
                            "id": gid("Session", started["sessionId"]),
                            "activeModel": started["model"].split("/", 1)[1],
                            "lastSequenceNumber": 0,
                        }
                    }
                ]
            }
        }
    )


async def test_hostile_input_to_the_conversation_tools_gets_graphqls_typed_errors(
    gql: GraphQLClient, database_url: str, transport: str, providers_file: Path
) -> None:
    built = await forked_space(gql)
    sid = key(built["sessions"][0])
    huge = "x" * (1024 * 1024 + 1)  # one byte over the largest message
    async with agent(database_url, transport, providers_file) as session:
        attempts = {
            "oversized": ("send_message", {"sessionId": sid, "content": huge}),
            "empty": ("send_message", {"sessionId": sid, "content": "  "}),
            "no_session": ("send_message", {"sessionId": 999, "content": "hi"}),
            "no_space": ("start_session", {"spaceId": 999}),
            "unknown_model": ("start_session", {"model": "nope/nothing"}),
            "long_title": ("start_session", {"title": "t" * 201}),
            "bad_scope": ("start_session", {"memoryScope": "ALL"}),
            "bad_id": ("send_message", {"sessionId": "abc", "content": "hi"}),
            "unknown_arg": ("send_message", {"sessionId": sid, "content": "hi", "colour": 1}),
            "no_a": ("compare_checkpoints", {"a": 999, "b": key(built["alt"]["id"])}),
            "both": ("save_checkpoint", {"sessionId": sid, "markdown": "# T", "tasks": ["x"]}),
            "heading": ("save_checkpoint", {"sessionId": sid, "markdown": "# T\n## Risks\n- r"}),
        }
        got = {
            name: outcome(await session.call_tool(tool, args))
            for name, (tool, args) in attempts.items()
        }
    expected = await gql(
        """mutation($s: ID!, $huge: String!, $none: ID!, $nospace: ID!, $title: String!) {
          oversized: sendMessage(input: {sessionId: $s, content: $huge}) {
            errors { code message field } }
          empty: sendMessage(input: {sessionId: $s, content: "  "}) {
            errors { code message field } }
          no_session: sendMessage(input: {sessionId: $none, content: "hi"}) {
            errors { code message field } }
          no_space: createSession(input: {spaceId: $nospace}) { errors { code message field } }
          unknown_model: createSession(input: {model: "nope/nothing"}) {
            errors { code message field } }
          long_title: createSession(input: {title: $title}) { errors { code message field } }
        }""",
        s=built["sessions"][0],
        huge=huge,
        none=gid("Session", 999),
        nospace=gid("Space", 999),
        title="t" * 201,
    )
    for name in ("oversized", "empty", "no_session", "no_space", "unknown_model", "long_title"):
        assert got[name] == {"error": expected[name]["errors"][0]}, name
    assert [got[n]["error"]["code"] for n in ("oversized", "empty", "no_session")] == [  # type: ignore[index]
        "CONTENT_TOO_LARGE",
        "EMPTY_CONTENT",
        "NOT_FOUND",
    ]
    assert got["bad_scope"] == {
        "error": {
            "code": "INVALID",
            "message": "`memoryScope` is LATEST_1 or LATEST_3.",
            "field": "memoryScope",
        }
    }
    assert got["bad_id"] == {
        "error": {
            "code": "INVALID",
            "message": "`sessionId` is a positive whole number.",
            "field": "sessionId",
        }
    }
    assert got["unknown_arg"] == {
        "error": {"code": "INVALID", "message": "Unknown argument `colour`.", "field": "colour"}
    }
    # GraphQL's compareCheckpoints answers null for a checkpoint it cannot find; its
    # use case says which one, as the tool does.
    assert got["no_a"] == {
        "error": {"code": "NOT_FOUND", "message": "No such checkpoint.", "field": "a"}
    }
    assert got["both"] == {
        "error": {
            "code": "INVALID",
            "message": "Give the checkpoint as `markdown` or as fields, not both: "
            "`tasks` is a field.",
            "field": "tasks",
        }
    }
    assert got["heading"] == {
        "error": {
            "code": "INVALID",
            "message": "Unknown heading `Risks`: the headings are Title, Objective, Summary, "
            "Decisions, Tasks, Open questions, Entities.",
            "field": "markdown",
        }
    }
    # Nothing of it was written: the session still has the one exchange it had.
    seen = turns_of(await gql(TURNS, s=built["sessions"][0]))
    assert [t["sequenceNumber"] for t in seen] == [1, 2, 3, 4, 5, 6]
