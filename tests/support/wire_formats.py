"""The three wire formats Smriti's providers speak, as recording stubs behind one
providers.yaml: OpenAI's (as `lab`, an OpenAI-compatible server), Anthropic's and
Ollama's. Tests that compare the formats case by case use `three_formats_file`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

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
