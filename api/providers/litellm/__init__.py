"""The LiteLLM transport, in five modules:

    transport.py   LiteLLMTransport: requests, streams, usage and cost, windows
    streams.py     reading a stream: through LiteLLM's wrapper, or beneath it (OpenAI's route)
    finish.py      LiteLLM's finish reasons → Smriti's Finish
    errors.py      LiteLLM / OpenAI exceptions → Smriti's typed ProviderError
    loader.py      the one import of LiteLLM: lazy, off the event loop, told to stay offline

Only ``loader.py`` imports LiteLLM (tests/test_layers.py checks it).
"""

from .transport import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT,
    LiteLLMTransport,
)

__all__ = ["DEFAULT_CONTEXT_WINDOW", "DEFAULT_MAX_TOKENS", "DEFAULT_TIMEOUT", "LiteLLMTransport"]
