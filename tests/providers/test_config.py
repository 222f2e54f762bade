"""providers.yaml parsing: the good file, and a precise message for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.errors import ConfigError
from api.providers import ProviderConfig, ProvidersConfig, default_config, load_config, parse_config

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]

OFFLINE = ProviderConfig("offline", "smriti_offline", None, None, ("echo", "extractor"))

PROVIDERS_EXAMPLE = """\
chat_default: lab/my-model               # "provider/model"
background_intelligence: offline/extractor
providers:
  openai:     {api_key_env: OPENAI_API_KEY,     models: [gpt-4o-mini, gpt-4o]}
  anthropic:  {api_key_env: ANTHROPIC_API_KEY,  models: [claude-sonnet-4-5]}
  openrouter: {api_key_env: OPENROUTER_API_KEY, models: [meta-llama/llama-3.1-70b-instruct]}
  ollama:     {api_base: "http://127.0.0.1:11434", models: [llama3.1]}
  lab:                                   # any OpenAI-compatible server, any name
    litellm_provider: openai
    api_base: "http://127.0.0.1:8080/v1"
    api_key_env: LAB_API_KEY             # optional
    models: [my-model]
"""


def test_design_example_parses_with_offline_first() -> None:
    config = parse_config(PROVIDERS_EXAMPLE)

    assert config == ProvidersConfig(
        chat_default="lab/my-model",
        background="offline/extractor",
        providers={
            "offline": OFFLINE,
            "openai": ProviderConfig(
                "openai", "openai", None, "OPENAI_API_KEY", ("gpt-4o-mini", "gpt-4o")
            ),
            "anthropic": ProviderConfig(
                "anthropic", "anthropic", None, "ANTHROPIC_API_KEY", ("claude-sonnet-4-5",)
            ),
            "openrouter": ProviderConfig(
                "openrouter",
                "openrouter",
                None,
                "OPENROUTER_API_KEY",
                ("meta-llama/llama-3.1-70b-instruct",),
            ),
            "ollama": ProviderConfig(
                "ollama", "ollama_chat", "http://127.0.0.1:11434", None, ("llama3.1",)
            ),
            "lab": ProviderConfig(
                "lab", "openai", "http://127.0.0.1:8080/v1", "LAB_API_KEY", ("my-model",)
            ),
        },
    )
    assert list(config.providers) == [
        "offline",
        "openai",
        "anthropic",
        "openrouter",
        "ollama",
        "lab",
    ]


def test_repository_default_file_keeps_offline_defaults() -> None:
    config = load_config(REPOSITORY_ROOT / "providers.yaml")

    assert (config.chat_default, config.background) == ("offline/echo", "offline/extractor")
    assert list(config.providers) == [
        "offline",
        "openai",
        "anthropic",
        "openrouter",
        "ollama",
        "lab",
    ]
    assert config.providers["offline"] == OFFLINE
    # The lab server's key is optional (issue 17: it was listed unavailable without one).
    assert config.providers["lab"] == ProviderConfig(
        "lab", "openai", "http://127.0.0.1:8080/v1", "LAB_API_KEY", ("my-model",), True
    )


@pytest.mark.parametrize(
    ("value", "optional"), [("true", True), ("yes", True), ("false", False), ("~", False)]
)
def test_api_key_optional_is_a_boolean(value: str, optional: bool) -> None:
    config = parse_config(
        f"providers:\n  lab: {{api_key_env: K, api_key_optional: {value}, models: [m]}}\n"
    )

    assert config.providers["lab"].api_key_optional is optional


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n", "~\n"])
def test_empty_file_is_the_default_configuration(text: str) -> None:
    assert parse_config(text) == default_config()
    assert default_config() == ProvidersConfig(
        "offline/echo", "offline/extractor", {"offline": OFFLINE}
    )


def test_absent_defaults_are_offline() -> None:
    config = parse_config("providers:\n  lab: {models: [m]}\n")

    assert (config.chat_default, config.background) == ("offline/echo", "offline/extractor")


def test_offline_may_be_mentioned_and_keeps_its_place() -> None:
    config = parse_config("providers:\n  lab: {models: [m]}\n  offline:\n")

    assert list(config.providers) == ["lab", "offline"]
    assert config.providers["offline"] == OFFLINE


def test_offline_models_can_be_trimmed() -> None:
    config = parse_config(
        "chat_default: lab/m\nbackground_intelligence: offline/extractor\n"
        "providers:\n  lab: {models: [m]}\n  offline: {models: [extractor]}\n"
    )

    assert config.providers["offline"] == ProviderConfig(
        "offline", "smriti_offline", None, None, ("extractor",)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "providers:\n  lab: {models: [a, b}\n",
            "providers.yaml:2: invalid YAML: expected ',' or ']', but got '}'",
            id="yaml-syntax",
        ),
        pytest.param(
            "providers:\n\tlab: {}\n",
            "providers.yaml:2: invalid YAML: found character '\\t' that cannot start any token",
            id="yaml-tab",
        ),
        pytest.param(
            "chat_default: offline/echo\n---\nchat_default: offline/echo\n",
            "providers.yaml:2: invalid YAML: expected a single document in the stream, "
            "but found another document",
            id="yaml-two-documents",
        ),
        pytest.param(
            "- offline\n",
            "providers.yaml:1: the top level must be a mapping "
            "(chat_default, background_intelligence, providers)",
            id="top-level-list",
        ),
        pytest.param(
            "chat_default: offline/echo\nprovider:\n  lab: {models: [m]}\n",
            'providers.yaml:2: unknown key "provider" '
            "(expected one of: chat_default, background_intelligence, providers)",
            id="unknown-top-level-key",
        ),
        pytest.param(
            "providers: [lab]\n",
            "providers.yaml:1: providers must be a mapping of provider name to settings",
            id="providers-not-mapping",
        ),
        pytest.param(
            "providers:\n  lab: {models: [m]}\n  lab: {models: [n]}\n",
            'providers.yaml:3: duplicate key "lab"',
            id="duplicate-provider",
        ),
        pytest.param(
            "providers:\n  a/b: {models: [m]}\n",
            'providers.yaml:2: provider name "a/b" must start with a letter or digit and hold '
            'only letters, digits, "_", "-" and "." (no "/")',
            id="provider-name-with-slash",
        ),
        pytest.param(
            "providers:\n  lab: [m]\n",
            'providers.yaml:2: provider "lab" must be a mapping of settings',
            id="provider-not-mapping",
        ),
        pytest.param(
            "providers:\n  lab:\n    api_url: http://x\n    models: [m]\n",
            'providers.yaml:3: provider "lab": unknown key "api_url" '
            "(expected one of: api_base, api_key_env, api_key_optional, litellm_provider, "
            "models)",
            id="unknown-provider-key",
        ),
        pytest.param(
            "providers:\n  lab:\n    api_key_optional: true\n    models: [m]\n",
            'providers.yaml:3: provider "lab": api_key_optional needs api_key_env, the '
            "variable that holds the key when there is one",
            id="optional-key-without-variable",
        ),
        pytest.param(
            "providers:\n  lab: {api_key_env: K, api_key_optional: maybe, models: [m]}\n",
            'providers.yaml:2: provider "lab": api_key_optional must be true or false',
            id="optional-key-not-boolean",
        ),
        pytest.param(
            "providers:\n  lab:\n    api_base: http://h\n",
            'providers.yaml:2: provider "lab": models is required (a list of model names)',
            id="models-missing",
        ),
        pytest.param(
            "providers:\n  lab:\n    litellm_provider: openai\n    models: my-model\n",
            'providers.yaml:4: provider "lab": models must be a list of strings',
            id="models-not-list",
        ),
        pytest.param(
            "providers:\n  lab:\n    models:\n      - ok\n      - 3\n",
            'providers.yaml:5: provider "lab": models must be a list of strings',
            id="model-not-string",
        ),
        pytest.param(
            "providers:\n  lab:\n    models: []\n",
            'providers.yaml:3: provider "lab": models must not be empty',
            id="models-empty",
        ),
        pytest.param(
            "providers:\n  lab: {models: [m, m]}\n",
            'providers.yaml:2: provider "lab": model "m" is listed twice',
            id="model-twice",
        ),
        pytest.param(
            "providers:\n  lab: {api_base: localhost:8080, models: [m]}\n",
            'providers.yaml:2: provider "lab": api_base must be an http:// or https:// URL',
            id="api-base-not-url",
        ),
        pytest.param(
            "providers:\n  lab:\n    litellm_provider: 7\n    models: [m]\n",
            'providers.yaml:3: provider "lab": litellm_provider must be a non-empty string',
            id="litellm-provider-not-string",
        ),
        pytest.param(
            "chat_default: lab/other\nproviders:\n  lab: {models: [m]}\n",
            'providers.yaml:1: chat_default: provider "lab" does not list model "other"',
            id="chat-default-unlisted-model",
        ),
        pytest.param(
            "chat_default: offline/echo\nbackground_intelligence: nope/x\n",
            'providers.yaml:2: background_intelligence: unknown provider "nope"',
            id="background-unknown-provider",
        ),
        pytest.param(
            "chat_default: gpt-4o\n",
            'providers.yaml:1: chat_default must be "provider/model", got "gpt-4o"',
            id="chat-default-without-provider",
        ),
        pytest.param(
            "chat_default: 5\n",
            'providers.yaml:1: chat_default must be a string "provider/model"',
            id="chat-default-not-string",
        ),
        pytest.param(
            "providers:\n  offline: {api_base: 'http://x'}\n",
            'providers.yaml:2: provider "offline" is built in; only its models can be listed',
            id="offline-configured",
        ),
        pytest.param(
            "providers:\n  offline: {models: [echo, gpt]}\n",
            'providers.yaml:2: provider "offline" has no model "gpt" '
            "(built-in models: echo, extractor)",
            id="offline-unknown-model",
        ),
        pytest.param(
            "providers:\n  offline:\n    models: [echo]\n",
            "providers.yaml:3: background_intelligence is not set and its default "
            '"offline/extractor" is not listed',
            id="offline-trimmed-under-default",
        ),
    ],
)
def test_malformed_file_names_line_and_problem(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)

    assert caught.value.message == message
    assert str(caught.value) == message


def test_pasted_key_in_api_key_env_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("providers:\n  lab:\n    api_key_env: sk-abc123XYZ\n    models: [m]\n")

    assert caught.value.message == (
        'providers.yaml:3: provider "lab": api_key_env must be the name of an environment '
        "variable (letters, digits and _), not the key itself"
    )
    assert "sk-abc123XYZ" not in str(caught.value)


def test_load_config_names_the_file_path(tmp_path: Path) -> None:
    path = tmp_path / "providers.yaml"
    path.write_text("providers:\n  lab:\n    models: my-model\n")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert caught.value.message == f'{path}:3: provider "lab": models must be a list of strings'


def test_load_config_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert caught.value.message == (
        f"{path}: cannot read the providers file: No such file or directory"
    )
