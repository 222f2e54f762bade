"""A stream cut mid-answer, from the three wire formats' recording stubs through LiteLLM.

The stub drops the connection after two pieces; no status was ever sent. Every
format comes back as one error, PROVIDER_UNREACHABLE, in the same words (LiteLLM
reports the cut as an HTTP 500 for Anthropic and Ollama, which read "the
provider call failed (HTTP 500)" before).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.domain.types import ChatMessage
from api.errors import ErrorCode, ProviderError
from api.providers import LiteLLMTransport, ProviderRegistry, parse_config
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

MESSAGES = [ChatMessage("user", "Tell me about Kyoto")]
MODELS = {
    "openai": "lab/my-model",
    "anthropic": "anthropic/claude-sonnet-4-5",
    "ollama": "ollama/llama3.1",
}


@pytest.fixture(scope="module")
def stubs() -> Iterator[dict[str, FakeProvider]]:
    with FakeOpenAI() as openai, FakeAnthropic() as anthropic, FakeOllama() as ollama:
        yield {"openai": openai, "anthropic": anthropic, "ollama": ollama}


@pytest.fixture(scope="module")
def registry(stubs: dict[str, FakeProvider]) -> ProviderRegistry:
    openai, anthropic, ollama = stubs["openai"], stubs["anthropic"], stubs["ollama"]
    config = parse_config(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{openai.root_url}/v1", '
        "models: [my-model]}\n"
        f'  anthropic: {{api_base: "{anthropic.root_url}", api_key_env: ANTHROPIC_KEY, '
        "models: [claude-sonnet-4-5]}\n"
        f'  ollama: {{api_base: "{ollama.root_url}", models: [llama3.1]}}\n'
    )
    return ProviderRegistry(
        config, env={"ANTHROPIC_KEY": "sk-ant"}, transport=LiteLLMTransport(timeout=5.0)
    )


@pytest.mark.parametrize("wire", tuple(MODELS))
async def test_a_stream_cut_mid_answer_is_unreachable_in_the_same_words(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str
) -> None:
    stubs[wire].stream_chunks(["Kyoto", " was", " the", " capital"], fail_after=2)
    received: list[str] = []

    with pytest.raises(ProviderError) as raised:
        async for chunk in registry.stream(MESSAGES, MODELS[wire]):
            received.append(chunk.delta)

    assert received == ["Kyoto", " was"]
    assert (raised.value.code, raised.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        f"{MODELS[wire]}: the connection to the provider was lost mid-answer",
    )


@pytest.mark.parametrize("wire", tuple(MODELS))
async def test_a_stream_cut_before_its_first_piece_is_unreachable_in_the_same_words(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str
) -> None:
    stubs[wire].stream_chunks(["Kyoto"], fail_after=0)

    with pytest.raises(ProviderError) as raised:
        async for _ in registry.stream(MESSAGES, MODELS[wire]):
            pass

    assert (raised.value.code, raised.value.message) == (
        ErrorCode.PROVIDER_UNREACHABLE,
        f"{MODELS[wire]}: could not connect to the provider at {stubs[wire].root_url}",
    )
