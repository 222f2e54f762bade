"""Providers: configuration, the registry every model call goes through, the offline models.

    config = load_config("providers.yaml")          # or default_config()
    registry = ProviderRegistry(config)              # LiteLLMTransport by default
    reply = await registry.complete(messages, "openai/gpt-4o-mini")

Only ``litellm_adapter`` imports LiteLLM, and only on first use.
"""

from api.providers.config import (
    ProviderConfig,
    ProvidersConfig,
    default_config,
    load_config,
    parse_config,
)
from api.providers.litellm_adapter import DEFAULT_CONTEXT_WINDOW, DEFAULT_TIMEOUT, LiteLLMTransport
from api.providers.registry import ProviderRegistry
from api.providers.types import Completion, ModelRef, ProviderStatus, StreamChunk, Transport

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_TIMEOUT",
    "Completion",
    "LiteLLMTransport",
    "ModelRef",
    "ProviderConfig",
    "ProviderRegistry",
    "ProviderStatus",
    "ProvidersConfig",
    "StreamChunk",
    "Transport",
    "default_config",
    "load_config",
    "parse_config",
]
