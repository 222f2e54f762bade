"""The LiteLLM transport, against an OpenAI-compatible server.

The `fake_openai` fixture (tests/conftest.py) is a FakeOpenAI server; these tests
assert exactly what it received and exactly what the registry returned.
"""

from __future__ import annotations

import socket
import time

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason, Usage
from api.errors import ErrorCode, ProviderError
from api.providers import (
    DEFAULT_CONTEXT_WINDOW,
    Completion,
    LiteLLMTransport,
    ProviderRegistry,
    StreamChunk,
    parse_config,
)
from api.providers.litellm import loader
from tests.support.fake_openai import FakeOpenAI

# LiteLLM's stream handler reads a deprecated pydantic attribute on chunks with an empty
# delta (OpenAI's first chunk). LiteLLM silences that warning process-wide when it is
# imported, but pytest restores its own filters after the test that imported it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SECRET = "sk-fake-SECRET-0123456789abcdef"
MESSAGES = [
    ChatMessage("system", "You are continuing a conversation."),
    ChatMessage("user", "Plan a trip"),
    ChatMessage("assistant", "Where to?"),
    ChatMessage("user", "Japan in April"),
]
WIRE_MESSAGES = [{"role": m.role, "content": m.content} for m in MESSAGES]


def lab_registry(
    api_base: str,
    *,
    env: dict[str, str] | None = None,
    key_env: bool = True,
    timeout: float = 5.0,
) -> ProviderRegistry:
    key_line = "    api_key_env: LAB_API_KEY\n" if key_env else ""
    config = parse_config(
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{api_base}"\n'
        f"{key_line}"
        "    models: [my-model]\n"
    )
    return ProviderRegistry(
        config,
        env={"LAB_API_KEY": SECRET} if env is None else env,
        transport=LiteLLMTransport(timeout=timeout),
    )


def assert_secret_free(error: ProviderError) -> None:
    for text in (str(error), repr(error), error.message):
        assert SECRET not in text
    # Not even reachable through the exception chain.
    assert error.__cause__ is None
    assert error.__context__ is None


def test_token_counts_and_context_windows() -> None:
    registry = ProviderRegistry(
        parse_config(
            "providers:\n"
            "  openai: {api_key_env: OPENAI_API_KEY, models: [gpt-4o-mini]}\n"
            "  lab: {litellm_provider: openai, api_base: 'http://127.0.0.1:1/v1', models: [x-1]}\n"
        ),
        env={},
    )

    # offline/echo, the chat default: the offline estimate, 4 characters a token.
    assert registry.count_tokens("hello world") == 3
    assert registry.count_tokens("hello world", "openai/gpt-4o-mini") == 2
    assert registry.count_tokens("") == 0
    assert registry.context_window("offline/echo") == 32768
    assert registry.context_window("offline/extractor") == 32768
    assert registry.context_window("openai/gpt-4o-mini") == 128000
    assert registry.context_window("lab/x-1") == DEFAULT_CONTEXT_WINDOW == 8192


# --- an OpenAI-compatible server ----------------------------------------------------


async def test_complete_sends_exactly_the_messages_and_returns_text_and_usage(
    fake_openai: FakeOpenAI,
) -> None:
    registry = lab_registry(fake_openai.base_url)
    fake_openai.reply("Kyoto, then Tokyo.", prompt_tokens=31, completion_tokens=5)

    completion = await registry.complete(MESSAGES, "lab/my-model")

    assert completion == Completion("Kyoto, then Tokyo.", Usage(31, 5, None), "lab/my-model")
    assert fake_openai.requests == [
        {"model": "my-model", "messages": WIRE_MESSAGES, "max_tokens": 1024}
    ]
    assert fake_openai.authorizations == [f"Bearer {SECRET}"]


async def test_stream_yields_the_server_chunks_then_usage(fake_openai: FakeOpenAI) -> None:
    registry = lab_registry(fake_openai.base_url)
    fake_openai.stream_chunks(["Kyo", "to,", " then", " Tokyo."])

    chunks = [chunk async for chunk in registry.stream(MESSAGES, "lab/my-model")]

    # Usage from the server's final chunk: 13 prompt words, 3 reply words.
    assert chunks == [
        StreamChunk("Kyo"),
        StreamChunk("to,"),
        StreamChunk(" then"),
        StreamChunk(" Tokyo."),
        StreamChunk("", Usage(13, 3, None), Finish(FinishReason.STOP)),
    ]
    assert fake_openai.requests == [
        {
            "model": "my-model",
            "messages": WIRE_MESSAGES,
            "max_tokens": 1024,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ]


async def test_known_model_prices_give_a_cost(fake_openai: FakeOpenAI) -> None:
    registry = ProviderRegistry(
        parse_config(
            "providers:\n"
            "  openai:\n"
            f'    api_base: "{fake_openai.base_url}"\n'
            "    api_key_env: OPENAI_API_KEY\n"
            "    models: [gpt-4o-mini]\n"
        ),
        env={"OPENAI_API_KEY": SECRET},
    )
    fake_openai.reply("ok", prompt_tokens=1000, completion_tokens=1000)

    completion = await registry.complete(MESSAGES, "openai/gpt-4o-mini")

    # gpt-4o-mini in LiteLLM's bundled price list: $0.15 / 1M input, $0.60 / 1M output.
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (1000, 1000)
    assert completion.usage.cost == pytest.approx(0.00075)


async def test_an_unpriced_model_is_not_priced_a_second_time(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LiteLLM prices every answer itself and finds no price for my-model; asking
    # it again walked its whole catalogue a second time for the same None.
    registry = lab_registry(fake_openai.base_url)
    await registry.complete(MESSAGES, "lab/my-model")  # LiteLLM imported
    litellm = loader.load()
    asked: list[str] = []
    real = litellm.completion_cost

    def counting(*args: object, **kwargs: object) -> object:
        asked.append(str(kwargs.get("model")))
        return real(*args, **kwargs)

    monkeypatch.setattr(litellm, "completion_cost", counting)
    fake_openai.reply("ok", prompt_tokens=10, completion_tokens=1)

    completion = await registry.complete(MESSAGES, "lab/my-model")

    assert completion.usage == Usage(10, 1, None)
    assert asked == []


async def test_provider_without_key_variable_never_gets_an_ambient_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    registry = lab_registry(fake_openai.base_url, key_env=False)

    await registry.complete(MESSAGES, "lab/my-model")

    assert fake_openai.authorizations == ["Bearer smriti-no-key"]


async def test_key_exported_after_start_is_used(fake_openai: FakeOpenAI) -> None:
    env: dict[str, str] = {}
    registry = lab_registry(fake_openai.base_url, env=env)
    with pytest.raises(ProviderError) as caught:
        await registry.complete(MESSAGES, "lab/my-model")
    assert caught.value.code is ErrorCode.PROVIDER_UNAVAILABLE
    assert fake_openai.requests == []

    env["LAB_API_KEY"] = SECRET
    await registry.complete(MESSAGES, "lab/my-model")

    assert fake_openai.authorizations == [f"Bearer {SECRET}"]


@pytest.mark.parametrize(
    ("status", "code", "expected_code", "message"),
    [
        (
            401,
            None,
            ErrorCode.PROVIDER_AUTH,
            "lab/my-model: the provider rejected the API key (set LAB_API_KEY)",
        ),
        (
            429,
            None,
            ErrorCode.PROVIDER_RATE_LIMIT,
            "lab/my-model: the provider is rate-limiting requests; try again shortly",
        ),
        (
            400,
            "context_length_exceeded",
            ErrorCode.CONTEXT_TOO_LONG,
            "lab/my-model: the conversation is longer than the model's context window",
        ),
        (
            500,
            None,
            ErrorCode.PROVIDER_ERROR,
            "lab/my-model: the provider call failed (HTTP 500)",
        ),
        (
            400,
            None,
            ErrorCode.PROVIDER_ERROR,
            "lab/my-model: the provider call failed (HTTP 400)",
        ),
    ],
)
@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_http_failures_map_to_codes_without_the_provider_text(
    fake_openai: FakeOpenAI,
    status: int,
    code: str | None,
    expected_code: ErrorCode,
    message: str,
    streaming: bool,
) -> None:
    registry = lab_registry(fake_openai.base_url)
    fake_openai.fail(status, code=code)

    with pytest.raises(ProviderError) as caught:
        if streaming:
            async for _ in registry.stream(MESSAGES, "lab/my-model"):
                pass
        else:
            await registry.complete(MESSAGES, "lab/my-model")

    assert (caught.value.code, caught.value.message) == (expected_code, message)
    assert_secret_free(caught.value)
    assert len(fake_openai.requests) == 1  # no retries


async def test_slow_provider_times_out(fake_openai: FakeOpenAI) -> None:
    registry = lab_registry(fake_openai.base_url, timeout=0.5)
    fake_openai.delay(3)

    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await registry.complete(MESSAGES, "lab/my-model")
    elapsed = time.monotonic() - started

    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_TIMEOUT,
        "lab/my-model: no answer within 0.5 s",
    )
    assert 0.5 <= elapsed < 2.5
    assert len(fake_openai.requests) == 1
    assert_secret_free(caught.value)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: nothing listens there


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_refused_connection_is_unreachable(streaming: bool) -> None:
    port = _closed_port()
    registry = lab_registry(f"http://127.0.0.1:{port}/v1")

    with pytest.raises(ProviderError) as caught:
        if streaming:
            async for _ in registry.stream(MESSAGES, "lab/my-model"):
                pass
        else:
            await registry.complete(MESSAGES, "lab/my-model")

    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        f"lab/my-model: could not connect to the provider at http://127.0.0.1:{port}",
    )
    assert_secret_free(caught.value)


async def test_connection_lost_mid_stream_keeps_the_chunks_already_sent(
    fake_openai: FakeOpenAI,
) -> None:
    registry = lab_registry(fake_openai.base_url)
    fake_openai.stream_chunks(["Kyoto", " first", " then"], fail_after=2)
    received: list[str] = []

    with pytest.raises(ProviderError) as caught:
        async for chunk in registry.stream(MESSAGES, "lab/my-model"):
            received.append(chunk.delta)

    assert received == ["Kyoto", " first"]
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        "lab/my-model: the connection to the provider was lost mid-answer",
    )


async def test_consumer_may_stop_a_stream_early(fake_openai: FakeOpenAI) -> None:
    registry = lab_registry(fake_openai.base_url)
    fake_openai.stream_chunks(["one", " two", " three"])

    stream = registry.stream(MESSAGES, "lab/my-model")
    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert first == StreamChunk("one")
    fake_openai.reply("still serving")
    assert (await registry.complete(MESSAGES, "lab/my-model")).text == "still serving"


async def test_unreachable_message_leaves_the_url_path_and_query_out() -> None:
    port = _closed_port()
    registry = lab_registry(f"http://127.0.0.1:{port}/v1/tenant-7f3a?token=abc")

    with pytest.raises(ProviderError) as caught:
        await registry.complete(MESSAGES, "lab/my-model")

    assert caught.value.message == (
        f"lab/my-model: could not connect to the provider at http://127.0.0.1:{port}"
    )
