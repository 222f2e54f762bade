"""A stream's end through LiteLLM, in the three wire formats: the transport stops
reading once the finish reason and the usage have arrived (LiteLLM's last chunk)
and closes the stream, so LiteLLM does not assemble the whole answer a second
time to log it (bench/litellm_stream.py); OpenAI's format is read beneath
LiteLLM's wrapper (api/providers/litellm/streams.py), which assembles nothing.
What Smriti reads must stay exact:
the pieces, the provider's finish reason, the usage and its price.
"""

from __future__ import annotations

from typing import Any

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason, Usage
from api.providers import ProviderRegistry, StreamChunk
from api.providers.litellm import loader
from tests.support import wire_formats
from tests.support.fake_provider import FakeProvider
from tests.support.wire_formats import LENGTH, MODELS

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

MESSAGES = [ChatMessage("user", "Tell me everything about Kyoto")]
TEXT = "Kyoto was the capital for a thousand years and"
FORMATS = tuple(LENGTH)

stubs = wire_formats.module_stubs


@pytest.fixture(scope="module")
def registry(stubs: dict[str, FakeProvider]) -> ProviderRegistry:
    return wire_formats.registry_for(stubs)


@pytest.mark.parametrize("wire", FORMATS)
async def test_a_stream_cut_at_the_token_limit_ends_with_its_exact_usage_and_length(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str
) -> None:
    stubs[wire].reply(TEXT, prompt_tokens=27, completion_tokens=9, finish=LENGTH[wire])
    whole = await registry.complete(MESSAGES, MODELS[wire])
    stubs[wire].reply(TEXT, prompt_tokens=27, completion_tokens=9, finish=LENGTH[wire])

    chunks = [chunk async for chunk in registry.stream(MESSAGES, MODELS[wire])]

    assert "".join(c.delta for c in chunks) == TEXT
    assert [c.usage for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    # The same usage and price as the whole answer (Anthropic's model is priced).
    assert chunks[-1] == StreamChunk("", whole.usage, Finish(FinishReason.LENGTH))
    assert (whole.usage.prompt_tokens, whole.usage.completion_tokens) == (27, 9)
    assert (whole.usage.cost is not None) == (wire == "anthropic")


@pytest.mark.parametrize("wire", FORMATS)
async def test_litellm_assembles_a_streamed_answer_once(
    stubs: dict[str, FakeProvider],
    registry: ProviderRegistry,
    wire: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stubs[wire].reply("warm")
    [_ async for _ in registry.stream(MESSAGES, MODELS[wire])]  # LiteLLM imported
    litellm = loader.load()
    built: list[int] = []
    real = litellm.stream_chunk_builder

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(len(kwargs.get("chunks") or args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(litellm, "stream_chunk_builder", counting)
    stubs[wire].reply("Done.", prompt_tokens=3, completion_tokens=2)

    chunks = [chunk async for chunk in registry.stream(MESSAGES, MODELS[wire])]

    assert (chunks[-1].usage or Usage()).completion_tokens == 2
    # Once, for the usage LiteLLM hands over (reading on would build it again);
    # never for OpenAI's format, read beneath LiteLLM's wrapper (streams.raw).
    assert len(built) == (0 if wire == "openai" else 1)
