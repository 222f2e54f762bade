"""Why each reply ended is saved on its turn, in all six cases: the three wire formats'
recording stubs (OpenAI, Anthropic, Ollama) through LiteLLM, sendMessage and
messageStream. A reply cut off by the token limit is LENGTH and interrupted (it
was saved as complete before); a stream cut mid-answer is one error, in the same
words, from every format, and its partial reply LOST_CONNECTION; a stream the
client stops is INTERRUPTED.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette

from tests.support import wire_formats
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session
from tests.support.streams import stream_ws, wait_until
from tests.support.wire_formats import LENGTH, MODELS

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

ENDED = "role content sequenceNumber interrupted finishReason providerFinishReason"
SEND = f"""mutation($input: SendMessageInput!) {{ sendMessage(input: $input) {{
  assistantTurn {{ {ENDED} }} errors {{ code message }} }} }}"""
STREAM = f"""subscription($input: SendMessageInput!) {{ messageStream(input: $input) {{
  __typename
  ... on StreamDelta {{ delta }}
  ... on StreamAssistantTurn {{ assistantTurn {{ {ENDED} }} }}
  ... on StreamFailed {{ errors {{ code message }} partialReply {{ {ENDED} }} }} }} }}"""
SAVED = f"""query($id: ID!) {{ session(id: $id) {{
  turns(first: 100) {{ edges {{ node {{ {ENDED} }} }} }} }} }}"""

FORMATS = tuple(MODELS)
CUT = "Kyoto was the capital for a thousand years and"


# The three stubs behind one providers.yaml, and the app's settings with them.
stubs = wire_formats.stubs
providers_file = wire_formats.providers_file
settings = wire_formats.settings


def ended(
    content: str, reason: str, *, interrupted: bool = False, word: str | None = None
) -> dict[str, Any]:
    return {
        "role": "ASSISTANT",
        "content": content,
        "sequenceNumber": 2,
        "interrupted": interrupted,
        "finishReason": reason,
        "providerFinishReason": word,
    }


async def reply(gql: GraphQLClient, app: Starlette, wire: str, *, streamed: bool) -> Any:
    """Send "Tell me about Kyoto" in a new session on ``wire``'s model; the reply
    as the operation returned it, and the session's turns as saved."""
    sid = (await create_session(gql, model=MODELS[wire]))["id"]
    message = {"sessionId": sid, "content": "Tell me about Kyoto"}
    if streamed:
        async with stream_ws(app) as ws:
            await ws.subscribe("1", message, query=STREAM)
            events = (await ws.events("1"))["1"]
        returned = events[-1].get("assistantTurn") or events[-1]
    else:
        returned = (await gql(SEND, input=message))["sendMessage"]["assistantTurn"]
    saved = (await gql(SAVED, id=sid))["session"]["turns"]["edges"]
    return returned, [edge["node"] for edge in saved]


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_a_reply_cut_off_by_the_token_limit_is_saved_as_length_and_interrupted(
    gql: GraphQLClient, app: Starlette, stubs: dict[str, FakeProvider], wire: str, streamed: bool
) -> None:
    stubs[wire].reply(CUT, finish=LENGTH[wire])

    returned, saved = await reply(gql, app, wire, streamed=streamed)

    assert returned == ended(CUT, "LENGTH", interrupted=True)
    assert saved[1] == returned
    assert saved[0]["finishReason"] is None  # a user turn has no finish reason


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_a_finished_reply_is_saved_as_stop(
    gql: GraphQLClient, app: Starlette, stubs: dict[str, FakeProvider], wire: str, streamed: bool
) -> None:
    stubs[wire].reply("Kyoto is in Kansai.")

    returned, saved = await reply(gql, app, wire, streamed=streamed)

    assert returned == saved[1] == ended("Kyoto is in Kansai.", "STOP")


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_an_unknown_reason_is_saved_as_other_with_the_providers_word(
    gql: GraphQLClient, app: Starlette, stubs: dict[str, FakeProvider], wire: str, streamed: bool
) -> None:
    stubs[wire].reply("Kyoto is", finish="quota_paused")

    returned, saved = await reply(gql, app, wire, streamed=streamed)

    assert returned == saved[1] == ended("Kyoto is", "OTHER", word="quota_paused")


@pytest.mark.parametrize("wire", FORMATS)
async def test_a_stream_cut_mid_answer_is_one_error_in_the_same_words_from_every_format(
    gql: GraphQLClient, app: Starlette, stubs: dict[str, FakeProvider], wire: str
) -> None:
    stubs[wire].stream_chunks(["Kyoto", " was", " the", " capital"], fail_after=2)

    failed, saved = await reply(gql, app, wire, streamed=True)

    # No HTTP 500 was sent: Anthropic and Ollama said "PROVIDER_ERROR … (HTTP 500)".
    assert failed == {
        "__typename": "StreamFailed",
        "errors": [
            {
                "code": "PROVIDER_UNREACHABLE",
                "message": f"{MODELS[wire]}: the connection to the provider was lost mid-answer",
            }
        ],
        "partialReply": ended("Kyoto was", "LOST_CONNECTION", interrupted=True),
    }
    assert saved[1] == failed["partialReply"]


@pytest.mark.parametrize("wire", FORMATS)
async def test_a_connection_cut_before_any_piece_is_unreachable_from_every_format(
    gql: GraphQLClient, app: Starlette, stubs: dict[str, FakeProvider], wire: str
) -> None:
    stubs[wire].stream_chunks(["Kyoto"], fail_after=0)

    failed, saved = await reply(gql, app, wire, streamed=True)

    assert failed["errors"] == [
        {
            "code": "PROVIDER_UNREACHABLE",
            "message": f"{MODELS[wire]}: could not connect to the provider at "
            f"{stubs[wire].root_url}",
        }
    ]
    assert failed["partialReply"] is None
    assert [t["role"] for t in saved] == ["USER"]


async def test_a_stream_the_client_stops_is_saved_as_interrupted(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model=MODELS["openai"]))["id"]
    fake_openai.stream_chunks(["Kyoto", " was", " the"], hold_after=2)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Go on"}, query=STREAM)
        assert await ws.next_event("1") == {"__typename": "StreamUserTurn"}
        await ws.deltas_until("1", "Kyoto was")
        await ws.complete("1")

    async def saved() -> list[dict[str, Any]]:
        edges = (await gql(SAVED, id=sid))["session"]["turns"]["edges"]
        return [edge["node"] for edge in edges] if len(edges) == 2 else []

    turns = await wait_until(saved)
    assert turns[1] == ended("Kyoto was", "INTERRUPTED", interrupted=True)


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
async def test_the_offline_model_reports_stop(
    gql: GraphQLClient, app: Starlette, streamed: bool
) -> None:
    sid = (await create_session(gql, model="offline/echo"))["id"]
    message = {"sessionId": sid, "content": "Hello"}
    if streamed:
        async with stream_ws(app) as ws:
            await ws.subscribe("1", message, query=STREAM)
            returned = (await ws.events("1"))["1"][-1]["assistantTurn"]
    else:
        returned = (await gql(SEND, input=message))["sendMessage"]["assistantTurn"]

    assert (returned["finishReason"], returned["interrupted"]) == ("STOP", False)
