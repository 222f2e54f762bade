"""OpenAI-compatible streams read beneath LiteLLM's wrapper (api/providers/litellm/streams.py).

The transport reads the OpenAI SDK's stream itself for the ``openai`` route
and LiteLLM's wrapper for every other one. The two paths must give the same
pieces, usage, price, finish and error for the same answer: each case below
is streamed both ways (``READ_BENEATH_WRAPPER`` off, then on) from the same
stub body, and both must equal the expected outcome.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason, Usage
from api.errors import ErrorCode, ProviderError
from api.providers import LiteLLMTransport, ProviderRegistry, StreamChunk, parse_config
from api.providers.litellm import streams, transport
from tests.support import wire_formats
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider
from tests.support.wire_formats import MODELS

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

MESSAGES = [ChatMessage("user", "Tell me about Kyoto")]
PRICED = "lab/gpt-4o-mini"  # LiteLLM's catalogue prices openai/gpt-4o-mini
UNPRICED = "lab/my-model"
# openai/gpt-4o-mini: $0.15 a million prompt tokens, $0.60 a million completion tokens.
PRICE_5_2 = 5 * 0.15e-6 + 2 * 0.6e-6
STOP = Finish(FinishReason.STOP)

stubs = wire_formats.module_stubs


@pytest.fixture(scope="module")
def openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def lab(openai: FakeOpenAI) -> ProviderRegistry:
    config = parse_config(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{openai.base_url}", '
        "models: [my-model, gpt-4o-mini]}\n"
    )
    return ProviderRegistry(config, transport=LiteLLMTransport(timeout=5.0))


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each reader the transport opens a stream with, in order."""
    opened: list[str] = []
    for name in ("raw", "wrapped"):
        real = getattr(streams, name)

        def spy(*args: Any, _real: Any = real, _name: str = name) -> AsyncIterator[str]:
            opened.append(_name)
            return _real(*args)  # type: ignore[no-any-return]

        monkeypatch.setattr(streams, name, spy)
    return opened


# --- which path ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "reader"), [("openai", "raw"), ("anthropic", "wrapped"), ("ollama", "wrapped")]
)
async def test_only_the_openai_route_is_read_beneath_the_wrapper(
    stubs: dict[str, FakeProvider], readers: list[str], wire: str, reader: str
) -> None:
    registry = wire_formats.registry_for(stubs)
    stubs[wire].reply("Kyoto was the capital")

    chunks = [chunk async for chunk in registry.stream(MESSAGES, MODELS[wire])]

    assert "".join(c.delta for c in chunks) == "Kyoto was the capital"
    assert readers == [reader]


async def test_the_switch_reads_the_openai_route_through_the_wrapper(
    openai: FakeOpenAI, lab: ProviderRegistry, readers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "READ_BENEATH_WRAPPER", False)
    openai.reply("Kyoto")

    chunks = [chunk async for chunk in lab.stream(MESSAGES, UNPRICED)]

    assert [c.delta for c in chunks] == ["Kyoto", ""]
    assert readers == ["wrapped"]


# --- the same answer, both ways -------------------------------------------------


def event(choices: list[dict[str, Any]], **extra: Any) -> str:
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1}
    return "data: " + json.dumps({**chunk, "model": "m", "choices": choices, **extra}) + "\n\n"


def piece(text: str) -> str:
    return event([{"index": 0, "delta": {"content": text}, "finish_reason": None}])


def finish(reason: str, text: str | None = None) -> str:
    delta = {} if text is None else {"content": text}
    return event([{"index": 0, "delta": delta, "finish_reason": reason}])


ROLE = event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
USAGE = event([], usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7})
DONE = "data: [DONE]\n\n"


def ends(usage: Usage, reason: Finish) -> tuple[str, Usage, Finish]:
    return ("", usage, reason)


def failed(code: ErrorCode, message: str) -> tuple[str, ErrorCode, str]:
    return ("failed", code, message)


# LiteLLM estimates the usage of a stream that reports none: the prompt's
# tokens (with its chat template) and the pieces'.
ESTIMATED = Usage(11, 3, 11 * 0.15e-6 + 3 * 0.6e-6)
LOST = "the provider call failed (HTTP 500)"
# body -> the pieces, then how the stream ended, for lab/gpt-4o-mini
CASES: dict[str, tuple[str, list[Any]]] = {
    "whole": (
        ROLE + piece("Kyoto") + piece(" was") + finish("stop") + USAGE + DONE,
        ["Kyoto", " was", ends(Usage(5, 2, PRICE_5_2), STOP)],
    ),
    "text in the finish chunk": (
        piece("Kyoto") + finish("stop", " was") + USAGE + DONE,
        ["Kyoto", " was", ends(Usage(5, 2, PRICE_5_2), STOP)],
    ),
    "the token limit": (
        piece("Kyoto") + finish("length") + USAGE + DONE,
        ["Kyoto", ends(Usage(5, 2, PRICE_5_2), Finish(FinishReason.LENGTH))],
    ),
    "a word LiteLLM maps (eos)": (
        piece("Kyoto") + finish("eos") + USAGE + DONE,
        ["Kyoto", ends(Usage(5, 2, PRICE_5_2), STOP)],
    ),
    "a word nobody knows": (
        piece("Kyoto") + finish("odd_reason") + USAGE + DONE,
        ["Kyoto", ends(Usage(5, 2, PRICE_5_2), Finish.other("odd_reason"))],
    ),
    "no usage reported": (
        piece("Kyoto") + piece(" was") + finish("stop") + DONE,
        ["Kyoto", " was", ends(ESTIMATED, STOP)],
    ),
    "usage, no [DONE]": (
        piece("Kyoto") + finish("stop") + USAGE,
        ["Kyoto", ends(Usage(5, 2, PRICE_5_2), STOP)],
    ),
    "cut after the finish reason": (
        piece("Kyoto") + piece(" was") + finish("stop"),
        ["Kyoto", " was", ends(ESTIMATED, STOP)],
    ),
    "no finish reason": (
        piece("Kyoto") + USAGE + DONE,
        ["Kyoto", failed(ErrorCode.PROVIDER_ERROR, LOST)],
    ),
    "aborted": (
        piece("Kyoto") + finish("abort", " lost") + USAGE + DONE,
        ["Kyoto", failed(ErrorCode.PROVIDER_ERROR, LOST)],
    ),
    "finish reason error": (
        piece("Kyoto") + finish("error") + USAGE + DONE,
        ["Kyoto", failed(ErrorCode.PROVIDER_ERROR, LOST)],
    ),
    "an error event mid-answer": (
        piece("Kyoto") + 'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n',
        ["Kyoto", failed(ErrorCode.PROVIDER_ERROR, LOST)],
    ),
    "a rate limit mid-answer": (
        piece("Kyoto") + 'data: {"error": {"message": "Rate limit reached for requests"}}\n\n',
        [
            "Kyoto",
            failed(
                ErrorCode.PROVIDER_RATE_LIMIT,
                "the provider is rate-limiting requests; try again shortly",
            ),
        ],
    ),
    "too long, as an error event": (
        'data: {"error": {"message": "This model\'s maximum context length is 8192 tokens"}}\n\n',
        [
            failed(
                ErrorCode.CONTEXT_TOO_LONG,
                "the conversation is longer than the model's context window",
            )
        ],
    ),
    "malformed JSON mid-answer": (
        piece("Kyoto") + "data: {not json\n\n",
        [
            "Kyoto",
            failed(ErrorCode.MALFORMED_OUTPUT, "the provider's answer was empty or unreadable"),
        ],
    ),
    "an empty body": (
        "",
        [failed(ErrorCode.MALFORMED_OUTPUT, "the provider's answer was empty or unreadable")],
    ),
}

# The streams the raw path ends itself: pieces, a finish reason and the usage.
USUAL = {
    "whole",
    "text in the finish chunk",
    "the token limit",
    "a word LiteLLM maps (eos)",
    "a word nobody knows",
    "usage, no [DONE]",
}


async def outcome(registry: ProviderRegistry, model: str) -> list[Any]:
    received: list[Any] = []
    try:
        async for chunk in registry.stream(MESSAGES, model):
            if chunk.delta:
                assert (chunk.usage, chunk.finish) == (None, None)
                received.append(chunk.delta)
            else:
                received.append(("", chunk.usage, chunk.finish))
    except ProviderError as error:
        received.append(("failed", error.code, error.message.removeprefix(f"{model}: ")))
    return received


@pytest.mark.parametrize("case", list(CASES))
async def test_both_paths_end_a_stream_alike(
    openai: FakeOpenAI,
    lab: ProviderRegistry,
    readers: list[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    body, expected = CASES[case]
    results = []
    for beneath in (False, True):
        monkeypatch.setattr(transport, "READ_BENEATH_WRAPPER", beneath)
        openai.raw(body, content_type="text/event-stream")
        results.append(await outcome(lab, PRICED))

    assert results == [expected, expected]
    # The raw path ends an unusual stream through the wrapper (streams.raw).
    assert readers == ["wrapped", "raw"] + ([] if case in USUAL else ["wrapped"])


@pytest.mark.parametrize("beneath", [False, True], ids=["wrapper", "raw"])
async def test_an_unpriced_model_streams_without_a_cost(
    openai: FakeOpenAI,
    lab: ProviderRegistry,
    monkeypatch: pytest.MonkeyPatch,
    beneath: bool,
) -> None:
    monkeypatch.setattr(transport, "READ_BENEATH_WRAPPER", beneath)
    for _ in range(2):  # the second from the cache of unpriced models
        openai.reply("Kyoto was", prompt_tokens=5, completion_tokens=2)
        assert await outcome(lab, UNPRICED) == ["Kyoto", " was", ends(Usage(5, 2), STOP)]


async def test_an_unpriced_model_is_looked_up_once(
    openai: FakeOpenAI, lab: ProviderRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm = transport.loader.load()
    asked: list[str] = []
    real = litellm.cost_per_token

    def counting(**kwargs: Any) -> Any:
        asked.append(kwargs["model"])
        return real(**kwargs)

    monkeypatch.setattr(litellm, "cost_per_token", counting)
    monkeypatch.setattr(transport, "_unpriced", set())
    for model in (UNPRICED, UNPRICED, PRICED, PRICED):
        openai.reply("Kyoto", prompt_tokens=5, completion_tokens=2)
        [_ async for _ in lab.stream(MESSAGES, model)]

    assert asked == ["openai/my-model", "openai/gpt-4o-mini", "openai/gpt-4o-mini"]


# --- closing ---------------------------------------------------------------------


@pytest.mark.parametrize("beneath", [False, True], ids=["wrapper", "raw"])
async def test_a_consumer_that_stops_early_closes_the_providers_stream(
    openai: FakeOpenAI,
    lab: ProviderRegistry,
    monkeypatch: pytest.MonkeyPatch,
    beneath: bool,
) -> None:
    monkeypatch.setattr(transport, "READ_BENEATH_WRAPPER", beneath)
    openai.stream_chunks(["Kyoto", " was", " the"], hold_after=2)
    number = len(openai.requests) + 1

    stream = lab.stream(MESSAGES, UNPRICED)
    assert await anext(stream) == StreamChunk("Kyoto")
    await stream.aclose()  # type: ignore[attr-defined]

    # Waited for in a thread: closing the socket needs this event loop to run.
    assert await asyncio.to_thread(openai.wait_for_stream_end, number) == "client-closed"
