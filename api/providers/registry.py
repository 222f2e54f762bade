"""The provider registry: every model call in Smriti goes through here.

It knows the configured providers, resolves "provider/model" names, decides
which providers are available (their key variable is set, or their key is
optional) and hands each call
to its provider's ``Transport``, chosen by a small lookup table — provider
name → transport, as httpx's ``mounts=`` — with one transport for the rest::

    registry = ProviderRegistry(load_config("providers.yaml"))
    text = (await registry.complete(messages, "lab/my-model")).text

    provider    transport
    offline     OfflineTransport   (the built-in models; no network, no LiteLLM)
    any other   LiteLLMTransport   (openai, anthropic, ollama, a lab server, …)

``transport=`` alone replaces the whole table (a test's fake sees every call);
``mounts={"lab": fake}`` replaces one provider's entry. Nothing above the
registry knows which transport answered.

Keys are read from the environment mapping at call time (so a key exported
after start-up is picked up) and passed straight to the transport. They are
never stored, and no status or error message contains one.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence

from ..domain.types import ChatMessage, ModelParameters
from ..errors import ErrorCode, InputError, ProviderError
from .config import ProviderConfig, ProvidersConfig
from .litellm import LiteLLMTransport
from .offline import OFFLINE_PROVIDER, OfflineTransport
from .reachability import Reachability, ReachabilityCache, address_of
from .types import Completion, ModelRef, ProviderStatus, StreamChunk, Transport

# Long enough for any real name; keeps an absurd input out of error messages.
_NAME_IN_MESSAGE_LIMIT = 120


class ProviderRegistry:
    """Resolve model names and call each through its provider's transport."""

    def __init__(
        self,
        config: ProvidersConfig,
        env: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        mounts: Mapping[str, Transport] | None = None,
        reachability: ReachabilityCache | None = None,
    ) -> None:
        """``transport``: for every provider not in ``mounts`` (default: a
        ``LiteLLMTransport``, with the offline provider mounted on an
        ``OfflineTransport``). ``mounts``: provider name → its transport.
        ``reachability``: where the answers of reachability checks are kept
        (default: a ``ReachabilityCache`` of this registry's own)."""
        self._config = config
        # The live mapping, not a copy: availability follows the environment.
        self._env: Mapping[str, str] = os.environ if env is None else env
        table: dict[str, Transport] = {}
        if transport is None:
            transport = LiteLLMTransport()
            table[OFFLINE_PROVIDER] = OfflineTransport()
        unknown = sorted(set(mounts or {}) - set(config.providers))
        if unknown:
            raise ValueError(f"mounts name providers that are not configured: {unknown}")
        table.update(mounts or {})
        self._transport: Transport = transport
        self._mounts: dict[str, Transport] = table
        self._reachability = reachability or ReachabilityCache()

    @property
    def chat_default(self) -> str:
        """The "provider/model" used when a session or message names none."""
        return self._config.chat_default

    @property
    def background(self) -> str:
        """The "provider/model" that drafts checkpoints and titles sessions."""
        return self._config.background

    def providers(self) -> list[ProviderStatus]:
        """Every configured provider, available or not, in configuration order."""
        statuses = []
        for provider in self._config.providers.values():
            reason = self._unavailable_reason(provider)
            statuses.append(ProviderStatus(provider.name, reason is None, reason, provider.models))
        return statuses

    def reachability(self, provider: str) -> Reachability:
        """Whether anything listens at ``provider``'s address, as last checked
        (``reachability.py``); never waits for a check. KeyError for a provider
        that is not configured."""
        config = self._config.providers[provider]
        if config.name == OFFLINE_PROVIDER:
            return Reachability.REACHABLE  # in process
        address = address_of(config)
        if address is None:
            return Reachability.NOT_CHECKED
        return self._reachability.status(address)

    @property
    def reachability_checks(self) -> ReachabilityCache:
        """The checks' cache: ``settled()`` for tests, ``close()`` at shutdown."""
        return self._reachability

    def resolve(self, model: str | None, *, require_available: bool = True) -> ModelRef:
        """The ModelRef for "provider/model" (None: the chat default).

        Raises ``InputError(UNKNOWN_MODEL, field="model")`` for a name that is
        not listed, and — unless ``require_available`` is False, e.g. to
        preview a context — ``ProviderError(PROVIDER_UNAVAILABLE)`` when the
        provider's key variable is not set.
        """
        name = self.chat_default if model is None else model
        provider_name, _, model_name = name.partition("/")
        provider = self._config.providers.get(provider_name)
        if provider is None or model_name not in provider.models:
            shown = (
                name if len(name) <= _NAME_IN_MESSAGE_LIMIT else name[:_NAME_IN_MESSAGE_LIMIT] + "…"
            )
            raise InputError(
                f'unknown model "{shown}": use a "provider/model" listed by providers',
                code=ErrorCode.UNKNOWN_MODEL,
                field="model",
            )
        ref = ModelRef(
            name=f"{provider.name}/{model_name}",
            provider=provider.name,
            model=model_name,
            litellm_model=f"{provider.litellm_provider}/{model_name}",
            api_base=provider.api_base,
            api_key_env=provider.api_key_env,
        )
        if require_available:
            self.ensure_available(ref)
        return ref

    def ensure_available(self, ref: ModelRef) -> None:
        """Raise ``ProviderError(PROVIDER_UNAVAILABLE)`` if ``ref``'s key is not set."""
        self._api_key(ref)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        model: str | ModelRef | None = None,
        *,
        parameters: ModelParameters | None = None,
    ) -> Completion:
        """The whole answer of ``model`` (default: the chat default) to ``messages``."""
        ref = self._ref(model)
        transport, key = self._transport_for(ref), self._api_key(ref)
        if parameters is None or parameters == ModelParameters():
            # Nothing to send: the transport's defaults (and a transport
            # written before parameters still works).
            return await transport.complete(messages, ref, api_key=key)
        return await transport.complete(messages, ref, api_key=key, parameters=parameters)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        model: str | ModelRef | None = None,
        *,
        parameters: ModelParameters | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """The answer as it is generated; see ``StreamChunk`` for the final chunk.

        The model is resolved and the key read now, so a wrong name or a missing
        key raises here rather than at the first iteration.
        """
        ref = self._ref(model)
        transport, key = self._transport_for(ref), self._api_key(ref)
        if parameters is None or parameters == ModelParameters():
            return transport.stream(messages, ref, api_key=key)
        return transport.stream(messages, ref, api_key=key, parameters=parameters)

    def warm_up(self) -> None:
        """Load what the first model calls would (LiteLLM, a tokenizer) — blocking.

        Counts a few tokens once per transport in use: with the chat default
        for its transport, with a provider's first model for the others.
        Nothing to load for the offline models, so a server with only them
        never imports LiteLLM.
        """
        first_models = (f"{p.name}/{p.models[0]}" for p in self._config.providers.values())
        warmed: list[Transport] = []
        for name in (self.chat_default, *first_models):
            ref = self._ref(name, require_available=False)
            transport = self._transport_for(ref)
            if all(transport is not done for done in warmed):
                warmed.append(transport)
                transport.count_tokens("warm up", ref)

    def count_tokens(self, text: str, model: str | ModelRef | None = None) -> int:
        """Tokens in ``text`` for ``model``'s tokenizer (default: the chat default)."""
        ref = self._ref(model, require_available=False)
        return self._transport_for(ref).count_tokens(text, ref)

    def context_window(self, model: str | ModelRef | None = None) -> int:
        """How many input tokens ``model`` accepts."""
        ref = self._ref(model, require_available=False)
        return self._transport_for(ref).context_window(ref)

    def output_limit(self, model: str | ModelRef | None = None) -> int:
        """The most tokens ``model`` writes in one answer."""
        ref = self._ref(model, require_available=False)
        return self._transport_for(ref).output_limit(ref)

    # --- internals ------------------------------------------------------------

    def _transport_for(self, ref: ModelRef) -> Transport:
        return self._mounts.get(ref.provider, self._transport)

    def _ref(self, model: str | ModelRef | None, *, require_available: bool = True) -> ModelRef:
        # A ModelRef is resolved again by name: only the configuration decides
        # which api_base a call goes to and which variable its key comes from.
        name = model.name if isinstance(model, ModelRef) else model
        return self.resolve(name, require_available=require_available)

    def _api_key(self, ref: ModelRef) -> str | None:
        if ref.api_key_env is None:
            return None
        key = self._env.get(ref.api_key_env, "").strip()
        if not key and self._config.providers[ref.provider].api_key_optional:
            return None
        if not key:
            raise ProviderError(
                f"{ref.name}: {ref.api_key_env} is not set",
                code=ErrorCode.PROVIDER_UNAVAILABLE,
                field="model",
            )
        return key

    def _unavailable_reason(self, provider: ProviderConfig) -> str | None:
        if provider.api_key_env is None or provider.api_key_optional:
            return None
        if self._env.get(provider.api_key_env, "").strip():
            return None
        return f"{provider.api_key_env} is not set"
