"""Bad input gets a typed error and writes nothing; provider failures keep the user's turn."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, send

TURNS = """query($id: ID!) { session(id: $id) { lastSequenceNumber
  turns(first: 100) { edges { node { sequenceNumber role content } } } } }"""


async def turns_of(gql: GraphQLClient, sid: str) -> list[tuple[int, str, str]]:
    data = await gql(TURNS, id=sid)
    edges = data["session"]["turns"]["edges"]
    return [(e["node"]["sequenceNumber"], e["node"]["role"], e["node"]["content"]) for e in edges]


@pytest.mark.parametrize(
    ("fields", "code", "field"),
    [
        ({"content": ""}, "EMPTY_CONTENT", "content"),
        ({"content": "   \n\t"}, "EMPTY_CONTENT", "content"),
        ({"content": "x" * (1024 * 1024 + 1)}, "CONTENT_TOO_LARGE", "content"),
        ({"content": "hi", "model": "nobody/nothing"}, "UNKNOWN_MODEL", "model"),
        ({"content": "hi", "model": "openai/gpt-4o-mini"}, "PROVIDER_UNAVAILABLE", "model"),
    ],
)
async def test_refused_messages_write_nothing(
    gql: GraphQLClient, fields: dict[str, str], code: str, field: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    result = await send(gql, sid, **fields)
    assert [(e["code"], e["field"]) for e in result["errors"]] == [(code, field)]
    assert result["userTurn"] is None
    assert await turns_of(gql, sid) == []


async def test_content_of_exactly_the_limit_is_accepted(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    result = await send(gql, sid, "é" * (512 * 1024))  # 2 bytes each: exactly 1 MiB
    assert result["errors"] == []
    assert result["userTurn"]["sequenceNumber"] == 1


@pytest.mark.parametrize(
    ("session_id", "message"),
    [
        ("U2Vzc2lvbjo5OTk5", "No such session."),  # Session:9999
        ("not-an-id", "No session has the id 'not-an-id'."),
        ("U3BhY2U6MQ==", "No session has the id 'U3BhY2U6MQ=='."),  # Space:1
    ],
)
async def test_unknown_or_foreign_ids_are_not_found(
    gql: GraphQLClient, session_id: str, message: str
) -> None:
    await create_space(gql)
    result = await send(gql, session_id, "hi")
    assert result["errors"] == [{"code": "NOT_FOUND", "message": message, "field": "sessionId"}]


@pytest.mark.parametrize(
    ("status", "code"),
    [(401, "PROVIDER_AUTH"), (429, "PROVIDER_RATE_LIMIT"), (500, "PROVIDER_ERROR")],
)
async def test_a_failed_provider_call_keeps_the_users_turn_and_a_retry_continues(
    gql: GraphQLClient, fake_openai: FakeOpenAI, status: int, code: str
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.fail(status)
    failed = await send(gql, sid, "Are you up?")
    assert [e["code"] for e in failed["errors"]] == [code]
    assert failed["userTurn"]["sequenceNumber"] == 1
    assert failed["assistantTurn"] is None
    assert await turns_of(gql, sid) == [(1, "USER", "Are you up?")]

    fake_openai.reply("Yes.")
    retried = await send(gql, sid, "Are you up?")
    assert retried["errors"] == []
    assert await turns_of(gql, sid) == [
        (1, "USER", "Are you up?"),
        (2, "USER", "Are you up?"),
        (3, "ASSISTANT", "Yes."),
    ]


async def test_context_too_long_is_typed(gql: GraphQLClient, fake_openai: FakeOpenAI) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.fail(400, code="context_length_exceeded")
    result = await send(gql, sid, "A long one")
    assert [e["code"] for e in result["errors"]] == ["CONTEXT_TOO_LONG"]


async def test_an_unreachable_provider_is_typed_and_keeps_the_turn(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.stop()
    result = await send(gql, sid, "Hello?")
    assert [e["code"] for e in result["errors"]] == ["PROVIDER_UNREACHABLE"]
    assert await turns_of(gql, sid) == [(1, "USER", "Hello?")]


async def test_idempotency_key_returns_the_original_turns(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.reply("Once.")
    first = await send(gql, sid, "Say it once", idempotencyKey="k-1")
    again = await send(gql, sid, "Say it once", idempotencyKey="k-1")
    assert again["userTurn"] == first["userTurn"]
    assert again["assistantTurn"] == first["assistantTurn"]
    assert len(fake_openai.requests) == 1
    assert await turns_of(gql, sid) == [(1, "USER", "Say it once"), (2, "ASSISTANT", "Once.")]


async def test_idempotency_key_retries_a_failed_call_without_a_second_user_turn(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.fail(429)
    failed = await send(gql, sid, "Try me", idempotencyKey="k-2")
    assert [e["code"] for e in failed["errors"]] == ["PROVIDER_RATE_LIMIT"]
    fake_openai.reply("Done.")
    retried = await send(gql, sid, "Try me", idempotencyKey="k-2")
    assert retried["errors"] == []
    assert retried["userTurn"]["sequenceNumber"] == 1
    assert await turns_of(gql, sid) == [(1, "USER", "Try me"), (2, "ASSISTANT", "Done.")]
    # The retry's prompt did not contain the user turn twice.
    assert fake_openai.requests[-1]["messages"] == [{"role": "user", "content": "Try me"}]


async def test_a_checkpoint_of_another_space_cannot_be_mounted_or_used(
    gql: GraphQLClient,
) -> None:
    home = await create_space(gql, "Home")
    work = await create_space(gql, "Work")
    home_sid = (await create_session(gql, spaceId=home, title="t"))["id"]
    work_sid = (await create_session(gql, spaceId=work, title="t"))["id"]
    await send(gql, work_sid, "Quarterly plan")
    foreign = await checkpoint(gql, work_sid, "Q3 plan")

    mounted = await gql(
        """mutation($s: ID!, $c: ID!) { mountCheckpoint(input: {sessionId: $s, checkpointId: $c}) {
           session { mount { baseSequence } } errors { code field } } }""",
        s=home_sid,
        c=foreign["id"],
    )
    assert mounted["mountCheckpoint"] == {
        "session": None,
        "errors": [{"code": "WRONG_SPACE", "field": "checkpointId"}],
    }
    result = await send(gql, home_sid, "hi", context={"checkpointId": foreign["id"]})
    assert [(e["code"], e["field"]) for e in result["errors"]] == [
        ("WRONG_SPACE", "context.checkpointId")
    ]
    assert await turns_of(gql, home_sid) == []


@pytest.mark.parametrize(
    ("branch", "code"),
    [("main", "BRANCH_RESERVED"), ("taken", "BRANCH_EXISTS"), ("bad name!", "INVALID")],
)
async def test_fork_branch_names_are_checked(gql: GraphQLClient, branch: str, code: str) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    saved = await checkpoint(gql, sid, "Start")
    fork = """mutation($c: ID!, $b: String) { forkSession(input: {checkpointId: $c, branchName: $b}) {
              session { id branchName } errors { code field } } }"""
    first = await gql(fork, c=saved["id"], b="taken")
    assert first["forkSession"]["errors"] == []
    result = await gql(fork, c=saved["id"], b=branch)
    assert result["forkSession"] == {
        "session": None,
        "errors": [{"code": code, "field": "branchName"}],
    }
    sessions = await gql("{ sessions(first: 100) { edges { node { branchName } } } }")
    assert sorted(e["node"]["branchName"] for e in sessions["sessions"]["edges"]) == [
        "main",
        "taken",
    ]


async def test_a_checkpoint_needs_a_space(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    data = await gql(
        """mutation($s: ID!) { createCheckpoint(input: {sessionId: $s, title: "x"}) {
           checkpoint { id } errors { code field } } }""",
        s=sid,
    )
    assert data["createCheckpoint"] == {
        "checkpoint": None,
        "errors": [{"code": "NO_SPACE", "field": "sessionId"}],
    }


async def test_one_key_sent_at_once_many_times_gets_one_reply(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    # Senders that find the key's turn still unanswered each ask the provider
    # (which of them saves first is the scheduler's choice): every call gets the
    # same answer, so what is checked is that one reply is saved and returned.
    for _ in range(6):
        fake_openai.reply("Once.")
    results = await asyncio.gather(
        *(send(gql, sid, "Say it once", idempotencyKey="k-3") for _ in range(6))
    )
    assert [r["errors"] for r in results] == [[]] * 6
    # Every caller gets the one user turn and the one reply that was saved.
    assert {r["userTurn"]["sequenceNumber"] for r in results} == {1}
    assert {r["assistantTurn"]["sequenceNumber"] for r in results} == {2}
    assert {r["assistantTurn"]["content"] for r in results} == {"Once."}
    assert await turns_of(gql, sid) == [(1, "USER", "Say it once"), (2, "ASSISTANT", "Once.")]
