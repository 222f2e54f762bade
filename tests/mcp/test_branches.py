"""show_session, update_session_settings, branch_session, regenerate,
edit_and_resend and continue_reply with the SDK's own client, over stdio and
streamable HTTP, each checked against what GraphQL answers or sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api.graphql.core import ids
from tests.mcp.support import PASSWORD, agent, call, graphql, http_agent, token
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.lineage import key
from tests.support.mcp_results import outcome
from tests.support.servers import SmritiServer, add_user

LAB = "lab/my-model"
ERR = "errors { code message field }"
SESSION = """query($s: ID!) { session(id: $s) { title model
  branchedFrom { afterSequence session { id } }
  alternatives { sequenceNumber index sessions { id } }
  settings { instructions temperature topP maxOutputTokens stop }
  effectiveSettings { instructions temperature topP maxOutputTokens stop }
  turns(first: 50) { nodes { id role content sequenceNumber finishReason } } } }"""


def gid(kind: str, key: int) -> str:
    return ids.encode(kind, key)


def line(found: dict[str, Any]) -> list[tuple[str, str, int]]:
    """A session's turns as GraphQL shows them: (role, content, sequence)."""
    return [
        (t["role"], t["content"], t["sequenceNumber"]) for t in found["session"]["turns"]["nodes"]
    ]


def tool_line(turns: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(t["role"], t["content"], t["sequenceNumber"]) for t in turns]


NO_SETTINGS = {
    "instructions": None,
    "temperature": None,
    "topP": None,
    "maxOutputTokens": None,
    "stop": None,
}


async def test_an_agent_branches_regenerates_edits_and_continues_as_graphql_sees_it(
    gql: GraphQLClient,
    database_url: str,
    transport: str,
    providers_file: Path,
    fake_openai: FakeOpenAI,
) -> None:
    async with agent(database_url, transport, providers_file) as session:
        sid = (await call(session, "start_session", title="Plan", model=LAB))["sessionId"]
        fake_openai.reply("a1")
        first = await call(session, "send_message", sessionId=sid, content="q1")
        fake_openai.reply("a2 cut", finish="length")
        second = await call(session, "send_message", sessionId=sid, content="q2")
        fake_openai.reply("and the rest")
        continued = await call(session, "continue_reply", turnId=second["reply"]["id"])
        again = await call(session, "continue_reply", turnId=second["reply"]["id"])
        fake_openai.reply("a1 again")
        regenerated = await call(session, "regenerate", turnId=first["reply"]["id"])
        fake_openai.reply("a1 edited")
        edited = await call(
            session, "edit_and_resend", turnId=first["userTurn"]["id"], content="q1 edited"
        )
        branched = await call(
            session, "branch_session", atTurnId=first["reply"]["id"], title="Other way"
        )
        shown = await call(session, "show_session", sessionId=regenerated["session"]["sessionId"])
        shown_last = await call(session, "show_session", sessionId=sid, lastTurns=2)
    # Five model calls: a1, a2, the continuation, a1 again, a1 edited (not the repeat).
    assert len(fake_openai.requests) == 5
    assert fake_openai.requests[-1]["messages"][-1] == {"role": "user", "content": "q1 edited"}
    assert continued["continued"]["id"] == second["reply"]["id"]
    assert continued["continued"]["finishReason"] == "LENGTH"
    assert (continued["continuation"]["content"], continued["continuation"]["sequenceNumber"]) == (
        "and the rest",
        5,
    )
    assert continued["finishReason"] == "STOP"
    assert again == continued
    origin = await gql(SESSION, s=gid("Session", sid))
    assert line(origin) == [
        ("USER", "q1", 1),
        ("ASSISTANT", "a1", 2),
        ("USER", "q2", 3),
        ("ASSISTANT", "a2 cut", 4),
        ("ASSISTANT", "and the rest", 5),
    ]
    # The regenerated branch: q1 copied, a new reply; GraphQL sees it the same way.
    regen_id = regenerated["session"]["sessionId"]
    regen = await gql(SESSION, s=gid("Session", regen_id))
    assert regenerated["session"] == {
        "sessionId": regen_id,
        "spaceId": None,
        "branchName": "main",
        "title": "Plan",
        "model": LAB,
        "memoryScope": regenerated["session"]["memoryScope"],
        "settings": NO_SETTINGS,
        "branchedFrom": {"sessionId": sid, "afterSequence": 1},
    }
    assert regen["session"]["branchedFrom"] == {
        "afterSequence": 1,
        "session": {"id": gid("Session", sid)},
    }
    assert line(regen) == [("USER", "q1", 1), ("ASSISTANT", "a1 again", 2)]
    assert (regenerated["userTurn"]["content"], regenerated["userTurn"]["sessionId"]) == (
        "q1",
        regen_id,
    )
    assert (regenerated["reply"]["content"], regenerated["finishReason"]) == ("a1 again", "STOP")
    # The edited branch: the new message at 1, its reply at 2.
    edit_id = edited["session"]["sessionId"]
    assert edited["session"]["branchedFrom"] == {"sessionId": sid, "afterSequence": 0}
    assert line(await gql(SESSION, s=gid("Session", edit_id))) == [
        ("USER", "q1 edited", 1),
        ("ASSISTANT", "a1 edited", 2),
    ]
    assert edited["reply"]["content"] == "a1 edited"
    # branch_session: turns 1..2 copied, titled, no model call.
    fork_id = branched["sessionId"]
    assert (branched["title"], branched["branchedFrom"]) == (
        "Other way",
        {"sessionId": sid, "afterSequence": 2},
    )
    assert line(await gql(SESSION, s=gid("Session", fork_id))) == [
        ("USER", "q1", 1),
        ("ASSISTANT", "a1", 2),
    ]
    # show_session: what GraphQL's session shows, alternatives and all.
    assert shown["session"] == regenerated["session"]
    assert shown["effectiveSettings"] == NO_SETTINGS
    assert tool_line(shown["turns"]) == line(regen)
    assert [t["id"] for t in shown["turns"]] == [
        key(t["id"]) for t in regen["session"]["turns"]["nodes"]
    ]
    assert shown["hasEarlier"] is False
    assert shown["alternatives"] == [
        {
            "sequenceNumber": a["sequenceNumber"],
            "sessionIds": [key(s["id"]) for s in a["sessions"]],
            "index": a["index"],
        }
        for a in regen["session"]["alternatives"]
    ]
    assert shown["alternatives"] == [
        {"sequenceNumber": 1, "sessionIds": [sid, edit_id], "index": 0},
        {"sequenceNumber": 2, "sessionIds": [sid, regen_id], "index": 1},
    ]
    assert tool_line(shown_last["turns"]) == line(origin)[-2:]
    assert (shown_last["hasEarlier"], shown_last["session"]["branchedFrom"]) == (True, None)


REGENERATE = f"""mutation($t: ID!) {{ regenerate(input: {{turnId: $t}}) {{
  session {{ id }} userTurn {{ content sequenceNumber }} assistantTurn {{ id }} {ERR} }} }}"""
CONTINUE = f"""mutation($t: ID!) {{ continueReply(input: {{turnId: $t}}) {{
  continuation {{ id }} {ERR} }} }}"""
SESSIONS = "{ sessions(first: 50) { edges { node { id lastSequenceNumber } } } }"


async def test_a_failed_model_call_keeps_what_graphql_keeps(
    gql: GraphQLClient,
    database_url: str,
    transport: str,
    providers_file: Path,
    fake_openai: FakeOpenAI,
) -> None:
    async with agent(database_url, transport, providers_file) as session:
        sid = (await call(session, "start_session", model=LAB))["sessionId"]
        fake_openai.reply("a1 cut", finish="length")
        sent = await call(session, "send_message", sessionId=sid, content="q1")
        before = await gql(SESSIONS)
        fake_openai.fail(401)
        failed_continue = await session.call_tool("continue_reply", {"turnId": sent["reply"]["id"]})
        after_continue = await gql(SESSIONS)
        fake_openai.fail(401)
        failed = await session.call_tool("regenerate", {"turnId": sent["reply"]["id"]})
    reply_id = gid("Turn", sent["reply"]["id"])
    fake_openai.fail(401)
    graphql_continue = (await gql(CONTINUE, t=reply_id))["continueReply"]
    fake_openai.fail(401)
    graphql_failed = (await gql(REGENERATE, t=reply_id))["regenerate"]
    # continue_reply wrote nothing, as continueReply does.
    assert after_continue == before
    assert graphql_continue["continuation"] is None
    assert outcome(failed_continue) == {
        "error": graphql_continue["errors"][0],
        "retryAfterSeconds": None,
    }
    assert outcome(failed_continue)["error"]["code"] == "PROVIDER_AUTH"
    # regenerate kept its branch and the question's copy, as regenerate does.
    got = outcome(failed)
    assert got["error"] == graphql_failed["errors"][0]
    assert got["error"]["code"] == "PROVIDER_AUTH"
    assert got["retryAfterSeconds"] is None
    assert got["session"]["branchedFrom"] == {"sessionId": sid, "afterSequence": 1}
    assert (got["userTurn"]["content"], got["userTurn"]["sequenceNumber"]) == ("q1", 1)
    assert graphql_failed["userTurn"] == {"content": "q1", "sequenceNumber": 1}
    assert graphql_failed["assistantTurn"] is None
    kept = await gql(SESSION, s=gid("Session", got["session"]["sessionId"]))
    assert line(kept) == [("USER", "q1", 1)]


UPDATE = f"""mutation($s: ID!, $settings: ChatSettingsInput!) {{
  updateSession(input: {{id: $s, settings: $settings}}) {{ session {{ id }} {ERR} }} }}"""


async def test_settings_are_set_as_update_session_sets_them_and_refused_alike(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    settings = {
        "instructions": "  Answer as a pirate would.  ",
        "temperature": 1,
        "topP": 0.5,
        "maxOutputTokens": 100,
        "stop": ["END"],
    }
    out_of_range = {
        "temperature": {"temperature": 2.5},
        "topP": {"topP": 0},
        "maxOutputTokens": {"maxOutputTokens": 10**9},
        "stop": {"stop": ["a", "b", "c", "d", "e"]},
    }
    async with agent(database_url, transport) as session:
        sid = (await call(session, "start_session", title="Pirate"))["sessionId"]
        updated = await call(session, "update_session_settings", sessionId=sid, settings=settings)
        shown = await call(session, "show_session", sessionId=sid)
        refused = {
            name: outcome(
                await session.call_tool(
                    "update_session_settings", {"sessionId": sid, "settings": given}
                )
            )
            for name, given in out_of_range.items()
        }
        hostile = {
            name: outcome(await session.call_tool("update_session_settings", args))
            for name, args in {
                "word": {"sessionId": sid, "settings": {"temperature": "hot"}},
                "flag": {"sessionId": sid, "settings": {"maxOutputTokens": True}},
                "stops": {"sessionId": sid, "settings": {"stop": "END"}},
                "unknown": {"sessionId": sid, "settings": {"colour": "red"}},
                "not_object": {"sessionId": sid, "settings": ["a"]},
                "no_session": {"sessionId": 999, "settings": {}},
            }.items()
        }
        unchanged = await call(session, "show_session", sessionId=sid)
        cleared = await call(session, "update_session_settings", sessionId=sid, settings={})
    seen = (await gql(SESSION, s=gid("Session", sid)))["session"]
    expected = {
        "instructions": "Answer as a pirate would.",
        "temperature": 1.0,
        "topP": 0.5,
        "maxOutputTokens": 100,
        "stop": ["END"],
    }
    assert updated["settings"] == shown["session"]["settings"] == expected
    assert shown["effectiveSettings"] == expected
    assert unchanged["session"]["settings"] == expected  # nothing refused was written
    assert cleared["settings"] == seen["settings"] == seen["effectiveSettings"] == NO_SETTINGS
    for name, given in out_of_range.items():
        graphql_refused = (await gql(UPDATE, s=gid("Session", sid), settings=given))[
            "updateSession"
        ]
        assert refused[name] == {"error": graphql_refused["errors"][0]}, name
        assert refused[name]["error"]["field"] == f"settings.{name}"
        assert refused[name]["error"]["code"] == "OUT_OF_RANGE"
    assert refused["temperature"]["error"]["message"] == (
        "temperature is from 0 to 2; 2.5 is out of range."
    )
    assert hostile == {
        "word": {
            "error": {
                "code": "INVALID",
                "message": "`settings.temperature` is a number.",
                "field": "settings.temperature",
            }
        },
        "flag": {
            "error": {
                "code": "INVALID",
                "message": "`settings.maxOutputTokens` is a whole number.",
                "field": "settings.maxOutputTokens",
            }
        },
        "stops": {
            "error": {
                "code": "INVALID",
                "message": "`settings.stop` is a list of strings.",
                "field": "settings.stop",
            }
        },
        "unknown": {
            "error": {
                "code": "INVALID",
                "message": "Unknown argument `settings.colour`.",
                "field": "settings.colour",
            }
        },
        "not_object": {
            "error": {"code": "INVALID", "message": "`settings` is an object.", "field": "settings"}
        },
        "no_session": {
            "error": {"code": "NOT_FOUND", "message": "No such session.", "field": "sessionId"}
        },
    }


async def test_hostile_input_to_the_branch_tools_gets_graphqls_typed_errors(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    huge = "x" * (1024 * 1024 + 1)  # one byte over the largest message
    async with agent(database_url, transport) as session:
        sid = (await call(session, "start_session"))["sessionId"]
        sent = await call(session, "send_message", sessionId=sid, content="hi")
        user, reply = sent["userTurn"]["id"], sent["reply"]["id"]
        attempts = {
            "regenerate_message": ("regenerate", {"turnId": user}),
            "edit_reply": ("edit_and_resend", {"turnId": reply, "content": "x"}),
            "edit_empty": ("edit_and_resend", {"turnId": user, "content": "  "}),
            "edit_huge": ("edit_and_resend", {"turnId": user, "content": huge}),
            "continue_finished": ("continue_reply", {"turnId": reply}),
            "no_turn": ("regenerate", {"turnId": 999}),
            "branch_no_turn": ("branch_session", {"atTurnId": 999}),
            "unknown_model": ("regenerate", {"turnId": reply, "model": "nope/nothing"}),
            "bad_id": ("continue_reply", {"turnId": "abc"}),
            "unknown_arg": ("branch_session", {"atTurnId": user, "branchName": "x"}),
            "no_session": ("show_session", {"sessionId": 999}),
            "many_turns": ("show_session", {"sessionId": sid, "lastTurns": 101}),
        }
        got = {
            name: outcome(await session.call_tool(tool, args))
            for name, (tool, args) in attempts.items()
        }
        after = await call(session, "show_session", sessionId=sid)
    t_user, t_reply, none = gid("Turn", user), gid("Turn", reply), gid("Turn", 999)
    expected = await gql(
        f"""mutation($u: ID!, $r: ID!, $none: ID!, $huge: String!) {{
          regenerate_message: regenerate(input: {{turnId: $u}}) {{ {ERR} }}
          edit_reply: editAndResend(input: {{turnId: $r, content: "x"}}) {{ {ERR} }}
          edit_empty: editAndResend(input: {{turnId: $u, content: "  "}}) {{ {ERR} }}
          edit_huge: editAndResend(input: {{turnId: $u, content: $huge}}) {{ {ERR} }}
          continue_finished: continueReply(input: {{turnId: $r}}) {{ {ERR} }}
          no_turn: regenerate(input: {{turnId: $none}}) {{ {ERR} }}
          branch_no_turn: forkSession(input: {{atTurnId: $none}}) {{ {ERR} }}
          unknown_model: regenerate(input: {{turnId: $r, model: "nope/nothing"}}) {{ {ERR} }}
        }}""",
        u=t_user,
        r=t_reply,
        none=none,
        huge=huge,
    )
    for name, errors in expected.items():
        assert got[name] == {"error": errors["errors"][0]}, name
    assert [got[n]["error"]["code"] for n in ("edit_empty", "edit_huge", "no_turn")] == [
        "EMPTY_CONTENT",
        "CONTENT_TOO_LARGE",
        "NOT_FOUND",
    ]
    assert got["bad_id"] == {
        "error": {
            "code": "INVALID",
            "message": "`turnId` is a positive whole number.",
            "field": "turnId",
        }
    }
    assert got["unknown_arg"] == {
        "error": {
            "code": "INVALID",
            "message": "Unknown argument `branchName`.",
            "field": "branchName",
        }
    }
    assert got["no_session"] == {
        "error": {"code": "NOT_FOUND", "message": "No such session.", "field": "sessionId"}
    }
    assert got["many_turns"] == {
        "error": {
            "code": "INVALID",
            "message": "`lastTurns` is a whole number from 1 to 100.",
            "field": "lastTurns",
        }
    }
    # Nothing of it was written: no branch, the session's two turns.
    assert (after["alternatives"], len(after["turns"])) == ([], 2)
    assert (await gql(SESSIONS))["sessions"]["edges"] == [
        {"node": {"id": gid("Session", sid), "lastSequenceNumber": 2}}
    ]


EVERYTHING = "{ sessions(first: 50) { edges { node { id activeModel lastSequenceNumber } } } }"


async def test_a_model_kept_for_admins_is_refused_before_anything_is_written(
    database_url: str, providers_file: Path, fake_openai: FakeOpenAI
) -> None:
    add_user(database_url, "root", PASSWORD, admin=True)
    add_user(database_url, "bob", PASSWORD)
    admin, bob = token(database_url, "root"), token(database_url, "bob")
    with SmritiServer(database_url, providers=providers_file) as server:
        async with http_agent(f"{server.base_url}/mcp", bob["token"]) as session:
            sid = (await call(session, "start_session", model=LAB))["sessionId"]
            fake_openai.reply("cut", finish="length")
            sent = await call(session, "send_message", sessionId=sid, content="hi")
            await graphql(
                server,
                admin["token"],
                'mutation { setModelAccess(input: {model: "offline/echo", adminsOnly: true}) '
                "{ adminsOnly } }",
            )
            before = await graphql(server, bob["token"], EVERYTHING)
            user, reply = sent["userTurn"]["id"], sent["reply"]["id"]
            refusals = [
                outcome(await session.call_tool(name, args))
                for name, args in (
                    ("regenerate", {"turnId": reply, "model": "offline/echo"}),
                    ("edit_and_resend", {"turnId": user, "content": "x", "model": "offline/echo"}),
                    ("continue_reply", {"turnId": reply, "model": "offline/echo"}),
                )
            ]
            after = await graphql(server, bob["token"], EVERYTHING)
        graphql_refused = await graphql(
            server,
            bob["token"],
            f'mutation {{ regenerate(input: {{turnId: "{gid("Turn", reply)}", '
            f'model: "offline/echo"}}) {{ {ERR} }} }}',
        )
    forbidden = {
        "code": "FORBIDDEN",
        "message": 'The model "offline/echo" is for admins only.',
        "field": "model",
    }
    assert graphql_refused["regenerate"]["errors"] == [forbidden]
    assert refusals == [{"error": forbidden}] * 3
    assert after == before
    assert len(before["sessions"]["edges"]) == 1
    assert len(fake_openai.requests) == 1
