"""continueReply and continueReplyStream: the model goes on from a reply that was cut off.

The cut-off reply is made for real (a recording stub answers with its format's
token-limit reason); what each stub then receives is asserted exactly: the
conversation ending with the cut-off reply, then the short instruction, which
every provider accepts. The continuation is a new assistant turn right after it.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette

from api.domain.continuation import CONTINUE_INSTRUCTION
from tests.support import wire_formats
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, send
from tests.support.streams import merged, stream_ws, wait_until
from tests.support.wire_formats import LENGTH, MODELS

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

TURN = (
    "role content sequenceNumber provider model interrupted finishReason "
    "replyToSequence continuesSequence"
)
SEND = f"""mutation($input: SendMessageInput!) {{ sendMessage(input: $input) {{
  assistantTurn {{ id {TURN} }} errors {{ code message }} }} }}"""
CONTINUE = f"""mutation($input: ContinueReplyInput!) {{ continueReply(input: $input) {{
  continued {{ {TURN} }} continuation {{ id {TURN} }}
  context {{ model messages {{ role content }} }}
  errors {{ code message field }} }} }}"""
CONTINUE_STREAM = f"""subscription($input: ContinueReplyInput!) {{
  continueReplyStream(input: $input) {{ __typename
    ... on StreamContinuing {{ continued {{ sequenceNumber }} context {{ model }} }}
    ... on StreamDelta {{ delta }}
    ... on StreamAssistantTurn {{ assistantTurn {{ {TURN} }} }}
    ... on StreamFailed {{ errors {{ code message field }} partialReply {{ {TURN} }} }} }} }}"""
SAVED = f"""query($id: ID!) {{ session(id: $id) {{ lastSequenceNumber
  turns(first: 100) {{ edges {{ node {{ {TURN} }} }} }} }} }}"""

QUESTION = "Tell me about Kyoto"
CUT = "Kyoto was the capital for a thousand years and"
REST = " it still has 1,600 temples."


# The three stubs behind one providers.yaml, and the app's settings with them.
stubs = wire_formats.stubs
providers_file = wire_formats.providers_file
settings = wire_formats.settings


def turn(
    role: str,
    content: str,
    sequence: int,
    wire: str = "openai",
    *,
    reason: str | None = None,
    reply_to: int | None = None,
    continues: int | None = None,
) -> dict[str, Any]:
    provider, _, model = MODELS[wire].partition("/")
    return {
        "role": role,
        "content": content,
        "sequenceNumber": sequence,
        "provider": provider,
        "model": model,
        "interrupted": reason in ("LENGTH", "INTERRUPTED", "LOST_CONNECTION"),
        "finishReason": reason,
        "replyToSequence": reply_to,
        "continuesSequence": continues,
    }


async def cut_off_reply(
    gql: GraphQLClient, stubs: dict[str, FakeProvider], wire: str = "openai", **session: Any
) -> tuple[str, str]:
    """A session whose one exchange ended at the token limit: (session id, reply id)."""
    sid: str = (await create_session(gql, model=MODELS[wire], **session))["id"]
    stubs[wire].reply(CUT, finish=LENGTH[wire])
    sent = (await gql(SEND, input={"sessionId": sid, "content": QUESTION}))["sendMessage"]
    assert sent["assistantTurn"]["finishReason"] == "LENGTH"
    return sid, sent["assistantTurn"]["id"]


def without_id(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "id"}


async def saved(gql: GraphQLClient, sid: str) -> list[dict[str, Any]]:
    session = (await gql(SAVED, id=sid))["session"]
    turns = [edge["node"] for edge in session["turns"]["edges"]]
    assert session["lastSequenceNumber"] == len(turns)
    return turns


# What each format receives for the continuation: the question, the cut-off reply
# as the model's last message, then the instruction as a user message.
def wire_messages(wire: str) -> list[dict[str, Any]]:
    turns = [("user", QUESTION), ("assistant", CUT), ("user", CONTINUE_INSTRUCTION)]
    if wire == "anthropic":
        return [{"role": r, "content": [{"type": "text", "text": t}]} for r, t in turns]
    if wire == "ollama":
        return [{"role": r, "content": t, "images": []} for r, t in turns]
    return [{"role": r, "content": t} for r, t in turns]


@pytest.mark.parametrize("wire", tuple(MODELS))
async def test_continue_reply_asks_for_the_rest_and_saves_it_right_after_the_cut_off_reply(
    gql: GraphQLClient, stubs: dict[str, FakeProvider], wire: str
) -> None:
    sid, reply_id = await cut_off_reply(gql, stubs, wire)
    stubs[wire].reply(REST)

    done = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]

    cut = turn("ASSISTANT", CUT, 2, wire, reason="LENGTH", reply_to=1)
    rest = turn("ASSISTANT", REST, 3, wire, reason="STOP", reply_to=1, continues=2)
    assert done["errors"] == []
    assert (done["continued"], without_id(done["continuation"])) == (cut, rest)
    assert done["context"] == {
        "model": MODELS[wire],
        "messages": [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": CUT},
            {"role": "user", "content": CONTINUE_INSTRUCTION},
        ],
    }
    assert stubs[wire].requests[1]["messages"] == wire_messages(wire)
    assert await saved(gql, sid) == [
        turn("USER", QUESTION, 1, wire),
        cut,
        rest,
    ]


async def test_a_continuation_is_numbered_with_the_exchange_it_continues(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply(REST)
    assert (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]["errors"] == []
    fake_openai.reply("Nara has deer.")
    assert (await send(gql, sid, "And Nara?"))["errors"] == []

    query = """query($id: ID!) { session(id: $id) {
      turns(first: 10) { edges { node { sequenceNumber exchangeNumber } } } } }"""
    edges = (await gql(query, id=sid))["session"]["turns"]["edges"]
    numbers = [(e["node"]["sequenceNumber"], e["node"]["exchangeNumber"]) for e in edges]
    assert numbers == [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2)]


async def test_a_reply_and_its_continuation_are_one_message_for_the_model_afterwards(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply(REST)
    await gql(CONTINUE, input={"turnId": reply_id})
    fake_openai.reply("Spring.")

    await gql(SEND, input={"sessionId": sid, "content": "When to go?"})

    assert fake_openai.requests[2]["messages"] == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": CUT + REST},
        {"role": "user", "content": "When to go?"},
    ]


async def test_continuing_a_reply_again_returns_its_continuation_without_a_model_call(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply(REST)

    first = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]
    again = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]

    assert again == first
    assert len(fake_openai.requests) == 2  # the reply and one continuation
    assert [t["sequenceNumber"] for t in await saved(gql, sid)] == [1, 2, 3]


async def test_a_continuation_cut_off_in_turn_can_be_continued(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    _, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply(" it still has", finish="length")
    second = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]
    fake_openai.reply(" 1,600 temples.")

    third = (await gql(CONTINUE, input={"turnId": second["continuation"]["id"]}))["continueReply"]

    assert without_id(second["continuation"]) == turn(
        "ASSISTANT", " it still has", 3, reason="LENGTH", reply_to=1, continues=2
    )
    assert without_id(third["continuation"]) == turn(
        "ASSISTANT", " 1,600 temples.", 4, reason="STOP", reply_to=1, continues=3
    )
    # The model saw the answer so far as one message, as it wrote it.
    assert fake_openai.requests[2]["messages"] == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": CUT + " it still has"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]


async def test_a_provider_failure_writes_nothing_and_can_be_retried(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.fail(429, retry_after=3)

    failed = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]
    fake_openai.reply(REST)
    retried = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]

    assert failed["continuation"] is None
    assert failed["errors"] == [
        {
            "code": "PROVIDER_RATE_LIMIT",
            "message": "lab/my-model: the provider is rate-limiting requests; try again in 3 s",
            "field": None,
        }
    ]
    assert retried["continuation"]["content"] == REST
    assert [t["content"] for t in await saved(gql, sid)] == [QUESTION, CUT, REST]


async def refused(gql: GraphQLClient, turn_id: str, **extra: Any) -> Any:
    done = (await gql(CONTINUE, input={"turnId": turn_id, **extra}))["continueReply"]
    assert (done["continued"], done["continuation"], done["context"]) == (None, None, None)
    return done["errors"]


async def test_only_a_cut_off_reply_that_is_the_sessions_last_turn_can_be_continued(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid: str = (await create_session(gql, model="lab/my-model"))["id"]
    fake_openai.reply("Done.")
    finished = (await gql(SEND, input={"sessionId": sid, "content": "Hi"}))["sendMessage"]
    ids = await gql(
        "query($id: ID!) { session(id: $id) { turns(first: 10) { edges { node { id } } } } }",
        id=sid,
    )
    user_turn = ids["session"]["turns"]["edges"][0]["node"]["id"]
    _, earlier = await cut_off_reply(gql, {"openai": fake_openai})
    later_sid, later = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply("Fine.")
    await gql(SEND, input={"sessionId": later_sid, "content": "Next"})
    calls = len(fake_openai.requests)

    assert await refused(gql, finished["assistantTurn"]["id"]) == [
        {
            "code": "INVALID",
            "message": "This reply was not cut off: only a reply stopped by the token limit, "
            "interrupted, or cut off by a lost connection can be continued.",
            "field": "turnId",
        }
    ]
    assert await refused(gql, user_turn) == [
        {"code": "INVALID", "message": "Only a model's reply can be continued.", "field": "turnId"}
    ]
    assert await refused(gql, later) == [
        {
            "code": "INVALID",
            "message": "Only the last turn of a session can be continued: the session has "
            "gone on since.",
            "field": "turnId",
        }
    ]
    assert await refused(gql, earlier, model="lab/nope") == [
        {
            "code": "UNKNOWN_MODEL",
            "message": 'unknown model "lab/nope": use a "provider/model" listed by providers',
            "field": "model",
        }
    ]
    assert await refused(gql, "VHVybjo5OTk5OQ==") == [  # Turn:99999
        {"code": "NOT_FOUND", "message": "No such turn.", "field": "turnId"}
    ]
    assert len(fake_openai.requests) == calls


async def test_a_reply_the_context_no_longer_reaches_is_refused(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await create_space(gql)
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai}, spaceId=space)
    await checkpoint(gql, sid, "Kyoto notes")  # the context now starts after the reply

    assert await refused(gql, reply_id) == [
        {
            "code": "INVALID",
            "message": "The model would not see this reply: a checkpoint saved or mounted "
            "after it starts the context later, or the reply alone is longer than the "
            "model's window.",
            "field": "turnId",
        }
    ]
    assert len(fake_openai.requests) == 1


async def test_another_model_can_continue_and_is_checked_like_a_message(
    gql: GraphQLClient, stubs: dict[str, FakeProvider]
) -> None:
    _, reply_id = await cut_off_reply(gql, stubs, "openai")
    stubs["ollama"].reply(REST)

    done = (await gql(CONTINUE, input={"turnId": reply_id, "model": "ollama/llama3.1"}))[
        "continueReply"
    ]

    assert without_id(done["continuation"]) == turn(
        "ASSISTANT", REST, 3, "ollama", reason="STOP", reply_to=1, continues=2
    )
    assert stubs["ollama"].requests[0]["messages"] == wire_messages("ollama")


async def test_continue_reply_stream_streams_the_rest_and_saves_it(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.stream_chunks([" it still", " has", " 1,600 temples."])

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"turnId": reply_id}, query=CONTINUE_STREAM)
        events = (await ws.events("1"))["1"]

    rest = turn(
        "ASSISTANT", " it still has 1,600 temples.", 3, reason="STOP", reply_to=1, continues=2
    )
    # the pieces joined where they went out together
    assert merged(events) == [
        {
            "__typename": "StreamContinuing",
            "continued": {"sequenceNumber": 2},
            "context": {"model": "lab/my-model"},
        },
        {"__typename": "StreamDelta", "delta": " it still has 1,600 temples."},
        {"__typename": "StreamAssistantTurn", "assistantTurn": rest},
    ]
    assert fake_openai.requests[1]["messages"] == wire_messages("openai")
    assert (await saved(gql, sid))[2] == rest


async def test_a_stopped_continuation_stream_keeps_what_arrived(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.stream_chunks([" it still", " has", " more"], hold_after=1)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"turnId": reply_id}, query=CONTINUE_STREAM)
        assert [(await ws.next_event("1"))["__typename"] for _ in range(2)] == [
            "StreamContinuing",
            "StreamDelta",
        ]
        await ws.complete("1")

    async def three() -> list[dict[str, Any]]:
        # Read while the stop's save may be under way: the session's counter and its
        # turns are two statements, which on PostgreSQL may straddle that commit; wait
        # until both show it (``saved`` then holds them equal).
        session = (await gql(SAVED, id=sid))["session"]
        if session["lastSequenceNumber"] != 3 or len(session["turns"]["edges"]) != 3:
            return []
        return await saved(gql, sid)

    assert (await wait_until(three))[2] == turn(
        "ASSISTANT", " it still", 3, reason="INTERRUPTED", reply_to=1, continues=2
    )


async def test_a_refused_continuation_stream_is_one_failed_event(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid: str = (await create_session(gql, model="lab/my-model"))["id"]
    fake_openai.reply("Done.")
    finished = (await gql(SEND, input={"sessionId": sid, "content": "Hi"}))["sendMessage"]

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"turnId": finished["assistantTurn"]["id"]}, query=CONTINUE_STREAM)
        events = (await ws.events("1"))["1"]

    assert [e["__typename"] for e in events] == ["StreamFailed"]
    assert [e["code"] for e in events[0]["errors"]] == ["INVALID"]
    assert len(fake_openai.requests) == 1


async def test_continuing_a_continued_reply_by_stream_replays_its_continuation(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    _, reply_id = await cut_off_reply(gql, {"openai": fake_openai})
    fake_openai.reply(REST)
    first = (await gql(CONTINUE, input={"turnId": reply_id}))["continueReply"]["continuation"]

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"turnId": reply_id}, query=CONTINUE_STREAM)
        events = (await ws.events("1"))["1"]

    assert [e["__typename"] for e in events] == [
        "StreamContinuing",
        "StreamDelta",
        "StreamAssistantTurn",
    ]
    assert events[1]["delta"] == REST
    assert events[2]["assistantTurn"] == without_id(first)
    assert len(fake_openai.requests) == 2  # the reply and the one continuation
