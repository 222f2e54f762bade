"""Conversation branches (issue 21 §1): forkSession at a turn, regenerate,
editAndResend and the alternatives at a position.

Nothing is rewritten: the origin keeps every turn; the branch holds copies of
its turns 1..t. The recording stub shows the provider receives exactly the
branch's own line (after the context boundary, for HEAD and MOUNTED).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.conversations import (
    BRANCH,
    EDIT,
    ERR,
    FORK,
    LAB,
    REGENERATE,
    TURN,
    TURNS,
    conversation,
    turn_id,
)
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, mount, send
from tests.support.streams import merged, sse_events

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

ALTERNATIVES = """query($id: ID!, $p: Int) { session(id: $id) {
  alternatives(sequenceNumber: $p) { sequenceNumber index count sessions { id } } } }"""


async def turns_of(gql: GraphQLClient, sid: str) -> list[tuple[str, str, int]]:
    data = (await gql(TURNS, id=sid))["session"]
    return [(t["role"], t["content"], t["sequenceNumber"]) for t in data["turns"]["nodes"]]


def line(*contents: str) -> list[tuple[str, str, int]]:
    roles = ("USER", "ASSISTANT")
    return [(roles[i % 2], c, i + 1) for i, c in enumerate(contents)]


def wire(fake: FakeOpenAI) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in fake.requests[-1]["messages"]]


async def test_fork_at_a_turn_copies_turns_up_to_it_and_keeps_the_origin(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 3)
    at = await turn_id(gql, sid, 4)
    data = (await gql(FORK, input={"atTurnId": at, "title": "Other way"}))["forkSession"]
    assert data["errors"] == []
    branch = data["session"]
    assert branch["title"] == "Other way"
    assert branch["lastSequenceNumber"] == 4
    assert branch["model"] == LAB
    assert branch["branchedFrom"] == {"afterSequence": 4, "session": {"id": sid}}
    assert await turns_of(gql, branch["id"]) == line("q1", "a1", "q2", "a2")
    assert await turns_of(gql, sid) == line("q1", "a1", "q2", "a2", "q3", "a3")
    # The branch goes on by itself; the origin is untouched.
    fake_openai.reply("b3")
    sent = await send(gql, branch["id"], "r3")
    assert sent["userTurn"]["sequenceNumber"] == 5
    assert wire(fake_openai) == [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2"),
        ("assistant", "a2"),
        ("user", "r3"),
    ]
    assert await turns_of(gql, sid) == line("q1", "a1", "q2", "a2", "q3", "a3")


async def test_fork_needs_exactly_one_of_checkpoint_and_turn(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 1)
    at = await turn_id(gql, sid, 1)
    neither = (await gql(FORK, input={}))["forkSession"]
    assert neither["session"] is None
    assert [(e["code"], e["field"]) for e in neither["errors"]] == [("INVALID", "checkpointId")]
    space = await create_space(gql)
    other = (await create_session(gql, spaceId=space))["id"]
    saved = await checkpoint(gql, other, "C")
    both = (await gql(FORK, input={"atTurnId": at, "checkpointId": saved["id"]}))["forkSession"]
    assert [(e["code"], e["field"]) for e in both["errors"]] == [("INVALID", "atTurnId")]
    named = (await gql(FORK, input={"atTurnId": at, "branchName": "x"}))["forkSession"]
    assert [(e["code"], e["field"]) for e in named["errors"]] == [("INVALID", "branchName")]


async def test_regenerate_answers_the_question_again_in_a_branch(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 2)
    reply = await turn_id(gql, sid, 4)
    fake_openai.reply("a2 again")
    data = (await gql(REGENERATE, input={"turnId": reply}))["regenerate"]
    assert data["errors"] == []
    branch = data["session"]["id"]
    assert data["session"]["branchedFrom"] == {"afterSequence": 3, "session": {"id": sid}}
    assert (data["userTurn"]["content"], data["userTurn"]["sequenceNumber"]) == ("q2", 3)
    assert data["assistantTurn"]["content"] == "a2 again"
    assert data["assistantTurn"]["sequenceNumber"] == 4
    assert data["assistantTurn"]["replyToSequence"] == 3
    assert wire(fake_openai) == [("user", "q1"), ("assistant", "a1"), ("user", "q2")]
    assert await turns_of(gql, branch) == line("q1", "a1", "q2", "a2 again")
    assert await turns_of(gql, sid) == line("q1", "a1", "q2", "a2")
    # The alternatives at the reply: the origin and the branch, from either one.
    for me, index in ((sid, 0), (branch, 1)):
        alternatives = (await gql(ALTERNATIVES, id=me, p=None))["session"]["alternatives"]
        assert alternatives == [
            {
                "sequenceNumber": 4,
                "index": index,
                "count": 2,
                "sessions": [{"id": sid}, {"id": branch}],
            }
        ]
    # Not a reply: refused, nothing written.
    question = await turn_id(gql, sid, 3)
    refused = (await gql(REGENERATE, input={"turnId": question}))["regenerate"]
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [("INVALID", "turnId")]


async def test_edit_and_resend_sends_the_new_message_in_a_branch(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 3)
    question = await turn_id(gql, sid, 3)
    fake_openai.reply("b2")
    data = (
        await gql(EDIT, input={"turnId": question, "content": "q2 edited", "idempotencyKey": "k"})
    )["editAndResend"]
    assert data["errors"] == []
    branch = data["session"]["id"]
    assert data["session"]["branchedFrom"]["afterSequence"] == 2
    assert (data["userTurn"]["content"], data["userTurn"]["sequenceNumber"]) == ("q2 edited", 3)
    assert data["assistantTurn"]["content"] == "b2"
    assert wire(fake_openai) == [("user", "q1"), ("assistant", "a1"), ("user", "q2 edited")]
    assert await turns_of(gql, branch) == line("q1", "a1", "q2 edited", "b2")
    assert await turns_of(gql, sid) == line("q1", "a1", "q2", "a2", "q3", "a3")
    # The same key again: the same branch and turns, no second call.
    calls = len(fake_openai.requests)
    again = (
        await gql(EDIT, input={"turnId": question, "content": "q2 edited", "idempotencyKey": "k"})
    )["editAndResend"]
    assert again["session"]["id"] == branch
    assert again["assistantTurn"]["id"] == data["assistantTurn"]["id"]
    assert len(fake_openai.requests) == calls
    # Alternatives at 3 (the edited message); none at 4 on their own (the
    # replies follow different messages).
    alternatives = (await gql(ALTERNATIVES, id=branch, p=None))["session"]["alternatives"]
    assert [(a["sequenceNumber"], a["index"], a["count"]) for a in alternatives] == [(3, 1, 2)]
    at_four = (await gql(ALTERNATIVES, id=branch, p=4))["session"]["alternatives"]
    assert [(a["index"], a["count"]) for a in at_four] == [(0, 1)]
    # A reply cannot be edited.
    reply = await turn_id(gql, sid, 2)
    refused = (await gql(EDIT, input={"turnId": reply, "content": "x"}))["editAndResend"]
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [("INVALID", "turnId")]


async def test_a_failed_provider_call_keeps_the_branch_and_its_message(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 1)
    question = await turn_id(gql, sid, 1)
    fake_openai.fail(503)
    data = (await gql(EDIT, input={"turnId": question, "content": "again", "idempotencyKey": "r"}))[
        "editAndResend"
    ]
    assert data["assistantTurn"] is None
    assert [e["code"] for e in data["errors"]] == ["PROVIDER_ERROR"]
    branch = data["session"]["id"]
    assert await turns_of(gql, branch) == line("again")
    fake_openai.reply("answered")
    retried = (
        await gql(EDIT, input={"turnId": question, "content": "again", "idempotencyKey": "r"})
    )["editAndResend"]
    assert retried["errors"] == []
    assert retried["session"]["id"] == branch
    assert await turns_of(gql, branch) == line("again", "answered")


async def test_mounted_branch_sends_its_own_line_after_the_boundary(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    """MOUNTED: the branch keeps the mount, its base no later than the branch point."""
    space = await create_space(gql)
    sid = await conversation(gql, fake_openai, 2, spaceId=space)
    saved = await checkpoint(gql, sid, "Two exchanges")
    await mount(gql, sid, saved["id"])  # base 4
    fake_openai.reply("a3")
    await send(gql, sid, "q3")
    # Branch point after the boundary (t = 5 > base 4): base stays 4.
    after = (await gql(REGENERATE, input={"turnId": await turn_id(gql, sid, 6)}))["regenerate"]
    assert after["session"]["mount"] == {"baseSequence": 4, "checkpoint": {"id": saved["id"]}}
    assert after["context"]["mode"] == "MOUNTED"
    assert [t["sequenceNumber"] for t in after["context"]["turns"]] == []
    messages = wire(fake_openai)
    assert messages[-1] == ("user", "q3")
    assert ("user", "q1") not in messages and ("user", "q2") not in messages
    # Branch point before the boundary (t = 2 < base 4): base becomes 2, the
    # branch's own turns after 2 are seen.
    fake_openai.reply("b2")
    before = (await gql(EDIT, input={"turnId": await turn_id(gql, sid, 3), "content": "q2 other"}))[
        "editAndResend"
    ]
    assert before["session"]["mount"]["baseSequence"] == 2
    fake_openai.reply("b3")
    sent = await send(gql, before["session"]["id"], "q3 other")
    assert [t["sequenceNumber"] for t in sent["context"]["turns"]] == [3, 4]
    assert wire(fake_openai)[-3:] == [
        ("user", "q2 other"),
        ("assistant", "b2"),
        ("user", "q3 other"),
    ]
    assert ("user", "q1") not in wire(fake_openai)


async def test_head_branch_sends_its_own_line_after_the_boundary(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    """HEAD: a head saved from the origin at b hides min(b, t) of the branch."""
    space = await create_space(gql)
    sid = await conversation(gql, fake_openai, 2, spaceId=space)
    await checkpoint(gql, sid, "Two exchanges")  # the head, base 4
    fake_openai.reply("a3")
    await send(gql, sid, "q3")
    # After the boundary (t = 5): turns 5.. of its own line.
    fake_openai.reply("a3 again")
    after = (await gql(REGENERATE, input={"turnId": await turn_id(gql, sid, 6)}))["regenerate"]
    assert (after["context"]["mode"], after["context"]["boundary"]) == ("HEAD", 4)
    assert [m for m in wire(fake_openai) if m[0] != "system"] == [("user", "q3")]
    # Before the boundary (t = 2): the branch sees its own turns after 2.
    fake_openai.reply("b2")
    before = (await gql(EDIT, input={"turnId": await turn_id(gql, sid, 3), "content": "q2 other"}))[
        "editAndResend"
    ]
    assert (before["context"]["mode"], before["context"]["boundary"]) == ("HEAD", 2)
    fake_openai.reply("b3")
    sent = await send(gql, before["session"]["id"], "q3 other")
    assert sent["context"]["boundary"] == 2
    assert [m for m in wire(fake_openai) if m[0] != "system"] == [
        ("user", "q2 other"),
        ("assistant", "b2"),
        ("user", "q3 other"),
    ]


async def test_fresh_branch_sends_its_whole_line(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 3)
    fake_openai.reply("b2")
    edited = (await gql(EDIT, input={"turnId": await turn_id(gql, sid, 3), "content": "q2 other"}))[
        "editAndResend"
    ]
    assert edited["context"]["mode"] == "FRESH"
    fake_openai.reply("b3")
    await send(gql, edited["session"]["id"], "q3 other")
    assert wire(fake_openai) == [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2 other"),
        ("assistant", "b2"),
        ("user", "q3 other"),
    ]


async def test_branches_of_branches_group_by_position(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 2)
    fake_openai.reply("x")
    first = (await gql(REGENERATE, input={"turnId": await turn_id(gql, sid, 4)}))["regenerate"]
    fake_openai.reply("y")
    second_origin = first["session"]["id"]
    second = (await gql(REGENERATE, input={"turnId": await turn_id(gql, second_origin, 4)}))[
        "regenerate"
    ]
    third = second["session"]["id"]
    found = (await gql(ALTERNATIVES, id=third, p=4))["session"]["alternatives"]
    assert found == [
        {
            "sequenceNumber": 4,
            "index": 2,
            "count": 3,
            "sessions": [{"id": sid}, {"id": second_origin}, {"id": third}],
        }
    ]
    # At 3 all three hold the origin's question: one alternative, no switcher.
    assert (await gql(ALTERNATIVES, id=third, p=3))["session"]["alternatives"][0]["count"] == 1


async def test_deleting_the_origin_keeps_its_branches(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 2)
    fake_openai.reply("x")
    first = (await gql(REGENERATE, input={"turnId": await turn_id(gql, sid, 4)}))["regenerate"]
    fake_openai.reply("y")
    second = (
        await gql(REGENERATE, input={"turnId": await turn_id(gql, first["session"]["id"], 4)})
    )["regenerate"]
    deleted = await gql(
        "mutation($id: ID!) { deleteSession(input: {id: $id}) { deletedId } }", id=sid
    )
    assert deleted["deleteSession"]["deletedId"] == sid
    branch = first["session"]["id"]
    assert await turns_of(gql, branch) == line("q1", "a1", "q2", "x")
    data = (await gql(f"query($id: ID!) {{ session(id: $id) {{ {BRANCH} }} }}", id=branch))[
        "session"
    ]
    assert data["branchedFrom"] == {"afterSequence": 3, "session": None}
    found = (await gql(ALTERNATIVES, id=second["session"]["id"], p=4))["session"]
    assert [(a["index"], a["count"]) for a in found["alternatives"]] == [(1, 2)]
    assert [s["id"] for s in found["alternatives"][0]["sessions"]] == [
        branch,
        second["session"]["id"],
    ]


def stream_document(name: str, input_type: str) -> str:
    return f"""subscription($input: {input_type}!) {{ {name}(input: $input) {{ __typename
      ... on StreamUserTurn {{ userTurn {{ {TURN} session {{ id }} }} }}
      ... on StreamDelta {{ delta }}
      ... on StreamAssistantTurn {{ assistantTurn {{ {TURN} }} }}
      ... on StreamFailed {{ {ERR} }} }} }}"""


async def streamed(gql: GraphQLClient, name: str, input_type: str, **input: Any) -> list[Any]:
    response = await gql.http.post(
        "/graphql",
        json={"query": stream_document(name, input_type), "variables": {"input": input}},
        headers={"Accept": "text/event-stream"},
    )
    assert response.status_code == 200
    return [data["data"][name] for kind, data in sse_events(response.text) if kind == "next"]


async def test_regenerate_and_edit_stream_their_reply_in_the_branch(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 2)
    fake_openai.stream_chunks(["a2", " anew"])
    events = await streamed(
        gql, "regenerateStream", "RegenerateInput", turnId=await turn_id(gql, sid, 4)
    )
    assert [e["__typename"] for e in merged(events)] == [
        "StreamUserTurn",
        "StreamDelta",
        "StreamAssistantTurn",
    ]
    assert merged(events)[1]["delta"] == "a2 anew"
    branch = events[0]["userTurn"]["session"]["id"]
    assert branch != sid
    assert (events[0]["userTurn"]["content"], events[0]["userTurn"]["sequenceNumber"]) == ("q2", 3)
    assert events[-1]["assistantTurn"]["content"] == "a2 anew"
    assert await turns_of(gql, branch) == line("q1", "a1", "q2", "a2 anew")
    assert wire(fake_openai) == [("user", "q1"), ("assistant", "a1"), ("user", "q2")]

    fake_openai.stream_chunks(["b", "2"])
    events = await streamed(
        gql,
        "editAndResendStream",
        "EditAndResendInput",
        turnId=await turn_id(gql, sid, 3),
        content="q2 edited",
    )
    edited = events[0]["userTurn"]["session"]["id"]
    assert events[-1]["assistantTurn"]["content"] == "b2"
    assert await turns_of(gql, edited) == line("q1", "a1", "q2 edited", "b2")
    assert await turns_of(gql, sid) == line("q1", "a1", "q2", "a2")
    # Refused before anything is written: one StreamFailed.
    refused = await streamed(
        gql, "regenerateStream", "RegenerateInput", turnId=await turn_id(gql, sid, 3)
    )
    assert refused == [
        {
            "__typename": "StreamFailed",
            "errors": [
                {
                    "code": "INVALID",
                    "message": "Only a reply can be regenerated.",
                    "field": "turnId",
                }
            ],
        }
    ]


async def test_a_branch_is_pinned_archived_and_tagged_as_its_conversation(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 1)
    updated = await gql(
        'mutation($id: ID!) { updateSession(input: {id: $id, pinned: true, tags: ["Trip", "kyoto"]}) '
        "{ errors { code } } }",
        id=sid,
    )
    assert updated["updateSession"]["errors"] == []
    at = await turn_id(gql, sid, 2)
    branch = (await gql(FORK, input={"atTurnId": at}))["forkSession"]["session"]["id"]
    data = await gql("query($id: ID!) { session(id: $id) { pinned archived tags } }", id=branch)
    assert data["session"] == {"pinned": True, "archived": False, "tags": ["Trip", "kyoto"]}


async def test_a_branch_keeps_the_settings_of_its_conversation_and_its_replies(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await conversation(gql, fake_openai, 1)
    updated = await gql(
        "mutation($id: ID!) { updateSession(input: {id: $id, settings: "
        '{instructions: "Answer in French.", temperature: 0.2}}) { errors { code } } }',
        id=sid,
    )
    assert updated["updateSession"]["errors"] == []
    fake_openai.reply("a2")
    await send(gql, sid, "q2")
    reply = await turn_id(gql, sid, 4)
    fake_openai.reply("b")
    branch = (await gql(FORK, input={"atTurnId": reply}))["forkSession"]["session"]["id"]
    data = await gql(
        "query($id: ID!) { session(id: $id) { settings { instructions temperature } "
        "turns(first: 10) { nodes { sequenceNumber settings { temperature } } } } }",
        id=branch,
    )
    assert data["session"]["settings"] == {"instructions": "Answer in French.", "temperature": 0.2}
    asked = {t["sequenceNumber"]: t["settings"] for t in data["session"]["turns"]["nodes"]}
    assert asked[4] == {"temperature": 0.2}
    assert asked[2] is None
