"""Providers: every model call goes through one registry, which hands it to a transport.

    config = load_config("providers.yaml")          # or default_config()
    registry = ProviderRegistry(config)
    reply = await registry.complete(messages, "openai/gpt-4o-mini")
    async for chunk in registry.stream(messages, "offline/echo"): ...

The shape is httpx's: one interface (``Transport``: complete, stream,
count_tokens, context_window), a real implementation and an in-process one
beside it, chosen per provider by a small lookup table in the registry::

    ProviderRegistry                      registry.py   names, availability, keys
                                          reachability.py  is anything listening there?
      ├── "offline"  → OfflineTransport   offline.py    echo, extractor: no network, no LiteLLM
      └── any other  → LiteLLMTransport   litellm/      transport.py  the calls
                                                        errors.py     exceptions → ProviderError
                                                        loader.py     the lazy import of LiteLLM

Tests replace the table with ``transport=`` (every call) or one entry with
``mounts={"lab": fake}``. Only ``litellm/loader.py`` imports LiteLLM, and only
on first use (tests/test_layers.py).

Failures are ``api.errors`` exceptions, raised before or instead of an answer::

    SmritiError
      ├── InputError       UNKNOWN_MODEL        a "provider/model" not in providers.yaml
      └── ProviderError    PROVIDER_UNAVAILABLE its key variable is not set
                           PROVIDER_AUTH        the provider rejected the key
                           PROVIDER_RATE_LIMIT  (with retry_after, when the provider said)
                           PROVIDER_TIMEOUT     no answer within the timeout
                           PROVIDER_UNREACHABLE could not connect, or lost mid-answer
                           CONTEXT_TOO_LONG     the prompt does not fit the model
                           MALFORMED_OUTPUT     an empty or unreadable answer
                           PROVIDER_ERROR       any other failure (names the HTTP status)

Their messages are Smriti's own sentences, never the provider's text, and never
contain a key.
"""

from .config import (
    ProviderConfig,
    ProvidersConfig,
    default_config,
    load_config,
    parse_config,
)
from .litellm import DEFAULT_CONTEXT_WINDOW, DEFAULT_TIMEOUT, LiteLLMTransport
from .offline import OfflineTransport
from .reachability import Reachability, ReachabilityCache
from .registry import ProviderRegistry
from .types import Completion, ModelRef, ProviderStatus, StreamChunk, Transport

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_TIMEOUT",
    "Completion",
    "LiteLLMTransport",
    "ModelRef",
    "OfflineTransport",
    "ProviderConfig",
    "ProviderRegistry",
    "ProviderStatus",
    "ProvidersConfig",
    "Reachability",
    "ReachabilityCache",
    "StreamChunk",
    "Transport",
    "default_config",
    "load_config",
    "parse_config",
]
