"""Why an answer ended, through LiteLLM, from the three wire formats' recording stubs.

Each stub sends the reason in its own words (OpenAI ``finish_reason``,
Anthropic ``stop_reason``, Ollama ``done_reason``), whole or streamed; the
registry reports it as a ``Finish``. A reason LiteLLM does not know is kept
as OTHER with the provider's word (LiteLLM itself would call it "stop").
"""

from __future__ import annotations

import pytest

from api.domain.types import ChatMessage, Finish, FinishReason
from api.providers import ProviderRegistry
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


async def ended(registry: ProviderRegistry, model: str, *, streamed: bool) -> tuple[str, Finish]:
    """The answer's text and how it ended, whole or streamed."""
    if not streamed:
        completion = await registry.complete(MESSAGES, model)
        return completion.text, completion.finish
    chunks = [chunk async for chunk in registry.stream(MESSAGES, model)]
    assert [c.finish for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert chunks[-1].finish is not None
    return "".join(c.delta for c in chunks), chunks[-1].finish


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_the_token_limit_is_reported_as_length(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str, streamed: bool
) -> None:
    stubs[wire].reply(TEXT, finish=LENGTH[wire])

    assert await ended(registry, MODELS[wire], streamed=streamed) == (
        TEXT,
        Finish(FinishReason.LENGTH),
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_a_normal_end_is_stop(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str, streamed: bool
) -> None:
    stubs[wire].reply("Done.")

    assert await ended(registry, MODELS[wire], streamed=streamed) == (
        "Done.",
        Finish(FinishReason.STOP),
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_a_reason_litellm_does_not_know_is_kept_as_other_with_the_providers_word(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str, streamed: bool
) -> None:
    stubs[wire].reply("Paused.", finish="quota_paused")

    assert await ended(registry, MODELS[wire], streamed=streamed) == (
        "Paused.",
        Finish(FinishReason.OTHER, "quota_paused"),
    )


@pytest.mark.parametrize(
    ("wire", "word", "reason"),
    [
        ("openai", "content_filter", FinishReason.CONTENT_FILTER),
        ("openai", "tool_calls", FinishReason.TOOL_CALLS),
        ("anthropic", "refusal", FinishReason.CONTENT_FILTER),
        ("anthropic", "tool_use", FinishReason.TOOL_CALLS),
    ],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
async def test_filters_and_tool_calls_have_reasons_of_their_own(
    stubs: dict[str, FakeProvider],
    registry: ProviderRegistry,
    wire: str,
    word: str,
    reason: FinishReason,
    streamed: bool,
) -> None:
    stubs[wire].reply("Sorry.", finish=word)

    assert await ended(registry, MODELS[wire], streamed=streamed) == ("Sorry.", Finish(reason))


async def test_an_unknown_word_is_kept_for_its_own_call_only(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry
) -> None:
    # The catch of LiteLLM's warning belongs to the call that was running.
    stubs["ollama"].reply("One.", finish="odd_reason")
    stubs["ollama"].reply("Two.")

    first = await registry.complete(MESSAGES, MODELS["ollama"])
    second = await registry.complete(MESSAGES, MODELS["ollama"])

    assert (first.finish, second.finish) == (
        Finish(FinishReason.OTHER, "odd_reason"),
        Finish(FinishReason.STOP),
    )
