"""Values and the one transport interface shared by the provider package."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..domain.types import ChatMessage, Finish, FinishReason, ModelParameters, Usage

# What a transport reports for an answer that simply ended.
FINISHED = Finish(FinishReason.STOP)


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A resolved "provider/model": everything a transport needs except the key.

    The key is not a field on purpose: a ModelRef may be logged, cached or
    returned to callers, and the key is read from the environment only for the
    duration of one call.
    """

    name: str  # "lab/my-model", as users and the API name it
    provider: str  # "lab"
    model: str  # "my-model"
    litellm_model: str  # "openai/my-model": how LiteLLM names it
    api_base: str | None = None
    api_key_env: str | None = None  # the variable's name, for error messages


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole answer. ``model`` is the "provider/model" that was called;
    ``finish`` why the answer ended (LENGTH: the token limit cut it off)."""

    text: str
    usage: Usage
    model: str
    finish: Finish = FINISHED


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """A piece of a streamed answer.

    A stream yields chunks with text (``usage`` None) and ends with one chunk
    whose ``usage`` is set (fields None when the provider reported none),
    whose ``finish`` says why the answer ended, and whose ``delta`` is empty.
    """

    delta: str
    usage: Usage | None = None
    finish: Finish | None = None


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    name: str
    available: bool
    reason: str | None  # why it is unavailable, e.g. "OPENAI_API_KEY is not set"
    models: tuple[str, ...]


class Transport(Protocol):
    """How the registry reaches a provider's models — the one interface, and the seam tests replace.

    The registry picks one per provider by name (``registry.py``): the
    ``OfflineTransport`` for ``offline``, the ``LiteLLMTransport`` for the rest.
    ``complete`` and ``stream`` raise ``ProviderError`` on failure; a stream
    ends with one chunk carrying the usage and why the answer ended (see
    ``StreamChunk``).
    ``count_tokens`` and ``context_window`` budget the context window and never
    raise: when they cannot know, an estimate or a safe default; so does
    ``output_limit``, the most tokens the model writes in one answer (the bound
    of a session's maxOutputTokens). ``parameters``: the session's temperature,
    top_p, max output tokens and stop list (None fields: the transport's default).

    ``api_key`` is read by the registry from its environment just before the
    call (None for a provider without ``api_key_env``); transports must not keep it.
    """

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> AsyncIterator[StreamChunk]: ...

    def count_tokens(self, text: str, ref: ModelRef) -> int: ...

    def context_window(self, ref: ModelRef) -> int: ...

    def output_limit(self, ref: ModelRef) -> int: ...
