"""The three wire formats Smriti's providers speak, as recording stubs behind one
providers.yaml: OpenAI's (as `lab`, an OpenAI-compatible server), Anthropic's and
Ollama's. Tests that compare the formats case by case use `three_formats_file`, or
import the fixtures below (`stubs`, `providers_file`, `settings`) into their module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api.providers import LiteLLMTransport, ProviderRegistry, parse_config
from api.settings import Settings
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider

# The model each format answers as, and the name it gives a stop at the token limit.
MODELS = {
    "openai": "lab/my-model",
    "anthropic": "anthropic/claude-sonnet-4-5",
    "ollama": "ollama/llama3.1",
}
LENGTH = {"openai": "length", "anthropic": "max_tokens", "ollama": "length"}
ANTHROPIC_KEY_ENV = "SMRITI_TEST_ANTHROPIC_KEY"


def three_formats_file(
    directory: Path,
    openai: FakeOpenAI,
    anthropic: FakeAnthropic,
    ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
    anthropic_key: str = "sk-ant-test",
) -> Path:
    """A providers.yaml naming the three stubs (Anthropic's key in the environment,
    as an operator would put it; Ollama's and the OpenAI-compatible server's none)."""
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, anthropic_key)
    path = directory / "providers.yaml"
    path.write_text(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{openai.base_url}", '
        "models: [my-model]}\n"
        f'  anthropic: {{api_base: "{anthropic.base_url}", '
        f"api_key_env: {ANTHROPIC_KEY_ENV}, models: [claude-sonnet-4-5]}}\n"
        f'  ollama: {{api_base: "{ollama.base_url}", models: [llama3.1]}}\n'
    )
    return path


@pytest.fixture(scope="module")
def module_stubs() -> Iterator[dict[str, FakeProvider]]:
    """The three stubs for a module that talks to the provider registry directly."""
    with FakeOpenAI() as openai, FakeAnthropic() as anthropic, FakeOllama() as ollama:
        yield {"openai": openai, "anthropic": anthropic, "ollama": ollama}


def registry_for(stubs: dict[str, FakeProvider]) -> ProviderRegistry:
    """A provider registry over the three stubs, through LiteLLM (no app, no file)."""
    config = parse_config(
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{stubs["openai"].base_url}"\n'  # type: ignore[attr-defined]
        "    models: [my-model]\n"
        "  anthropic:\n"
        f'    api_base: "{stubs["anthropic"].base_url}"\n'  # type: ignore[attr-defined]
        "    api_key_env: ANTHROPIC_KEY\n"
        "    models: [claude-sonnet-4-5]\n"
        "  ollama:\n"
        f'    api_base: "{stubs["ollama"].base_url}"\n'  # type: ignore[attr-defined]
        "    models: [llama3.1]\n"
    )
    return ProviderRegistry(
        config, env={"ANTHROPIC_KEY": "sk-ant"}, transport=LiteLLMTransport(timeout=5.0)
    )


@pytest.fixture
def stubs(
    fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic, fake_ollama: FakeOllama
) -> dict[str, FakeProvider]:
    """Each format's stub, by format."""
    return {"openai": fake_openai, "anthropic": fake_anthropic, "ollama": fake_ollama}


@pytest.fixture
def providers_file(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    fake_anthropic: FakeAnthropic,
    fake_ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    return three_formats_file(tmp_path, fake_openai, fake_anthropic, fake_ollama, monkeypatch)


@pytest.fixture
def settings(database_url: str, providers_file: Path) -> Settings:
    """The app's settings with the three stubs as its providers."""
    return Settings(
        database_url=database_url,
        providers_file=providers_file,
        provider_timeout_seconds=5.0,
        title_sessions=False,
        allowed_hosts=("smriti.test",),
    )
