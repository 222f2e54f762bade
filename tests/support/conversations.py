"""A session with a conversation, and the mutations that branch it (regenerate, edit
and resend, fork at a turn): for the tests of conversation branches."""

from __future__ import annotations

from typing import Any

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

LAB = "lab/my-model"
ERR = "errors { code message field }"
TURN = "id role content sequenceNumber replyToSequence"
BRANCH = (
    "id title lastSequenceNumber branchName model memoryScope space { id } "
    "mount { baseSequence checkpoint { id } } branchedFrom { afterSequence session { id } }"
)
FORK = f"""mutation($input: ForkSessionInput!) {{ forkSession(input: $input) {{
  session {{ {BRANCH} }} {ERR} }} }}"""
REGENERATE = f"""mutation($input: RegenerateInput!) {{ regenerate(input: $input) {{
  session {{ {BRANCH} }} userTurn {{ {TURN} }} assistantTurn {{ {TURN} }}
  context {{ mode boundary turns {{ sequenceNumber }} }} {ERR} }} }}"""
EDIT = f"""mutation($input: EditAndResendInput!) {{ editAndResend(input: $input) {{
  session {{ {BRANCH} }} userTurn {{ {TURN} }} assistantTurn {{ {TURN} }}
  context {{ mode boundary turns {{ sequenceNumber }} }} {ERR} }} }}"""
TURNS = f"""query($id: ID!) {{ session(id: $id) {{ lastSequenceNumber
  turns(first: 100) {{ nodes {{ {TURN} }} }} }} }}"""


async def conversation(gql: GraphQLClient, fake: FakeOpenAI, n: int, **fields: Any) -> str:
    """A session of ``n`` exchanges: "q1", "a1", "q2", "a2", …"""
    sid: str = (await create_session(gql, model=LAB, **fields))["id"]
    for i in range(1, n + 1):
        fake.reply(f"a{i}")
        sent = await send(gql, sid, f"q{i}")
        assert sent["errors"] == [], sent
    return sid


async def turn_id(gql: GraphQLClient, sid: str, sequence: int) -> str:
    nodes = (await gql(TURNS, id=sid))["session"]["turns"]["nodes"]
    found: str = next(t["id"] for t in nodes if t["sequenceNumber"] == sequence)
    return found
