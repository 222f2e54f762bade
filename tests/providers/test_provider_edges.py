"""Providers at their edges: the OpenAI, Anthropic, OpenRouter and Ollama wire
formats, through the real LiteLLM transport, against recording stubs.

Each test asserts what the stub received and what Smriti returned; every
failure is checked for the key (never in the message, the repr or the chain).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from api.domain.types import ChatMessage
from api.errors import ErrorCode, ProviderError
from api.providers import Completion, LiteLLMTransport, ProviderRegistry, parse_config
from api.providers.litellm.errors import _seconds
from api.settings import Settings
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_openrouter import FakeOpenRouter
from tests.support.fake_provider import FakeProvider

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SECRET = "sk-edge-SECRET-9f8e7d6c5b4a"
MESSAGES = [
    ChatMessage("system", "Be brief."),
    ChatMessage("user", "Plan a trip"),
    ChatMessage("assistant", "Where?"),
    ChatMessage("user", "Japan"),
]
ROLES = [{"role": m.role, "content": m.content} for m in MESSAGES]


@dataclass(frozen=True)
class Wire:
    provider: str  # the name in providers.yaml, so its defaults apply
    model: str
    stub: type[FakeProvider]
    path: str
    credential: str  # the header value that carries the key, as sent
    body: dict[str, Any]  # what a non-streaming call of MESSAGES sends
    stream_extra: dict[str, Any]  # what a streaming call adds

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"


def anthropic_content(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


WIRES = [
    Wire(
        "openai",
        "gpt-4o-mini",
        FakeOpenAI,
        "/v1/chat/completions",
        f"Bearer {SECRET}",
        {"model": "gpt-4o-mini", "messages": ROLES, "max_tokens": 1024},
        {"stream": True, "stream_options": {"include_usage": True}},
    ),
    Wire(
        "anthropic",
        "claude-sonnet-4-5",
        FakeAnthropic,
        "/v1/messages",
        SECRET,
        {
            "model": "claude-sonnet-4-5",
            "messages": [
                {"role": m.role, "content": anthropic_content(m.content)} for m in MESSAGES[1:]
            ],
            "system": anthropic_content("Be brief."),
            # LiteLLM's default for this model is 64,000: the window kept 1,024.
            "max_tokens": 1024,
        },
        {"stream": True},
    ),
    Wire(
        "openrouter",
        "meta-llama/llama-3.1-70b-instruct",
        FakeOpenRouter,
        "/api/v1/chat/completions",
        f"Bearer {SECRET}",
        {
            "model": "meta-llama/llama-3.1-70b-instruct",
            "messages": ROLES,
            "max_tokens": 1024,
            "usage": {"include": True},
        },
        {"stream": True, "stream_options": {"include_usage": True}},
    ),
    Wire(
        "ollama",
        "llama3.1",
        FakeOllama,
        # /api/chat with the roles, not /api/generate with one flattened prompt.
        "/api/chat",
        f"Bearer {SECRET}",
        {
            "model": "llama3.1",
            "messages": [{**m, "images": []} for m in ROLES],
            "options": {"num_predict": 1024},
            "stream": False,
        },
        {"stream": True},
    ),
]


@pytest.fixture(params=WIRES, ids=[w.provider for w in WIRES])
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def stub(wire: Wire) -> Iterator[FakeProvider]:
    with wire.stub() as server:
        yield server


def registry_for(
    wire: Wire, stub: FakeProvider, *, timeout: float = 5.0, max_tokens: int = 1024
) -> ProviderRegistry:
    config = parse_config(
        "providers:\n"
        f"  {wire.provider}:\n"
        f'    api_base: "{stub.base_url}"\n'  # type: ignore[attr-defined]
        "    api_key_env: EDGE_KEY\n"
        f'    models: ["{wire.model}"]\n'
    )
    return ProviderRegistry(
        config,
        env={"EDGE_KEY": SECRET},
        transport=LiteLLMTransport(timeout=timeout, max_tokens=max_tokens),
    )


async def call(registry: ProviderRegistry, name: str, streaming: bool) -> Any:
    if streaming:
        return [chunk async for chunk in registry.stream(MESSAGES, name)]
    return await registry.complete(MESSAGES, name)


async def failure(registry: ProviderRegistry, name: str, streaming: bool) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await call(registry, name, streaming)
    error = caught.value
    for text in (str(error), repr(error), error.message):
        assert SECRET not in text
    assert error.__cause__ is None
    assert error.__context__ is None
    return error


streaming_ids = pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])


# --- what each provider receives, what Smriti returns ------------------------------


async def test_complete_sends_the_format_and_returns_text_and_usage(
    wire: Wire, stub: FakeProvider
) -> None:
    registry = registry_for(wire, stub)
    stub.reply("Kyoto, then Tokyo.", prompt_tokens=31, completion_tokens=5)

    completion = await registry.complete(MESSAGES, wire.name)

    assert (completion.text, completion.model) == ("Kyoto, then Tokyo.", wire.name)
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (31, 5)
    assert stub.requests == [wire.body]
    assert stub.paths[-1] == wire.path
    assert stub.paths.count(wire.path) == 1
    assert stub.authorizations == [wire.credential]


async def test_stream_sends_the_format_and_yields_pieces_then_usage(
    wire: Wire, stub: FakeProvider
) -> None:
    registry = registry_for(wire, stub)
    stub.stream_chunks(["Kyo", "to,", " then", " Tokyo."])

    chunks = await call(registry, wire.name, streaming=True)

    assert [c.delta for c in chunks] == ["Kyo", "to,", " then", " Tokyo.", ""]
    # 7 prompt words (system prompt included), 3 reply words.
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (7, 3)
    assert stub.requests == [{**wire.body, **wire.stream_extra}]
    assert stub.authorizations == [wire.credential]


async def test_max_tokens_is_the_answer_reserve(wire: Wire, stub: FakeProvider) -> None:
    registry = registry_for(wire, stub, max_tokens=300)

    await registry.complete(MESSAGES, wire.name)

    sent = stub.requests[0]
    limit = sent["options"]["num_predict"] if wire.provider == "ollama" else sent["max_tokens"]
    assert limit == 300


def test_answer_reserve_is_one_setting_read_from_the_environment() -> None:
    settings = Settings.from_environment(
        {"SMRITI_ANSWER_RESERVE_TOKENS": "300"}, database_url="sqlite:///:memory:"
    )
    assert settings.answer_reserve_tokens == 300
    assert (
        Settings.from_environment({}, database_url="sqlite:///:memory:").answer_reserve_tokens
        == 1024
    )


async def test_switching_providers_keeps_each_key_and_format_apart() -> None:
    with FakeOpenAI() as openai, FakeAnthropic() as anthropic, FakeOllama() as ollama:
        config = parse_config(
            "providers:\n"
            f'  openai: {{api_base: "{openai.base_url}", api_key_env: OPENAI_KEY, models: [gpt-4o-mini]}}\n'
            f'  anthropic: {{api_base: "{anthropic.base_url}", api_key_env: ANTHROPIC_KEY, models: [claude-sonnet-4-5]}}\n'
            f'  ollama: {{api_base: "{ollama.base_url}", models: [llama3.1]}}\n'
        )
        registry = ProviderRegistry(
            config,
            env={"OPENAI_KEY": "sk-openai-1", "ANTHROPIC_KEY": "sk-ant-2"},
            transport=LiteLLMTransport(timeout=5),
        )
        openai.reply("one")
        anthropic.reply("two")
        ollama.reply("three")
        openai.reply("four")

        texts = [
            (await registry.complete(MESSAGES, name)).text
            for name in (
                "openai/gpt-4o-mini",
                "anthropic/claude-sonnet-4-5",
                "ollama/llama3.1",
                "openai/gpt-4o-mini",
            )
        ]

        assert texts == ["one", "two", "three", "four"]
        assert openai.authorizations == ["Bearer sk-openai-1", "Bearer sk-openai-1"]
        assert anthropic.authorizations == ["sk-ant-2"]
        # No key variable: no key at all, never another provider's.
        assert ollama.authorizations == [None]
        assert [len(s.requests) for s in (openai, anthropic, ollama)] == [2, 1, 1]


def ollama_registry(ollama: FakeOllama, *, key_env: str | None = None) -> ProviderRegistry:
    key = f", api_key_env: {key_env}" if key_env else ""
    config = parse_config(
        f'providers:\n  ollama: {{api_base: "{ollama.base_url}", models: [llama3.1]{key}}}\n'
    )
    return ProviderRegistry(
        config, env={"OLLAMA_KEY": SECRET}, transport=LiteLLMTransport(timeout=5)
    )


async def send_and_stream(registry: ProviderRegistry) -> None:
    await registry.complete(MESSAGES, "ollama/llama3.1")
    async for _ in registry.stream(MESSAGES, "ollama/llama3.1"):
        pass


async def test_ollama_without_a_key_gets_no_authorization_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    with FakeOllama() as ollama:
        await send_and_stream(ollama_registry(ollama))

    assert ollama.authorizations == [None, None]


async def test_ollama_without_a_key_never_gets_litellms_ambient_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # LiteLLM would send OLLAMA_API_KEY when given no key: the placeholder stands in.
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-ambient-NOT-FOR-THIS-SERVER")
    with FakeOllama() as ollama:
        await send_and_stream(ollama_registry(ollama))

    assert ollama.authorizations == ["Bearer smriti-no-key"] * 2


async def test_ollama_with_a_key_gets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    with FakeOllama() as ollama:
        await send_and_stream(ollama_registry(ollama, key_env="OLLAMA_KEY"))

    assert ollama.authorizations == [f"Bearer {SECRET}"] * 2


# --- failures as codes ---------------------------------------------------------------


@streaming_ids
async def test_context_overflow_is_context_too_long_on_every_provider(
    wire: Wire, stub: FakeProvider, streaming: bool
) -> None:
    registry = registry_for(wire, stub)
    stub.fail(400, code="context_length_exceeded")

    error = await failure(registry, wire.name, streaming)

    assert (error.code, error.message) == (
        ErrorCode.CONTEXT_TOO_LONG,
        f"{wire.name}: the conversation is longer than the model's context window",
    )
    assert len(stub.requests) == 1


@streaming_ids
async def test_openai_request_too_large_is_context_too_long(streaming: bool) -> None:
    wire = WIRES[0]
    with FakeOpenAI() as stub:
        registry = registry_for(wire, stub)
        # OpenAI answers a prompt above the per-minute token cap with a 429 that no wait cures.
        stub.fail(
            429,
            code="rate_limit_exceeded",
            message="Request too large for gpt-4o-mini in organization org-x on tokens per "
            "min (TPM): Limit 30000, Requested 50000.",
        )

        error = await failure(registry, wire.name, streaming)

    assert error.code is ErrorCode.CONTEXT_TOO_LONG


@streaming_ids
async def test_rate_limit_passes_retry_after_on(
    wire: Wire, stub: FakeProvider, streaming: bool
) -> None:
    registry = registry_for(wire, stub)
    stub.fail(429, retry_after=7)

    error = await failure(registry, wire.name, streaming)

    assert (error.code, error.message, error.retry_after) == (
        ErrorCode.PROVIDER_RATE_LIMIT,
        f"{wire.name}: the provider is rate-limiting requests; try again in 7 s",
        7.0,
    )


@streaming_ids
async def test_rate_limit_without_retry_after_says_shortly(
    wire: Wire, stub: FakeProvider, streaming: bool
) -> None:
    registry = registry_for(wire, stub)
    stub.fail(429)

    error = await failure(registry, wire.name, streaming)

    assert (error.code, error.retry_after) == (ErrorCode.PROVIDER_RATE_LIMIT, None)
    assert error.message.endswith("try again shortly")


@streaming_ids
async def test_http_408_is_a_timeout(wire: Wire, stub: FakeProvider, streaming: bool) -> None:
    registry = registry_for(wire, stub)
    stub.fail(408)

    error = await failure(registry, wire.name, streaming)

    assert error.code is ErrorCode.PROVIDER_TIMEOUT


async def test_a_stalled_stream_is_a_timeout(wire: Wire, stub: FakeProvider) -> None:
    registry = registry_for(wire, stub, timeout=0.5)
    stub.stream_chunks(["Kyoto", " then", " more"], hold_after=1)
    received: list[str] = []

    with pytest.raises(ProviderError) as caught:
        async for chunk in registry.stream(MESSAGES, wire.name):
            received.append(chunk.delta)

    assert received == ["Kyoto"]
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_TIMEOUT,
        f"{wire.name}: no answer within 0.5 s",
    )
    # Waited for in a thread: closing the socket needs this event loop to run.
    assert await asyncio.to_thread(stub.wait_for_stream_end, 1) == "client-closed"


UNREADABLE: dict[str, Callable[[FakeProvider], None]] = {
    "empty": lambda stub: stub.raw(""),
    "html": lambda stub: stub.raw(
        "<html><body>Bad gateway</body></html>", content_type="text/html"
    ),
    "truncated-json": lambda stub: stub.raw('{"choices": [{"message": '),
}


@pytest.mark.parametrize("body", list(UNREADABLE))
@streaming_ids
async def test_an_unreadable_200_is_malformed_output(
    wire: Wire, stub: FakeProvider, streaming: bool, body: str
) -> None:
    registry = registry_for(wire, stub)
    UNREADABLE[body](stub)

    error = await failure(registry, wire.name, streaming)

    assert (error.code, error.message) == (
        ErrorCode.MALFORMED_OUTPUT,
        f"{wire.name}: the provider's answer was empty or unreadable",
    )
    assert len(stub.requests) == 1


@streaming_ids
async def test_keys_echoed_by_providers_never_reach_the_error(
    wire: Wire, stub: FakeProvider, streaming: bool
) -> None:
    registry = registry_for(wire, stub)
    for status in (401, 429, 500):
        stub.fail(status)
        error = await failure(registry, wire.name, streaming)
        assert SECRET not in json.dumps({"message": error.message, "code": error.code})


async def test_an_empty_answer_with_usage_is_still_an_answer(
    wire: Wire, stub: FakeProvider
) -> None:
    registry = registry_for(wire, stub)
    stub.reply("", prompt_tokens=4, completion_tokens=0)

    completion = await registry.complete(MESSAGES, wire.name)

    assert completion == Completion("", completion.usage, wire.name)
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (4, 0)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), ("0.25", 0.25), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("soon", None)],
)
def test_retry_after_reads_seconds_or_an_http_date(header: str, seconds: float | None) -> None:
    # A date in the past means "now"; an unreadable value is no advice at all.
    assert _seconds(header) == seconds
