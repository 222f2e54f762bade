"""A call that fails to connect before any answer is tried once more, through LiteLLM.

LiteLLM's aiohttp pool keeps idle connections up to 15 s; servers on uvicorn
close theirs after 5 s. The StaleOpenAI stub closes a kept-alive connection
when a second request arrives on it, which is what the client sees when it
picks up a pooled connection just as the server closes it.
"""

from __future__ import annotations

import logging

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason, Usage
from api.errors import ErrorCode, ProviderError
from api.providers import LiteLLMTransport, ProviderRegistry, parse_config
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import free_port
from tests.support.stale_openai import StaleOpenAI

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SECRET = "sk-stale-SECRET-0123456789abcdef"
MESSAGES = [ChatMessage("user", "Tell me about Kyoto")]
RETRY_LINE = "lab/my-model: the connection failed before any answer; trying once more"


def lab_registry(api_base: str) -> ProviderRegistry:
    config = parse_config(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{api_base}", '
        "api_key_env: LAB_KEY, models: [my-model]}\n"
    )
    return ProviderRegistry(
        config, env={"LAB_KEY": SECRET}, transport=LiteLLMTransport(timeout=5.0)
    )


async def answer(registry: ProviderRegistry, streaming: bool) -> list[str]:
    if streaming:
        return [chunk.delta async for chunk in registry.stream(MESSAGES, "lab/my-model")]
    return [(await registry.complete(MESSAGES, "lab/my-model")).text]


def retries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "smriti"]


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_a_call_on_a_connection_the_server_closed_is_tried_again(
    streaming: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smriti")
    async with StaleOpenAI() as server:
        registry = lab_registry(server.base_url)

        first = await answer(registry, streaming)
        second = await answer(registry, streaming)

        # The second call went out on the kept-alive connection, which the
        # server closed without answering, then again on a new connection.
        assert (server.attempts, server.answered, server.connections) == (3, 2, 2)
    expected = ["Kyoto", ""] if streaming else ["Kyoto"]
    assert (first, second) == (expected, expected)
    assert retries(caplog) == [RETRY_LINE]


async def test_a_stream_on_a_stale_connection_ends_as_a_whole_answer() -> None:
    async with StaleOpenAI() as server:
        registry = lab_registry(server.base_url)
        await answer(registry, streaming=False)

        chunks = [chunk async for chunk in registry.stream(MESSAGES, "lab/my-model")]

        assert (server.attempts, server.answered, server.connections) == (3, 2, 2)
    assert [c.delta for c in chunks] == ["Kyoto", ""]
    assert chunks[-1].finish == Finish(FinishReason.STOP)
    assert chunks[-1].usage == Usage(prompt_tokens=3, completion_tokens=1)


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_a_server_that_refuses_connections_is_tried_twice_then_unreachable(
    streaming: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smriti")
    port = free_port()  # closed again: nothing listens there
    registry = lab_registry(f"http://127.0.0.1:{port}/v1")

    with pytest.raises(ProviderError) as caught:
        await answer(registry, streaming)

    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        f"lab/my-model: could not connect to the provider at http://127.0.0.1:{port}",
    )
    assert (caught.value.__cause__, caught.value.__context__) == (None, None)
    assert retries(caplog) == [RETRY_LINE]
    assert SECRET not in caplog.text


async def test_a_stream_cut_after_its_first_piece_is_not_tried_again(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smriti")
    registry = lab_registry(fake_openai.base_url)
    fake_openai.stream_chunks(["Kyoto", " was", " the"], fail_after=1)
    received: list[str] = []

    with pytest.raises(ProviderError) as caught:
        async for chunk in registry.stream(MESSAGES, "lab/my-model"):
            received.append(chunk.delta)

    assert received == ["Kyoto"]
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        "lab/my-model: the connection to the provider was lost mid-answer",
    )
    assert len(fake_openai.requests) == 1
    assert retries(caplog) == []


async def test_a_stream_cut_after_its_status_line_is_not_tried_again(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    # The server took the request (200) and broke off before the first piece:
    # not a stale connection, and a second try would send the prompt twice.
    caplog.set_level(logging.INFO, logger="smriti")
    registry = lab_registry(fake_openai.base_url)
    fake_openai.stream_chunks(["Kyoto"], fail_after=0)

    with pytest.raises(ProviderError) as caught:
        async for _ in registry.stream(MESSAGES, "lab/my-model"):
            pass

    assert caught.value.code is ErrorCode.PROVIDER_UNREACHABLE
    assert len(fake_openai.requests) == 1
    assert retries(caplog) == []


async def test_a_timeout_is_not_tried_again(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smriti")
    config = parse_config(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{fake_openai.base_url}", '
        "models: [my-model]}\n"
    )
    registry = ProviderRegistry(config, env={}, transport=LiteLLMTransport(timeout=0.3))
    fake_openai.delay(2.0)

    with pytest.raises(ProviderError) as caught:
        await registry.complete(MESSAGES, "lab/my-model")

    assert caught.value.code is ErrorCode.PROVIDER_TIMEOUT
    assert len(fake_openai.requests) == 1
    assert retries(caplog) == []
