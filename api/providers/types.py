"""Values and the transport interface shared by the provider package."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from api.domain.types import ChatMessage, Usage
from api.providers.offline import OFFLINE_LITELLM_PROVIDER


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
    litellm_model: str  # "openai/my-model"
    api_base: str | None = None
    api_key_env: str | None = None  # the variable's name, for error messages

    @property
    def is_offline(self) -> bool:
        return self.litellm_model.startswith(f"{OFFLINE_LITELLM_PROVIDER}/")


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole answer. ``model`` is the "provider/model" that was called."""

    text: str
    usage: Usage
    model: str


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """A piece of a streamed answer.

    A stream yields chunks with text (``usage`` None) and ends with one chunk
    whose ``usage`` is set (fields None when the provider reported none) and
    whose ``delta`` is empty.
    """

    delta: str
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    name: str
    available: bool
    reason: str | None  # why it is unavailable, e.g. "OPENAI_API_KEY is not set"
    models: tuple[str, ...]


class Transport(Protocol):
    """How the registry reaches models — the one seam tests replace.

    ``api_key`` is read by the registry from its environment just before the
    call; transports must not keep it.
    """

    async def complete(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> Completion: ...

    def stream(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> AsyncIterator[StreamChunk]: ...

    def count_tokens(self, text: str, ref: ModelRef) -> int: ...

    def context_window(self, ref: ModelRef) -> int: ...
