"""The LiteLLM transport: every configured provider except the built-in offline one.

Calls are made with no retries (a failed call comes back to the user, who can
retry) and a timeout (60 s unless configured). Every LiteLLM exception becomes
a ``ProviderError`` (``errors.py``); LiteLLM itself comes from ``loader.py``,
imported on the first call that needs it.

Keys: the registry reads the key from the environment just before a call and
passes it in; this module hands it to LiteLLM and keeps it nowhere. A call
with no key (no ``api_key_env``, or an optional key that is not set) sends
none where LiteLLM's route allows it (Ollama's); elsewhere, and on Ollama's
when LiteLLM would find a key of its own (``OLLAMA_API_KEY``), it sends a
placeholder, so LiteLLM never falls back to an ambient variable (say
``OPENAI_API_KEY``) and sends it to a server the user configured for something
else (``_key_to_send``).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from ...domain.types import ChatMessage, ModelParameters, Usage
from ...errors import ErrorCode, ProviderError
from ..types import Completion, ModelRef, StreamChunk
from . import loader, streams
from .errors import no_answer, provider_error
from .finish import finish, native_reason, provider_finish, unmapped

DEFAULT_TIMEOUT = 60.0
# Tokens a model may write in one answer unless told otherwise (Settings:
# answer_reserve_tokens, the same number the window keeps free for it).
DEFAULT_MAX_TOKENS = 1024
# For a model LiteLLM's catalogue does not know (a lab server, a new release):
# small enough to fit nearly any chat model, so a window built on it never overflows.
DEFAULT_CONTEXT_WINDOW = 8192
NO_KEY_PLACEHOLDER = "smriti-no-key"
# LiteLLM routes that send no Authorization header when given no key, and what
# they fall back on first: environment variables, then LiteLLM module settings.
_KEYLESS_ROUTES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    route: (("OLLAMA_API_KEY",), ("ollama_key", "api_key", "openai_key"))
    for route in ("ollama", "ollama_chat")
}

# Read an OpenAI-compatible route's stream beneath LiteLLM's wrapper
# (streams.raw); False reads every stream through the wrapper (streams.wrapped),
# as tests/providers/test_raw_streams.py does to compare the two.
READ_BENEATH_WRAPPER = True

log = logging.getLogger("smriti")

_window_cache: dict[tuple[str, str | None], int] = {}
_output_cache: dict[tuple[str, str | None], int] = {}
# Models LiteLLM's catalogue has no price for: asked once (a miss walks the
# whole catalogue, ~1 ms), then their usage goes unpriced.
_unpriced: set[str] = set()


class LiteLLMTransport:
    """Reach any model LiteLLM supports: OpenAI, Anthropic, OpenRouter, Ollama, a lab server."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, max_tokens: int = DEFAULT_MAX_TOKENS):
        self.timeout = timeout
        self.max_tokens = max_tokens

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> Completion:
        """One whole answer from ``ref``; failures raise ``ProviderError``."""
        litellm = await loader.loaded()
        request = self._request(messages, ref, api_key, parameters)
        with unmapped() as words:
            response = await self._call(litellm, request, ref)
        choices = getattr(response, "choices", None) or []
        text = (getattr(choices[0].message, "content", None) or "") if choices else ""
        usage = _usage(getattr(response, "usage", None))
        if not text and usage == Usage():
            raise no_answer(ref)
        ended = (
            finish(choices[0].finish_reason, native_reason(choices[0]), words)
            if choices
            else finish(None)
        )
        return Completion(
            text=text,
            usage=_with_cost(litellm, ref, usage, response),
            model=ref.name,
            finish=ended,
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """The answer in pieces; the last chunk has an empty delta, the usage and
        why the answer ended (the provider's last finish reason).

        A stream that ends with neither a piece nor a usage report (a 200 with
        an empty, HTML or malformed body) raises MALFORMED_OUTPUT: it is not an
        answer, and saving it as one would leave nothing to retry. A stream that
        sends nothing for longer than the timeout raises PROVIDER_TIMEOUT.

        LiteLLM's ``openai`` route is read beneath its stream wrapper, every
        other route through it, with the same result (``streams.py``).
        """
        litellm = await loader.loaded()
        request = self._request(messages, ref, api_key, parameters)
        request |= {"stream": True, "stream_options": {"include_usage": True}}
        response = await self._call(litellm, request, ref)
        ending = streams.Ending()
        beneath = streams.beneath(response) if READ_BENEATH_WRAPPER else None
        pieces = (
            streams.raw(response, beneath, ending)
            if beneath is not None
            else streams.wrapped(response, ending)
        )
        failure: ProviderError | None = None
        started = False
        async with aclosing(pieces):  # closes the stream when the consumer stops early
            while True:
                try:
                    piece = await pieces.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    failure = provider_error(exc, ref, timeout=self.timeout, mid_stream=started)
                if failure is not None:
                    # Raised outside the except block: no __context__ (the
                    # provider's text stays in the original exception).
                    raise failure
                started = True
                yield StreamChunk(delta=piece)
        usage = _usage(ending.usage)
        if not started and usage == Usage():
            raise no_answer(ref)
        yield StreamChunk(
            delta="",
            usage=_with_cost(litellm, ref, usage, None, priced=ending.priced),
            finish=(
                provider_finish(ending.native, litellm)
                if ending.native is not None
                else finish(ending.reason, None, ending.words)
            ),
        )

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        """Tokens in ``text`` for ``ref``'s tokenizer (LiteLLM's token_counter, offline)."""
        litellm = loader.load_if_ready()
        if litellm is None:
            # The first seconds after start-up, while LiteLLM imports: the
            # estimate below rather than an event loop stalled on the import.
            return math.ceil(len(text) / 4)
        try:
            return int(litellm.token_counter(model=ref.litellm_model, text=text))
        except Exception:
            # A count is an estimate for budgeting; never fail a write over it.
            return math.ceil(len(text) / 4)

    def context_window(self, ref: ModelRef) -> int:
        """Input tokens ``ref`` accepts: LiteLLM's catalogue, else DEFAULT_CONTEXT_WINDOW.

        Cached per model and api_base, answer or fallback: for an Ollama model
        the catalogue does not list, LiteLLM asks the server (a blocking POST to
        /api/show), and that should happen once per process, not once per message.
        """
        key = (ref.litellm_model, ref.api_base)
        cached = _window_cache.get(key)
        if cached is None:
            litellm = loader.load_if_ready()
            if litellm is None:
                # While LiteLLM imports: the safe small window, not cached.
                return DEFAULT_CONTEXT_WINDOW
            cached = _window_cache[key] = _lookup_window(litellm, ref)
        return cached

    def output_limit(self, ref: ModelRef) -> int:
        """Tokens ``ref`` writes in one answer at most: LiteLLM's catalogue
        (``max_output_tokens``), else the model's context window (no answer is
        longer than what the model can hold)."""
        key = (ref.litellm_model, ref.api_base)
        cached = _output_cache.get(key)
        if cached is None:
            litellm = loader.load_if_ready()
            if litellm is None:
                return self.context_window(ref)
            cached = _output_cache[key] = _lookup_output_limit(litellm, ref) or (
                self.context_window(ref)
            )
        return cached

    # --- internals ------------------------------------------------------------

    async def _call(self, litellm: Any, request: dict[str, Any], ref: ModelRef) -> Any:
        """``litellm.acompletion(**request)``: the response (a stream's, once its
        status line has arrived), or the call's ``ProviderError``.

        One retry, at once, for one failure only: a connection that failed
        before any answer came (PROVIDER_UNREACHABLE here; not a timeout, not an
        HTTP error). Why: LiteLLM's aiohttp pool keeps an idle connection up to
        15 s, while many OpenAI-compatible servers close theirs after 5 s
        (uvicorn's keep-alive: vLLM, anything on FastAPI); a call that takes a
        pooled connection just as the server closes it fails with "Connection
        error." having sent nothing the server answered, and the same call on
        another connection succeeds. What it costs: a server really down is
        tried twice before the same error, one more refused connect and one more
        pass through LiteLLM's error path (~13 ms of CPU on the development
        machine, as much as the first). A failure once the answer has begun (a
        stream cut after its status line or a piece) is not retried: the server
        took that request.
        """
        for last in (False, True):
            try:
                return await litellm.acompletion(**request)
            except Exception as exc:
                failure = provider_error(exc, ref, timeout=self.timeout)
            if last or failure.code is not ErrorCode.PROVIDER_UNREACHABLE:
                break
            log.info("%s: the connection failed before any answer; trying once more", ref.name)
        # Raised outside the except block, so the ProviderError carries no
        # __context__: the original exception holds the provider's text.
        raise failure

    def _request(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": ref.litellm_model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "timeout": self.timeout,
            # Without it LiteLLM asks Anthropic for the model's maximum (64,000
            # and more) while the window kept only this much room for the answer.
            "max_tokens": self.max_tokens,
            "num_retries": 0,
            "max_retries": 0,
            "api_key": _key_to_send(api_key, ref),
        }
        if ref.api_base:
            request["api_base"] = ref.api_base
        if parameters is not None:
            # LiteLLM's OpenAI names; it maps them to each provider's (Anthropic's
            # stop_sequences, Ollama's options.num_predict …).
            if parameters.max_output_tokens is not None:
                request["max_tokens"] = parameters.max_output_tokens
            if parameters.temperature is not None:
                request["temperature"] = parameters.temperature
            if parameters.top_p is not None:
                request["top_p"] = parameters.top_p
            if parameters.stop:
                request["stop"] = list(parameters.stop)
        return request


def _key_to_send(api_key: str | None, ref: ModelRef) -> str | None:
    """The key LiteLLM gets: ``api_key``; with none, None where the route then
    sends no key at all, else the placeholder (never LiteLLM's ambient fallback)."""
    if api_key:
        return api_key
    fallbacks = _KEYLESS_ROUTES.get(ref.litellm_model.partition("/")[0])
    if fallbacks is None:
        return NO_KEY_PLACEHOLDER
    variables, settings = fallbacks
    litellm = loader.load_if_ready()
    ambient = any(os.environ.get(name) for name in variables) or any(
        getattr(litellm, name, None) for name in settings
    )
    return NO_KEY_PLACEHOLDER if ambient else None


def _lookup_window(litellm: Any, ref: ModelRef) -> int:
    try:
        info = litellm.get_model_info(model=ref.litellm_model, api_base=ref.api_base)
    except Exception:  # not in the catalogue
        return DEFAULT_CONTEXT_WINDOW
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return window if isinstance(window, int) and window > 0 else DEFAULT_CONTEXT_WINDOW


def _lookup_output_limit(litellm: Any, ref: ModelRef) -> int | None:
    try:
        info = litellm.get_model_info(model=ref.litellm_model, api_base=ref.api_base)
    except Exception:  # not in the catalogue
        return None
    limit = info.get("max_output_tokens")
    return limit if isinstance(limit, int) and limit > 0 else None


def _usage(reported: Any) -> Usage:
    if reported is None:
        return Usage()

    def count(name: str) -> int | None:
        value = reported.get(name) if isinstance(reported, dict) else getattr(reported, name, None)
        return value if isinstance(value, int) else None

    return Usage(prompt_tokens=count("prompt_tokens"), completion_tokens=count("completion_tokens"))


def _with_cost(
    litellm: Any, ref: ModelRef, usage: Usage, response: Any, *, priced: Any = None
) -> Usage:
    """``usage`` plus its cost when LiteLLM knows the model's prices, else cost None.

    ``priced`` is a stream's usage chunk: it carries the price LiteLLM gave the
    assembled answer, as ``response`` (a whole answer) does.
    """
    try:
        # LiteLLM has already priced the response (or the stream) while building
        # it; pricing it again cost a millisecond a message.
        carrier = response if response is not None else priced
        hidden = getattr(carrier, "_hidden_params", None) or {}
        known = hidden.get("response_cost") if isinstance(hidden, dict) else None
        if isinstance(known, int | float):
            cost = known
        elif isinstance(hidden, dict) and "response_cost" in hidden:
            # LiteLLM tried and knows no price for the model: asking again
            # walks its whole catalogue a second time (~1 ms) for the same None.
            return usage
        elif response is not None:
            cost = litellm.completion_cost(completion_response=response, model=ref.litellm_model)
        elif (
            usage.prompt_tokens is not None
            and usage.completion_tokens is not None
            and ref.litellm_model not in _unpriced
        ):
            # A stream read beneath LiteLLM's wrapper, which priced nothing.
            try:
                prompt_cost, completion_cost = litellm.cost_per_token(
                    model=ref.litellm_model,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                )
            except Exception:  # not in the catalogue
                _unpriced.add(ref.litellm_model)
                return usage
            cost = prompt_cost + completion_cost
        else:
            return usage
    except Exception:
        return usage
    return Usage(usage.prompt_tokens, usage.completion_tokens, float(cost))
