"""What a mutation's payload says of its session is what the mutation wrote.

regenerate and editAndResend make a branch and then write its turns: their
payload's ``session.lastSequenceNumber`` is the sequence number of the last
turn they wrote (it used to be the branch point's, read before the writes: 3
for a reply regenerated at 4). The other payloads that name a session (through
their turns, or forkSession's own) are held to the same numbers.
"""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

LAB = "lab/my-model"
NUMBERS = "id sequenceNumber session { id lastSequenceNumber }"
SEND = f"""mutation($input: SendMessageInput!) {{ sendMessage(input: $input) {{
  userTurn {{ {NUMBERS} }} assistantTurn {{ {NUMBERS} }} errors {{ code }} }} }}"""
BRANCHED = f"""session {{ id lastSequenceNumber }}
  userTurn {{ {NUMBERS} }} assistantTurn {{ {NUMBERS} }} errors {{ code }}"""
REGENERATE = f"""mutation($input: RegenerateInput!) {{
  regenerate(input: $input) {{ {BRANCHED} }} }}"""
EDIT = f"""mutation($input: EditAndResendInput!) {{
  editAndResend(input: $input) {{ {BRANCHED} }} }}"""
FORK = """mutation($input: ForkSessionInput!) { forkSession(input: $input) {
  session { id lastSequenceNumber } errors { code } } }"""
CONTINUE = f"""mutation($input: ContinueReplyInput!) {{ continueReply(input: $input) {{
  continued {{ {NUMBERS} }} continuation {{ {NUMBERS} }} errors {{ code }} }} }}"""
SAVED = """query($id: ID!) { session(id: $id) { lastSequenceNumber
  turns(first: 100) { nodes { id sequenceNumber } } } }"""


async def conversation(gql: GraphQLClient, fake: FakeOpenAI, exchanges: int) -> dict[int, str]:
    """A session of ``exchanges`` exchanges, as its turns' ids by sequence number;
    each sendMessage payload's numbers checked on the way."""
    sid: str = (await create_session(gql, model=LAB))["id"]
    for i in range(1, exchanges + 1):
        fake.reply(f"a{i}")
        sent = (await gql(SEND, input={"sessionId": sid, "content": f"q{i}"}))["sendMessage"]
        assert sent["errors"] == []
        # The user turn's session is read after the reply is written, as is the reply's.
        assert numbers(sent) == (2 * i - 1, 2 * i, 2 * i, 2 * i)
    saved = (await gql(SAVED, id=sid))["session"]
    assert saved["lastSequenceNumber"] == 2 * exchanges
    return {t["sequenceNumber"]: t["id"] for t in saved["turns"]["nodes"]}


def numbers(payload: dict[str, object]) -> tuple[int | None, ...]:
    """(user turn's number, reply's number, and each one's session's lastSequenceNumber)."""
    user, reply = payload["userTurn"], payload["assistantTurn"]
    assert isinstance(user, dict)
    return (
        user["sequenceNumber"],
        reply["sequenceNumber"] if isinstance(reply, dict) else None,
        user["session"]["lastSequenceNumber"],
        reply["session"]["lastSequenceNumber"] if isinstance(reply, dict) else None,
    )


async def last_sequence(gql: GraphQLClient, sid: str) -> int:
    found: int = (await gql(SAVED, id=sid))["session"]["lastSequenceNumber"]
    return found


async def test_regenerate_payload_names_the_reply_it_wrote(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    turns = await conversation(gql, fake_openai, 2)
    fake_openai.reply("a2 again")
    done = (await gql(REGENERATE, input={"turnId": turns[4]}))["regenerate"]
    assert done["errors"] == []
    # The branch after 3 (the reply's question copied), the new reply at 4.
    assert done["session"]["lastSequenceNumber"] == 4
    assert numbers(done) == (3, 4, 4, 4)
    assert await last_sequence(gql, done["session"]["id"]) == 4


async def test_edit_and_resend_payload_names_the_turns_it_wrote(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    turns = await conversation(gql, fake_openai, 3)
    fake_openai.reply("b2")
    done = (await gql(EDIT, input={"turnId": turns[3], "content": "q2 edited"}))["editAndResend"]
    assert done["errors"] == []
    # The branch after 2, the new message at 3, its reply at 4 (the origin has 6).
    assert done["session"]["lastSequenceNumber"] == 4
    assert numbers(done) == (3, 4, 4, 4)
    assert await last_sequence(gql, done["session"]["id"]) == 4


async def test_edit_and_resend_whose_provider_failed_names_the_message_it_kept(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    turns = await conversation(gql, fake_openai, 2)
    fake_openai.fail(503)
    done = (await gql(EDIT, input={"turnId": turns[3], "content": "again", "idempotencyKey": "k"}))[
        "editAndResend"
    ]
    assert [e["code"] for e in done["errors"]] == ["PROVIDER_ERROR"]
    # The branch after 2 and the message kept at 3; no reply.
    assert done["session"]["lastSequenceNumber"] == 3
    assert numbers(done) == (3, None, 3, None)
    # Sent again with its key: the reply is written at 4, and said so.
    fake_openai.reply("answered")
    again = (
        await gql(EDIT, input={"turnId": turns[3], "content": "again", "idempotencyKey": "k"})
    )["editAndResend"]
    assert again["errors"] == []
    assert again["session"]["id"] == done["session"]["id"]
    assert again["session"]["lastSequenceNumber"] == 4
    assert numbers(again) == (3, 4, 4, 4)


async def test_fork_at_a_turn_payload_names_its_last_copied_turn(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    turns = await conversation(gql, fake_openai, 3)
    done = (await gql(FORK, input={"atTurnId": turns[4]}))["forkSession"]
    assert done["errors"] == []
    assert done["session"]["lastSequenceNumber"] == 4
    assert await last_sequence(gql, done["session"]["id"]) == 4


async def test_continue_reply_payload_names_the_continuation_it_wrote(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid: str = (await create_session(gql, model=LAB))["id"]
    fake_openai.reply("cut off", finish="length")
    sent = (await gql(SEND, input={"sessionId": sid, "content": "q1"}))["sendMessage"]
    assert numbers(sent) == (1, 2, 2, 2)
    fake_openai.reply(" and the rest")
    done = (await gql(CONTINUE, input={"turnId": sent["assistantTurn"]["id"]}))["continueReply"]
    assert done["errors"] == []
    assert done["continued"]["sequenceNumber"] == 2
    assert done["continuation"]["sequenceNumber"] == 3
    assert done["continued"]["session"]["lastSequenceNumber"] == 3
    assert done["continuation"]["session"]["lastSequenceNumber"] == 3
