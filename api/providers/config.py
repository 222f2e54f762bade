"""providers.yaml: which providers exist, where their keys live, which models they offer.

The file (docs/architecture.md#providers)::

    chat_default: offline/echo                 # "provider/model"
    background_intelligence: offline/extractor
    providers:
      lab:
        litellm_provider: openai               # defaults to the provider's name
                                               # (ollama: ollama_chat, see below)
        api_base: "http://127.0.0.1:8080/v1"   # optional
        api_key_env: LAB_API_KEY               # optional; the variable's name, never the key
        api_key_optional: true                 # optional; the server also answers without
        models: [my-model]

The built-in ``offline`` provider (models ``echo`` and ``extractor``) always
exists. The file may mention it — ``offline:`` or ``offline: {models: [echo]}``
— but cannot configure anything else about it. Absent defaults are
``offline/echo`` and ``offline/extractor``.

A provider with ``api_key_env`` is unavailable while that variable is not set,
unless ``api_key_optional: true`` says the server answers without a key too
(a lab server that may or may not check one): then it is called with the key
when the variable is set, and with none when it is not.

The file is read with ``yaml.compose`` rather than ``yaml.safe_load`` so every
value keeps its position: a malformed file raises ``ConfigError`` with
``<path>:<line>: <problem>``. Messages never quote the value of
``api_key_env`` — a user who pasted a key there must not see it printed back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import ConfigError
from .offline import (
    ECHO_MODEL,
    EXTRACTOR_MODEL,
    OFFLINE_LITELLM_PROVIDER,
    OFFLINE_MODELS,
    OFFLINE_PROVIDER,
)

DEFAULT_CHAT = f"{OFFLINE_PROVIDER}/{ECHO_MODEL}"
DEFAULT_BACKGROUND = f"{OFFLINE_PROVIDER}/{EXTRACTOR_MODEL}"

_TOP_LEVEL_KEYS = ("chat_default", "background_intelligence", "providers")
_PROVIDER_KEYS = ("api_base", "api_key_env", "api_key_optional", "litellm_provider", "models")
# "/" separates provider from model in "provider/model", so names cannot hold one.
_PROVIDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# How LiteLLM reaches a provider whose entry names no litellm_provider, where
# that is not the provider's own name: LiteLLM's "ollama" posts to
# /api/generate and flattens the roles into one prompt; "ollama_chat" sends the
# messages, roles kept, to /api/chat.
_DEFAULT_LITELLM_PROVIDER = {"ollama": "ollama_chat"}
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_BOOL_TAG = "tag:yaml.org,2002:bool"


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    name: str
    litellm_provider: str
    api_base: str | None
    api_key_env: str | None
    models: tuple[str, ...]
    # True: available without the key (sent when api_key_env is set, else none).
    api_key_optional: bool = False


@dataclass(frozen=True, slots=True)
class ProvidersConfig:
    chat_default: str  # "provider/model"
    background: str  # "provider/model"
    providers: dict[str, ProviderConfig]


def offline_provider(models: tuple[str, ...] = OFFLINE_MODELS) -> ProviderConfig:
    return ProviderConfig(
        name=OFFLINE_PROVIDER,
        litellm_provider=OFFLINE_LITELLM_PROVIDER,
        api_base=None,
        api_key_env=None,
        models=models,
    )


def default_config() -> ProvidersConfig:
    """The configuration of a fresh install: the offline provider alone."""
    return ProvidersConfig(DEFAULT_CHAT, DEFAULT_BACKGROUND, {OFFLINE_PROVIDER: offline_provider()})


def load_config(path: str | Path) -> ProvidersConfig:
    """Read and validate a providers file; ``ConfigError`` names the file and line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = (
            exc.strerror
            if isinstance(exc, OSError) and exc.strerror
            else "not readable as UTF-8 text"
        )
        raise ConfigError(f"{path}: cannot read the providers file: {reason}") from None
    return parse_config(text, source=str(path))


def parse_config(text: str, *, source: str = "providers.yaml") -> ProvidersConfig:
    """Validate providers.yaml content; ``source`` names it in error messages."""
    return _Parser(source).parse(text)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, node: Node | None, problem: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else 1
        return ConfigError(f"{self.source}:{line}: {problem}")

    def parse(self, text: str) -> ProvidersConfig:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else 1
            detail = exc.problem or exc.context or "unreadable"
            if exc.context and detail.startswith("but "):
                # "but found another document" reads as a fragment without its context.
                detail = f"{exc.context}, {detail}"
            raise ConfigError(f"{self.source}:{line}: invalid YAML: {detail}") from None
        except yaml.YAMLError:
            raise ConfigError(f"{self.source}:1: invalid YAML") from None
        if root is None or _is_null(root):
            return default_config()
        top = self.mapping(
            root,
            "the top level must be a mapping (chat_default, background_intelligence, providers)",
        )

        for key, key_node in self.keys(top):
            if key not in _TOP_LEVEL_KEYS:
                raise self.fail(
                    key_node, f'unknown key "{key}" (expected one of: {", ".join(_TOP_LEVEL_KEYS)})'
                )
        entries = dict(self.items(top))

        providers: dict[str, ProviderConfig] = {}
        offline_node: Node | None = None
        providers_node = entries.get("providers")
        if providers_node is not None and not _is_null(providers_node):
            mapping = self.mapping(
                providers_node, "providers must be a mapping of provider name to settings"
            )
            for (name, key_node), value in zip(
                self.keys(mapping), self.values(mapping), strict=True
            ):
                if name == OFFLINE_PROVIDER:
                    providers[name] = self.offline(value)
                    offline_node = value
                else:
                    providers[name] = self.provider(name, key_node, value)
        if OFFLINE_PROVIDER not in providers:
            # Built in: listed first so a fresh install shows it at the top.
            providers = {OFFLINE_PROVIDER: offline_provider(), **providers}

        chat = self.reference(entries, "chat_default", DEFAULT_CHAT, providers, offline_node)
        background = self.reference(
            entries, "background_intelligence", DEFAULT_BACKGROUND, providers, offline_node
        )
        return ProvidersConfig(chat_default=chat, background=background, providers=providers)

    # --- sections ---------------------------------------------------------

    def provider(self, name: str, key_node: Node, node: Node) -> ProviderConfig:
        if not _PROVIDER_NAME.match(name):
            raise self.fail(
                key_node,
                f'provider name "{name}" must start with a letter or digit and hold only '
                'letters, digits, "_", "-" and "." (no "/")',
            )
        settings = self.mapping(node, f'provider "{name}" must be a mapping of settings')
        for key, key_at in self.keys(settings):
            if key not in _PROVIDER_KEYS:
                expected = ", ".join(_PROVIDER_KEYS)
                raise self.fail(
                    key_at, f'provider "{name}": unknown key "{key}" (expected one of: {expected})'
                )
        values = dict(self.items(settings))

        api_key_env = self.optional_string(values, "api_key_env", name)
        if api_key_env is not None and not _ENV_NAME.match(api_key_env):
            # Deliberately not quoted: this is where people paste keys by mistake.
            raise self.fail(
                values["api_key_env"],
                f'provider "{name}": api_key_env must be the name of an environment variable '
                "(letters, digits and _), not the key itself",
            )
        api_key_optional = self.optional_bool(values, "api_key_optional", name)
        if api_key_optional and api_key_env is None:
            raise self.fail(
                values["api_key_optional"],
                f'provider "{name}": api_key_optional needs api_key_env, the variable that '
                "holds the key when there is one",
            )
        api_base = self.optional_string(values, "api_base", name)
        if api_base is not None and not _is_http_url(api_base):
            raise self.fail(
                values["api_base"],
                f'provider "{name}": api_base must be an http:// or https:// URL',
            )
        litellm_provider = self.optional_string(
            values, "litellm_provider", name
        ) or _DEFAULT_LITELLM_PROVIDER.get(name, name)
        if "models" not in values:
            raise self.fail(
                key_node, f'provider "{name}": models is required (a list of model names)'
            )
        models = self.models(name, values["models"])
        return ProviderConfig(
            name, litellm_provider, api_base, api_key_env, models, api_key_optional
        )

    def offline(self, node: Node) -> ProviderConfig:
        if _is_null(node):
            return offline_provider()
        settings = self.mapping(
            node, f'provider "{OFFLINE_PROVIDER}" must be a mapping of settings'
        )
        for key, key_at in self.keys(settings):
            if key != "models":
                raise self.fail(
                    key_at,
                    f'provider "{OFFLINE_PROVIDER}" is built in; only its models can be listed',
                )
        models_node = dict(self.items(settings)).get("models")
        if models_node is None:
            return offline_provider()
        models = self.models(OFFLINE_PROVIDER, models_node)
        for item, model in zip(self.sequence_items(models_node), models, strict=True):
            if model not in OFFLINE_MODELS:
                raise self.fail(
                    item,
                    f'provider "{OFFLINE_PROVIDER}" has no model "{model}" '
                    f"(built-in models: {', '.join(OFFLINE_MODELS)})",
                )
        return offline_provider(models)

    def models(self, provider: str, node: Node) -> tuple[str, ...]:
        if not isinstance(node, SequenceNode):
            raise self.fail(node, f'provider "{provider}": models must be a list of strings')
        if not node.value:
            raise self.fail(node, f'provider "{provider}": models must not be empty')
        models: list[str] = []
        for item in node.value:
            if not _is_string(item):
                raise self.fail(item, f'provider "{provider}": models must be a list of strings')
            model = str(item.value).strip()
            if not model:
                raise self.fail(item, f'provider "{provider}": a model name must not be empty')
            if model in models:
                raise self.fail(item, f'provider "{provider}": model "{model}" is listed twice')
            models.append(model)
        return tuple(models)

    def reference(
        self,
        entries: dict[str, Node],
        key: str,
        default: str,
        providers: dict[str, ProviderConfig],
        offline_node: Node | None,
    ) -> str:
        node = entries.get(key)
        if node is None or _is_null(node):
            provider, _, model = default.partition("/")
            if model not in providers[provider].models:
                # Only reachable when the file trims the offline models.
                raise self.fail(
                    offline_node, f'{key} is not set and its default "{default}" is not listed'
                )
            return default
        if not _is_string(node):
            raise self.fail(node, f'{key} must be a string "provider/model"')
        value = str(node.value).strip()
        provider, slash, model = value.partition("/")
        if not slash or not provider or not model:
            raise self.fail(node, f'{key} must be "provider/model", got "{value}"')
        if provider not in providers:
            raise self.fail(node, f'{key}: unknown provider "{provider}"')
        if model not in providers[provider].models:
            raise self.fail(node, f'{key}: provider "{provider}" does not list model "{model}"')
        return value

    # --- node helpers -----------------------------------------------------

    def mapping(self, node: Node, problem: str) -> MappingNode:
        if not isinstance(node, MappingNode):
            raise self.fail(node, problem)
        seen: set[str] = set()
        for key_node, _ in node.value:
            if not _is_string(key_node):
                raise self.fail(key_node, "keys must be strings")
            if key_node.value in seen:
                raise self.fail(key_node, f'duplicate key "{key_node.value}"')
            seen.add(key_node.value)
        return node

    def keys(self, node: MappingNode) -> list[tuple[str, Node]]:
        return [(str(k.value), k) for k, _ in node.value]

    def items(self, node: MappingNode) -> list[tuple[str, Node]]:
        return [(str(k.value), v) for k, v in node.value]

    def values(self, node: MappingNode) -> list[Node]:
        return [v for _, v in node.value]

    def sequence_items(self, node: Node) -> list[Node]:
        return list(node.value) if isinstance(node, SequenceNode) else []

    def optional_string(self, values: dict[str, Node], key: str, provider: str) -> str | None:
        node = values.get(key)
        if node is None or _is_null(node):
            return None
        if not _is_string(node) or not str(node.value).strip():
            raise self.fail(node, f'provider "{provider}": {key} must be a non-empty string')
        return str(node.value).strip()

    def optional_bool(self, values: dict[str, Node], key: str, provider: str) -> bool:
        node = values.get(key)
        if node is None or _is_null(node):
            return False
        if not (isinstance(node, ScalarNode) and node.tag == _BOOL_TAG):
            raise self.fail(node, f'provider "{provider}": {key} must be true or false')
        return str(node.value).lower() in ("true", "yes", "on")  # YAML 1.1's true words


def _is_http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 — raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in value


def _is_string(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _STR_TAG


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL_TAG
