"""The offline transport: the built-in models behind the registry's one interface, without LiteLLM."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason, Usage
from api.errors import ErrorCode, ProviderError
from api.providers import (
    Completion,
    ModelRef,
    OfflineTransport,
    ProviderRegistry,
    StreamChunk,
    default_config,
    offline,
    parse_config,
)
from api.providers.offline import echo_reply, stream_chunks
from tests.support.fake_openai import FakeOpenAI

# LiteLLM's stream handler reads a deprecated pydantic attribute on chunks with an empty
# delta (OpenAI's first chunk); see test_litellm_adapter.py.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

MESSAGES = [
    ChatMessage("system", "You are continuing a conversation."),
    ChatMessage("user", "Plan a trip"),
    ChatMessage("assistant", "Where to?"),
    ChatMessage("user", "Japan in April"),
]


def offline_registry() -> ProviderRegistry:
    # The registry's own table: "offline" is mounted on an OfflineTransport.
    return ProviderRegistry(default_config(), env={})


def offline_prompt_estimate(messages: list[ChatMessage]) -> int:
    """The offline models' documented usage estimate: 4 characters a token plus
    4 tokens of framing per message."""
    return math.ceil(sum(len(m.content) for m in messages) / 4) + 4 * len(messages)


async def test_offline_echo_completes_without_litellm() -> None:
    registry = offline_registry()

    completion = await registry.complete(MESSAGES)

    expected = echo_reply(MESSAGES)
    assert expected == (
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)\n"
        "Checkpoints (0): none\n"
        "Earlier turns: 2 (1 from the user, 1 from the assistant)\n"
        "You asked: Japan in April"
    )
    assert completion == Completion(
        text=expected,
        usage=Usage(
            prompt_tokens=offline_prompt_estimate(MESSAGES),
            completion_tokens=math.ceil(len(expected) / 4),
            cost=0.0,
        ),
        model="offline/echo",
        finish=Finish(FinishReason.STOP),
    )


async def test_offline_echo_streams_word_chunks_then_usage() -> None:
    registry = offline_registry()
    expected = echo_reply(MESSAGES)

    chunks = [chunk async for chunk in registry.stream(MESSAGES, "offline/echo")]

    assert [c.delta for c in chunks[:-1]] == stream_chunks(expected)
    assert all(c.usage is None for c in chunks[:-1])
    # The offline models have no token limit: every answer finishes (STOP).
    assert chunks[-1] == StreamChunk(
        delta="",
        usage=Usage(offline_prompt_estimate(MESSAGES), math.ceil(len(expected) / 4), 0.0),
        finish=Finish(FinishReason.STOP),
    )


async def test_offline_stream_is_paced_when_a_delay_is_set(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI
) -> None:
    # Given a transport that paces the offline models at 50 ms a piece
    pauses: list[float] = []
    real_sleep = asyncio.sleep

    async def record(seconds: float, *args: object) -> None:
        pauses.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(offline, "sleep", record)
    transport = OfflineTransport(stream_delay=0.05)
    registry = ProviderRegistry(default_config(), env={}, mounts={"offline": transport})
    expected = stream_chunks(echo_reply(MESSAGES))

    # When the echo streams, then every piece after the first waited 50 ms
    chunks = [chunk async for chunk in registry.stream(MESSAGES, "offline/echo")]
    assert [c.delta for c in chunks[:-1]] == expected
    assert pauses == [0.05] * (len(expected) - 1)

    # And a real provider's stream is never slowed down
    pauses.clear()
    lab = ProviderRegistry(
        parse_config(
            "providers:\n"
            f"  lab: {{litellm_provider: openai, api_base: '{fake_openai.base_url}', "
            "models: [my-model]}\n"
        ),
        env={},
        mounts={"offline": transport},
    )
    fake_openai.reply("one two three")
    pieces = [c.delta async for c in lab.stream(MESSAGES, "lab/my-model")]
    assert "".join(pieces) == "one two three"
    assert pauses == []


async def test_offline_extractor_drafts_json() -> None:
    registry = offline_registry()
    messages = [
        ChatMessage("system", "You extract a checkpoint from a conversation."),
        ChatMessage("user", "[USER #1]\nWe will use Postgres.\n\n[ASSISTANT #2]\nGood."),
    ]

    completion = await registry.complete(messages, registry.background)

    assert completion.model == "offline/extractor"
    assert json.loads(completion.text) == {
        "title": "We will use Postgres",
        "objective": "We will use Postgres.",
        "summary": "We will use Postgres. Good.",
        "decisions": ["We will use Postgres."],
        "tasks": [],
        "openQuestions": [],
        "entities": ["Postgres"],
    }


def test_counts_and_window_are_the_documented_estimate_without_litellm() -> None:
    transport = OfflineTransport()
    echo = offline_registry().resolve("offline/echo")

    assert [transport.count_tokens(text, echo) for text in ("", "a", "four", "hello")] == [
        0,
        1,
        1,
        2,
    ]
    assert transport.context_window(echo) == offline.OFFLINE_CONTEXT_WINDOW == 32768


async def test_a_model_the_offline_provider_lacks_is_unknown() -> None:
    ghost = ModelRef("offline/ghost", "offline", "ghost", "smriti_offline/ghost")

    with pytest.raises(ProviderError) as caught:
        await OfflineTransport().complete(MESSAGES, ghost, api_key=None)

    assert (caught.value.code, caught.value.message) == (
        ErrorCode.UNKNOWN_MODEL,
        "offline/ghost: the offline provider has no such model",
    )
