"""Provider edges through the real app: what a client sees and what is saved.

An unreadable answer is an error the user can retry, not an empty reply; a
provider's Retry-After reaches the payload; max_tokens is the answer reserve
the window kept; switching providers mid-session keeps each key with its own
provider and out of every response and log line.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from api.settings import Settings
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import TURN, create_session, send
from tests.support.streams import stream_ws
from tests.support.wire_formats import three_formats_file

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

ANTHROPIC_SECRET = "sk-ant-edge-SECRET-31415926"
RESERVE = 700
SEND_WITH_RETRY = f"""
mutation($input: SendMessageInput!) {{
  sendMessage(input: $input) {{
    userTurn {{ {TURN} }} assistantTurn {{ {TURN} }}
    errors {{ code message field ... on SendMessageError {{ retryAfterSeconds }} }}
  }}
}}
"""
STREAM_WITH_RETRY = """
subscription($input: SendMessageInput!) { messageStream(input: $input) {
  __typename
  ... on StreamDelta { delta }
  ... on StreamAssistantTurn { assistantTurn { content sequenceNumber } }
  ... on StreamFailed { errors { code message retryAfterSeconds } partialReply { content } }
} }
"""
SAVED = """query($id: ID!) { session(id: $id) { lastSequenceNumber
  turns(first: 100) { edges { node { role content sequenceNumber } } } } }"""


@pytest.fixture
def providers_file(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    fake_anthropic: FakeAnthropic,
    fake_ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    return three_formats_file(
        tmp_path, fake_openai, fake_anthropic, fake_ollama, monkeypatch, ANTHROPIC_SECRET
    )


@pytest.fixture
def settings(database_url: str, providers_file: Path) -> Settings:
    return Settings(
        database_url=database_url,
        providers_file=providers_file,
        provider_timeout_seconds=5.0,
        answer_reserve_tokens=RESERVE,
        title_sessions=False,
        allowed_hosts=("smriti.test",),
    )


async def saved(gql: GraphQLClient, sid: str) -> list[tuple[str, str, int]]:
    session = (await gql(SAVED, id=sid))["session"]
    turns = [edge["node"] for edge in session["turns"]["edges"]]
    assert session["lastSequenceNumber"] == len(turns)
    return [(t["role"], t["content"], t["sequenceNumber"]) for t in turns]


async def lab_session(gql: GraphQLClient) -> str:
    sid: str = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    return sid


# --- an unreadable answer is not a reply ------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["", "<html><body>502 Bad Gateway</body></html>", '{"choices": [{"message": '],
    ids=["empty", "html", "truncated-json"],
)
async def test_send_message_with_an_unreadable_answer_saves_no_reply_and_can_be_retried(
    gql: GraphQLClient, fake_openai: FakeOpenAI, body: str
) -> None:
    sid = await lab_session(gql)
    fake_openai.raw(body, content_type="text/html" if body.startswith("<") else "application/json")

    failed = (
        await gql(SEND_WITH_RETRY, input={"sessionId": sid, "content": "Hi", "idempotencyKey": "k"})
    )["sendMessage"]
    fake_openai.reply("Hello.")
    retried = (
        await gql(SEND_WITH_RETRY, input={"sessionId": sid, "content": "Hi", "idempotencyKey": "k"})
    )["sendMessage"]

    assert failed["assistantTurn"] is None
    assert failed["errors"] == [
        {
            "code": "MALFORMED_OUTPUT",
            "message": "lab/my-model: the provider's answer was empty or unreadable",
            "field": None,
            "retryAfterSeconds": None,
        }
    ]
    assert retried["errors"] == []
    assert retried["assistantTurn"]["content"] == "Hello."
    assert await saved(gql, sid) == [("USER", "Hi", 1), ("ASSISTANT", "Hello.", 2)]


@pytest.mark.parametrize(
    "body",
    ["", "<html><body>502 Bad Gateway</body></html>", '{"choices": [{"message": '],
    ids=["empty", "html", "truncated-json"],
)
async def test_a_stream_with_no_piece_and_no_usage_fails_and_saves_no_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI, body: str
) -> None:
    sid = await lab_session(gql)
    fake_openai.raw(body, content_type="text/html" if body.startswith("<") else "application/json")
    message = {"sessionId": sid, "content": "Hi", "idempotencyKey": "k"}

    async with stream_ws(app) as ws:
        await ws.subscribe("1", message, query=STREAM_WITH_RETRY)
        failed = (await ws.events("1"))["1"]
        fake_openai.stream_chunks(["Hel", "lo."])
        await ws.subscribe("2", message, query=STREAM_WITH_RETRY)
        retried = (await ws.events("2"))["2"]

    assert failed == [
        {"__typename": "StreamUserTurn"},
        {
            "__typename": "StreamFailed",
            "errors": [
                {
                    "code": "MALFORMED_OUTPUT",
                    "message": "lab/my-model: the provider's answer was empty or unreadable",
                    "retryAfterSeconds": None,
                }
            ],
            "partialReply": None,
        },
    ]
    assert retried[-1] == {
        "__typename": "StreamAssistantTurn",
        "assistantTurn": {"content": "Hello.", "sequenceNumber": 2},
    }
    assert await saved(gql, sid) == [("USER", "Hi", 1), ("ASSISTANT", "Hello.", 2)]


# --- Retry-After --------------------------------------------------------------------------


async def test_retry_after_reaches_send_message_and_the_stream(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.fail(429, retry_after=12)
    fake_openai.fail(429, retry_after=2.5)

    sent = (await gql(SEND_WITH_RETRY, input={"sessionId": sid, "content": "Hi"}))["sendMessage"]
    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Again"}, query=STREAM_WITH_RETRY)
        streamed = (await ws.events("1"))["1"]

    assert sent["errors"] == [
        {
            "code": "PROVIDER_RATE_LIMIT",
            "message": "lab/my-model: the provider is rate-limiting requests; try again in 12 s",
            "field": None,
            "retryAfterSeconds": 12.0,
        }
    ]
    assert streamed[-1]["errors"] == [
        {
            "code": "PROVIDER_RATE_LIMIT",
            "message": "lab/my-model: the provider is rate-limiting requests; try again in 2.5 s",
            "retryAfterSeconds": 2.5,
        }
    ]


# --- max_tokens, Ollama's chat endpoint, switching providers ------------------------


async def test_switching_providers_mid_session_sends_each_its_format_and_key(
    gql: GraphQLClient,
    app: Starlette,
    fake_openai: FakeOpenAI,
    fake_anthropic: FakeAnthropic,
    fake_ollama: FakeOllama,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    sid = await lab_session(gql)
    fake_openai.reply("Where to?")
    fake_anthropic.reply("Kyoto in April.")
    fake_ollama.reply("Book early.")
    fake_anthropic.fail(401)  # echoes the key it was sent
    responses: list[Any] = []

    responses.append(await send(gql, sid, "Plan a trip"))
    responses.append(await send(gql, sid, "Japan", model="anthropic/claude-sonnet-4-5"))
    responses.append(await send(gql, sid, "Anything else?", model="ollama/llama3.1"))
    responses.append(await send(gql, sid, "And now?", model="anthropic/claude-sonnet-4-5"))

    assert [r["assistantTurn"] and r["assistantTurn"]["content"] for r in responses] == [
        "Where to?",
        "Kyoto in April.",
        "Book early.",
        None,
    ]
    assert responses[3]["errors"] == [
        {
            "code": "PROVIDER_AUTH",
            "message": "anthropic/claude-sonnet-4-5: the provider rejected the API key "
            "(set SMRITI_TEST_ANTHROPIC_KEY)",
            "field": None,
        }
    ]
    # Anthropic got the conversation so far in its own format, with the
    # reserve as max_tokens (LiteLLM's default would be 64,000).
    assert fake_anthropic.requests[0] == {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Plan a trip"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Where to?"}]},
            {"role": "user", "content": [{"type": "text", "text": "Japan"}]},
        ],
        "max_tokens": RESERVE,
    }
    assert fake_anthropic.authorizations == [ANTHROPIC_SECRET, ANTHROPIC_SECRET]
    # Ollama: /api/chat with the roles, never /api/generate.
    assert "/api/generate" not in fake_ollama.paths
    assert fake_ollama.paths.count("/api/chat") == 1
    assert fake_ollama.requests[0]["messages"] == [
        {"role": role, "content": text, "images": []}
        for role, text in [
            ("user", "Plan a trip"),
            ("assistant", "Where to?"),
            ("user", "Japan"),
            ("assistant", "Kyoto in April."),
            ("user", "Anything else?"),
        ]
    ]
    assert fake_ollama.requests[0]["options"] == {"num_predict": RESERVE}
    assert fake_ollama.authorizations == [None]  # no key configured: none sent
    assert fake_openai.requests[0]["max_tokens"] == RESERVE
    assert fake_openai.authorizations == ["Bearer smriti-no-key"]
    # The key is nowhere a client or an operator can read it.
    assert ANTHROPIC_SECRET not in json.dumps(responses)
    assert ANTHROPIC_SECRET not in caplog.text
    assert ANTHROPIC_SECRET not in json.dumps(await gql(SAVED, id=sid))
