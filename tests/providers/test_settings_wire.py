"""Instructions and parameters on the wire, through LiteLLM, to the three formats' stubs.

A session's instructions are the system message the context builds; its
temperature, top_p, max output tokens and stop list are sent beside it. Each
recording stub shows exactly what its format received, whole and streamed.
"""

from __future__ import annotations

from typing import Any

import pytest

from api.domain.types import ChatMessage, ModelParameters
from api.providers import ProviderRegistry, parse_config
from tests.support import wire_formats
from tests.support.fake_provider import FakeProvider
from tests.support.wire_formats import MODELS

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

INSTRUCTIONS = "Answer as a pirate would."
MESSAGES = [ChatMessage("system", INSTRUCTIONS), ChatMessage("user", "Where is the gold?")]
PARAMETERS = ModelParameters(temperature=0.3, top_p=0.9, max_output_tokens=200, stop=("END", "##"))
FORMATS = tuple(MODELS)


stubs = wire_formats.module_stubs


@pytest.fixture(scope="module")
def registry(stubs: dict[str, FakeProvider]) -> ProviderRegistry:
    return wire_formats.registry_for(stubs)


async def sent(
    registry: ProviderRegistry,
    stub: FakeProvider,
    model: str,
    parameters: ModelParameters | None,
    *,
    streamed: bool,
) -> dict[str, Any]:
    """The body ``stub`` received for one answer, whole or streamed."""
    stub.reply("Arr.")
    if streamed:
        chunks = [c async for c in registry.stream(MESSAGES, model, parameters=parameters)]
        assert "".join(c.delta for c in chunks) == "Arr."
    else:
        assert (await registry.complete(MESSAGES, model, parameters=parameters)).text == "Arr."
    body: dict[str, Any] = stub.requests[-1]
    return body


def carried(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    """What of ``body`` carries the instructions and the parameters, in the format's names."""
    if wire == "openai":
        keys = ("temperature", "top_p", "max_tokens", "stop")
        return {
            "system": [m for m in body["messages"] if m["role"] == "system"],
            **{k: body[k] for k in keys if k in body},
        }
    if wire == "anthropic":
        keys = ("temperature", "top_p", "max_tokens", "stop_sequences")
        return {"system": body.get("system"), **{k: body[k] for k in keys if k in body}}
    system = [
        {"role": m["role"], "content": m["content"]}
        for m in body["messages"]
        if m["role"] == "system"
    ]
    return {"system": system, "options": body.get("options")}


# Exactly what each format receives for the instructions and PARAMETERS.
EXPECTED = {
    "openai": {
        "system": [{"role": "system", "content": INSTRUCTIONS}],
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 200,
        "stop": ["END", "##"],
    },
    # Anthropic: a top-level system field, and stop_sequences.
    "anthropic": {
        "system": [{"type": "text", "text": INSTRUCTIONS}],
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 200,
        "stop_sequences": ["END", "##"],
    },
    # Ollama: the system message as it is, the parameters in options.
    "ollama": {
        "system": [{"role": "system", "content": INSTRUCTIONS}],
        "options": {"temperature": 0.3, "top_p": 0.9, "stop": ["END", "##"], "num_predict": 200},
    },
}
# With no parameters set: only the answer reserve (1,024 tokens) is sent.
DEFAULTS = {
    "openai": {"system": [{"role": "system", "content": INSTRUCTIONS}], "max_tokens": 1024},
    "anthropic": {"system": [{"type": "text", "text": INSTRUCTIONS}], "max_tokens": 1024},
    "ollama": {
        "system": [{"role": "system", "content": INSTRUCTIONS}],
        "options": {"num_predict": 1024},
    },
}


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_instructions_and_parameters_reach_each_format(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str, streamed: bool
) -> None:
    body = await sent(registry, stubs[wire], MODELS[wire], PARAMETERS, streamed=streamed)

    assert carried(wire, body) == EXPECTED[wire]


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", FORMATS)
async def test_no_parameters_send_only_the_answer_reserve(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str, streamed: bool
) -> None:
    body = await sent(registry, stubs[wire], MODELS[wire], ModelParameters(), streamed=streamed)

    assert carried(wire, body) == DEFAULTS[wire]


@pytest.mark.parametrize("wire", FORMATS)
async def test_one_parameter_alone_is_sent_alone(
    stubs: dict[str, FakeProvider], registry: ProviderRegistry, wire: str
) -> None:
    body = await sent(
        registry, stubs[wire], MODELS[wire], ModelParameters(temperature=0.0), streamed=False
    )

    expected = dict(DEFAULTS[wire])
    if wire == "ollama":
        expected["options"] = {"temperature": 0.0, "num_predict": 1024}
    else:
        expected["temperature"] = 0.0
    assert carried(wire, body) == expected


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
async def test_the_offline_echo_shows_the_instructions_and_parameters_it_received(
    streamed: bool,
) -> None:
    registry = ProviderRegistry(parse_config("providers: {}\n"))
    if streamed:
        chunks = registry.stream(MESSAGES, "offline/echo", parameters=PARAMETERS)
        text = "".join([c.delta async for c in chunks])
    else:
        text = (await registry.complete(MESSAGES, "offline/echo", parameters=PARAMETERS)).text

    assert text.splitlines()[-2:] == [
        "Instructions: Answer as a pirate would.",
        'Parameters: temperature 0.3, top_p 0.9, max output tokens 200, stop "END", "##"',
    ]


async def test_the_offline_echo_says_nothing_more_without_them() -> None:
    registry = ProviderRegistry(parse_config("providers: {}\n"))

    text = (await registry.complete([ChatMessage("user", "hi")], "offline/echo")).text

    assert text.splitlines()[-1] == "You asked: hi"
