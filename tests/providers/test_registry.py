"""The registry: names, availability, keys read at call time — through a fake transport."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from api.domain.types import ChatMessage, Usage
from api.errors import ErrorCode, InputError, ProviderError
from api.providers import (
    Completion,
    ModelRef,
    ProviderRegistry,
    ProviderStatus,
    StreamChunk,
    load_config,
    parse_config,
)

SECRET = "sk-test-SECRET-0123456789"

CONFIG = parse_config(
    """\
chat_default: offline/echo
background_intelligence: offline/extractor
providers:
  openai: {api_key_env: OPENAI_API_KEY, models: [gpt-4o-mini, gpt-4o]}
  openrouter: {api_key_env: OPENROUTER_API_KEY, models: [meta-llama/llama-3.1-70b-instruct]}
  lab:
    litellm_provider: openai
    api_base: "http://127.0.0.1:8080/v1"
    models: [my-model]
"""
)

LAB = ModelRef(
    name="lab/my-model",
    provider="lab",
    model="my-model",
    litellm_model="openai/my-model",
    api_base="http://127.0.0.1:8080/v1",
    api_key_env=None,
)


@dataclass
class FakeTransport:
    """Records each call; answers with a fixed text."""

    calls: list[tuple[str, list[ChatMessage], ModelRef, str | None]] = field(default_factory=list)

    async def complete(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> Completion:
        self.calls.append(("complete", list(messages), ref, api_key))
        return Completion("answer", Usage(1, 2, None), ref.name)

    async def stream(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> AsyncIterator[StreamChunk]:
        self.calls.append(("stream", list(messages), ref, api_key))
        yield StreamChunk("ans")
        yield StreamChunk("wer")
        yield StreamChunk("", Usage(1, 2, None))

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        self.calls.append(("count_tokens", [ChatMessage("user", text)], ref, None))
        return len(text)

    def context_window(self, ref: ModelRef) -> int:
        self.calls.append(("context_window", [], ref, None))
        return 1000

    def output_limit(self, ref: ModelRef) -> int:
        self.calls.append(("output_limit", [], ref, None))
        return 500


MESSAGES = [ChatMessage("user", "hello")]


def registry(env: dict[str, str]) -> tuple[ProviderRegistry, FakeTransport]:
    transport = FakeTransport()
    return ProviderRegistry(CONFIG, env=env, transport=transport), transport


def test_provider_without_its_key_is_listed_unavailable() -> None:
    reg, _ = registry({"OPENROUTER_API_KEY": SECRET})

    assert reg.providers() == [
        ProviderStatus("offline", True, None, ("echo", "extractor")),
        ProviderStatus("openai", False, "OPENAI_API_KEY is not set", ("gpt-4o-mini", "gpt-4o")),
        ProviderStatus("openrouter", True, None, ("meta-llama/llama-3.1-70b-instruct",)),
        ProviderStatus("lab", True, None, ("my-model",)),
    ]
    assert SECRET not in repr(reg.providers())


OPTIONAL = (
    "providers:\n"
    "  lab:\n"
    "    litellm_provider: openai\n"
    '    api_base: "http://127.0.0.1:8080/v1"\n'
    "    api_key_env: LAB_API_KEY\n"
    "    api_key_optional: true\n"
    "    models: [my-model]\n"
)


async def test_a_provider_whose_key_is_optional_is_available_without_it() -> None:
    transport = FakeTransport()
    env: dict[str, str] = {}
    reg = ProviderRegistry(parse_config(OPTIONAL), env=env, transport=transport)

    assert reg.providers()[1] == ProviderStatus("lab", True, None, ("my-model",))
    await reg.complete(MESSAGES, "lab/my-model")
    env["LAB_API_KEY"] = SECRET
    await reg.complete(MESSAGES, "lab/my-model")

    # Without the variable: no key; with it: the key.
    assert [call[3] for call in transport.calls] == [None, SECRET]


def test_the_repository_file_lists_lab_available_without_its_key() -> None:
    config = load_config(Path(__file__).resolve().parents[2] / "providers.yaml")
    statuses = ProviderRegistry(config, env={}, transport=FakeTransport()).providers()

    assert [(s.name, s.available, s.reason) for s in statuses] == [
        ("offline", True, None),
        ("openai", False, "OPENAI_API_KEY is not set"),
        ("anthropic", False, "ANTHROPIC_API_KEY is not set"),
        ("openrouter", False, "OPENROUTER_API_KEY is not set"),
        ("ollama", True, None),
        ("lab", True, None),
    ]


def test_blank_key_counts_as_unset() -> None:
    reg, _ = registry({"OPENAI_API_KEY": "   "})

    assert reg.providers()[1] == ProviderStatus(
        "openai", False, "OPENAI_API_KEY is not set", ("gpt-4o-mini", "gpt-4o")
    )


def test_defaults() -> None:
    reg, _ = registry({})

    assert (reg.chat_default, reg.background) == ("offline/echo", "offline/extractor")
    assert reg.resolve(None) == ModelRef(
        "offline/echo", "offline", "echo", "smriti_offline/echo", None, None
    )


def test_resolve_splits_at_the_first_slash() -> None:
    reg, _ = registry({"OPENROUTER_API_KEY": SECRET})

    assert reg.resolve("openrouter/meta-llama/llama-3.1-70b-instruct") == ModelRef(
        name="openrouter/meta-llama/llama-3.1-70b-instruct",
        provider="openrouter",
        model="meta-llama/llama-3.1-70b-instruct",
        litellm_model="openrouter/meta-llama/llama-3.1-70b-instruct",
        api_base=None,
        api_key_env="OPENROUTER_API_KEY",
    )
    assert reg.resolve("lab/my-model") == LAB


@pytest.mark.parametrize("name", ["openai/gpt-5", "nope/x", "gpt-4o", "", "offline/"])
def test_unlisted_model_is_an_input_error(name: str) -> None:
    reg, _ = registry({"OPENAI_API_KEY": SECRET})

    with pytest.raises(InputError) as caught:
        reg.resolve(name)

    assert caught.value.code is ErrorCode.UNKNOWN_MODEL
    assert caught.value.field == "model"
    assert caught.value.message == (
        f'unknown model "{name}": use a "provider/model" listed by providers'
    )


def test_unavailable_provider_is_refused_unless_asked_not_to() -> None:
    reg, _ = registry({})

    with pytest.raises(ProviderError) as caught:
        reg.resolve("openai/gpt-4o")

    assert caught.value.code is ErrorCode.PROVIDER_UNAVAILABLE
    assert caught.value.message == "openai/gpt-4o: OPENAI_API_KEY is not set"
    assert reg.resolve("openai/gpt-4o", require_available=False).name == "openai/gpt-4o"


async def test_complete_passes_the_key_read_at_call_time() -> None:
    env: dict[str, str] = {}
    reg, transport = registry(env)
    with pytest.raises(ProviderError) as caught:
        await reg.complete(MESSAGES, "openai/gpt-4o-mini")
    assert caught.value.code is ErrorCode.PROVIDER_UNAVAILABLE
    assert transport.calls == []

    env["OPENAI_API_KEY"] = SECRET  # exported after the registry was built
    completion = await reg.complete(MESSAGES, "openai/gpt-4o-mini")

    assert completion == Completion("answer", Usage(1, 2, None), "openai/gpt-4o-mini")
    assert transport.calls == [
        ("complete", MESSAGES, reg.resolve("openai/gpt-4o-mini"), SECRET),
    ]


async def test_complete_defaults_to_the_chat_model_without_a_key() -> None:
    reg, transport = registry({})

    await reg.complete(MESSAGES)

    assert transport.calls == [("complete", MESSAGES, reg.resolve("offline/echo"), None)]


async def test_a_model_ref_is_resolved_again_from_the_configuration() -> None:
    reg, transport = registry({"OPENAI_API_KEY": SECRET, "OTHER_SECRET": "x"})
    forged = ModelRef(
        "openai/gpt-4o", "openai", "gpt-4o", "openai/gpt-4o", "http://evil.test", "OTHER_SECRET"
    )

    await reg.complete(MESSAGES, forged)

    assert transport.calls[0][2:] == (reg.resolve("openai/gpt-4o"), SECRET)
    assert transport.calls[0][2].api_base is None


async def test_stream_resolves_before_the_first_chunk() -> None:
    reg, transport = registry({})

    with pytest.raises(InputError):
        reg.stream(MESSAGES, "nope/x")
    with pytest.raises(ProviderError):
        reg.stream(MESSAGES, "openai/gpt-4o")

    chunks = [chunk async for chunk in reg.stream(MESSAGES, "lab/my-model")]

    assert chunks == [StreamChunk("ans"), StreamChunk("wer"), StreamChunk("", Usage(1, 2, None))]
    assert transport.calls == [("stream", MESSAGES, LAB, None)]


def test_counting_and_windows_do_not_need_a_key() -> None:
    reg, transport = registry({})

    assert reg.count_tokens("four") == 4
    assert reg.count_tokens("four", "openai/gpt-4o") == 4
    assert reg.context_window("openai/gpt-4o") == 1000
    assert [(kind, ref.name) for kind, _, ref, _ in transport.calls] == [
        ("count_tokens", "offline/echo"),
        ("count_tokens", "openai/gpt-4o"),
        ("context_window", "openai/gpt-4o"),
    ]


# --- the lookup table: provider name → transport ----------------------------------


async def test_mounts_choose_a_transport_by_provider_name() -> None:
    rest, lab = FakeTransport(), FakeTransport()
    reg = ProviderRegistry(
        CONFIG, env={"OPENAI_API_KEY": SECRET}, transport=rest, mounts={"lab": lab}
    )

    await reg.complete(MESSAGES, "lab/my-model")
    chunks = [chunk async for chunk in reg.stream(MESSAGES, "openai/gpt-4o")]
    await reg.complete(MESSAGES, "offline/echo")
    assert reg.count_tokens("four", "lab/my-model") == 4
    assert reg.context_window("openai/gpt-4o-mini") == 1000

    assert chunks[-1] == StreamChunk("", Usage(1, 2, None))
    assert [(kind, ref.name, key) for kind, _, ref, key in lab.calls] == [
        ("complete", "lab/my-model", None),
        ("count_tokens", "lab/my-model", None),
    ]
    # transport= serves every provider not mounted, the offline one included.
    assert [(kind, ref.name, key) for kind, _, ref, key in rest.calls] == [
        ("stream", "openai/gpt-4o", SECRET),
        ("complete", "offline/echo", None),
        ("context_window", "openai/gpt-4o-mini", None),
    ]


async def test_the_default_table_mounts_the_offline_transport() -> None:
    # No transport given: "offline" answers through OfflineTransport (no
    # network), and a LiteLLM provider is only reached through LiteLLM.
    reg = ProviderRegistry(CONFIG, env={}, mounts={"lab": FakeTransport()})

    completion = await reg.complete(MESSAGES, "offline/echo")

    assert completion.model == "offline/echo"
    assert completion.text.endswith("You asked: hello")
    assert reg.context_window("offline/echo") == 32768
    assert reg.count_tokens("hello world", "offline/echo") == 3


def test_a_mount_for_a_provider_that_is_not_configured_is_refused() -> None:
    with pytest.raises(ValueError) as caught:
        ProviderRegistry(CONFIG, env={}, mounts={"labb": FakeTransport()})

    assert str(caught.value) == "mounts name providers that are not configured: ['labb']"


def test_warm_up_counts_once_per_transport_in_use() -> None:
    rest, offline = FakeTransport(), FakeTransport()
    reg = ProviderRegistry(CONFIG, env={}, transport=rest, mounts={"offline": offline})

    reg.warm_up()

    # The chat default (offline/echo) warms its transport; the first model
    # of the first provider on another transport warms that one.
    assert [(kind, text[0].content, ref.name) for kind, text, ref, _ in offline.calls] == [
        ("count_tokens", "warm up", "offline/echo")
    ]
    assert [(kind, text[0].content, ref.name) for kind, text, ref, _ in rest.calls] == [
        ("count_tokens", "warm up", "openai/gpt-4o-mini")
    ]
