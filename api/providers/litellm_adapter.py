"""The LiteLLM transport — the only module in Smriti that imports LiteLLM.

LiteLLM is imported lazily, on the first call, because importing it takes
seconds. Before that import it is told to stay offline
(``LITELLM_OFFLINE_MODE``, ``LITELLM_LOCAL_MODEL_COST_MAP``: no cost map,
tokenizer or catalogue downloads), not to read a ``.env`` file
(``LITELLM_MODE=PRODUCTION``) and not to copy every prompt for its logging
payload (``MAX_BASE64_LENGTH_FOR_LOGGING=0``, see ``_litellm``), each only if
the variable is not already set.
The built-in offline models (``offline/echo``, ``offline/extractor``) are
answered here without LiteLLM, by the pure functions of ``offline.py``, with a
32768-token window and zero cost: they need no network, and a fresh server
answers with them at once rather than after LiteLLM's import (seconds). They
stay behind the same ``Transport`` seam, so the registry, the services and
the contract tests see them as any other model.

Calls are made with no retries (a failed call comes back to the user, who can
retry) and a timeout (60 s unless configured). Every LiteLLM exception becomes
a ``ProviderError`` whose message is written here from the kind of failure and
the model's name — never copied from the provider, whose text may echo the key.

Keys: the registry reads the key from the environment just before a call and
passes it in; this module hands it to LiteLLM and keeps it nowhere. A provider
configured without ``api_key_env`` is called with a placeholder key, so
LiteLLM never falls back to an ambient variable (say ``OPENAI_API_KEY``) and
sends it to a server the user configured for something else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import importlib
import json
import math
import os
import threading
import time
from asyncio import sleep
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from api.domain.types import ChatMessage, Usage
from api.errors import ErrorCode, ProviderError
from api.providers import offline
from api.providers.types import Completion, ModelRef, StreamChunk

DEFAULT_TIMEOUT = 60.0
# Tokens a model may write in one answer unless told otherwise (Settings:
# answer_reserve_tokens, the same number the window keeps free for it).
DEFAULT_MAX_TOKENS = 1024
OFFLINE_CONTEXT_WINDOW = 32768
# For a model LiteLLM's catalogue does not know (a lab server, a new release):
# small enough to fit nearly any chat model, so a window built on it never overflows.
DEFAULT_CONTEXT_WINDOW = 8192
NO_KEY_PLACEHOLDER = "smriti-no-key"

# Substrings LiteLLM and the HTTP clients use for a refused or failed
# connection; some providers report it as an InternalServerError. Matched to
# classify only — the text itself is never shown.
_CONNECTION_MARKERS = (
    "connection error",
    "cannot connect to host",
    "connect call failed",
    "connection refused",
)

# How providers word "the prompt does not fit", where they send no code LiteLLM
# maps: OpenRouter ("maximum context length"), Ollama ("input length exceeds
# the context length"), OpenAI's per-minute token cap ("Request too large",
# which no retry can pass). Matched to classify only, in a 4xx answer.
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "prompt is too long",
    "request too large",
)
# LiteLLM's wording for a 200 answer whose body is not the format's JSON.
_MALFORMED_MARKERS = ("empty or invalid response",)

_lock = threading.Lock()
_litellm_module: Any = None
_import_lock = threading.Lock()
_import_future: concurrent.futures.Future[Any] | None = None
_window_cache: dict[tuple[str, str | None], int] = {}


def _litellm() -> Any:
    """Import and configure LiteLLM once; typed Any because its stubs are partial."""
    global _litellm_module
    if _litellm_module is None:
        with _lock:
            if _litellm_module is None:
                os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                # In its default "DEV" mode LiteLLM loads a .env file found above
                # its own install directory into os.environ on import: keys would
                # appear, and providers turn available, after the first call.
                os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
                # After every call LiteLLM builds a logging payload for its
                # callbacks, and first copies the whole prompt (every message
                # dict, every string checked for a data: URI) to shorten base64
                # images in it: ~0.5 ms a call with a 200-turn window. Smriti
                # registers no LiteLLM callback, so nothing reads that copy; 0
                # turns the truncation (and the copy) off. Read once, on import.
                os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
                module: Any = importlib.import_module("litellm")
                module.suppress_debug_info = True  # no "Provider List: …" on stdout
                _litellm_module = module
    return _litellm_module


def _import_in_thread() -> concurrent.futures.Future[Any]:
    """The one import of LiteLLM, started (once) in a thread of its own.

    Importing takes seconds and holds Python's import lock on modules the
    event loop may also need, so the loop must never run it, nor wait for it.
    """
    global _import_future
    with _import_lock:
        if _import_future is None:
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            # Running from the start, so it can never be cancelled: every call
            # awaits this one future, and a caller cancelled while waiting (a
            # client that went away) must not cancel the import for the rest.
            future.set_running_or_notify_cancel()

            def run() -> None:
                try:
                    future.set_result(_litellm())
                except BaseException as exc:  # handed to every awaiting call
                    future.set_exception(exc)

            threading.Thread(target=run, name="litellm-import", daemon=True).start()
            _import_future = future
        return _import_future


async def _litellm_loaded() -> Any:
    """LiteLLM, awaiting the import thread if it has not finished (the loop keeps running)."""
    if _litellm_module is not None:
        return _litellm_module
    return await asyncio.wrap_future(_import_in_thread())


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _litellm_if_ready() -> Any:
    """LiteLLM when it can be had without the event loop waiting for the import, else None.

    Off the loop (the start-up warm-up thread, a script) importing here is
    fine; on the loop the import is started in its thread and None returned.
    """
    if _litellm_module is not None or not _on_event_loop():
        return _litellm()
    _import_in_thread()
    return None


class LiteLLMTransport:
    """Reach any model LiteLLM supports, plus the offline models."""

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        offline_stream_delay: float = 0.0,
    ) -> None:
        self.timeout = timeout
        self.max_tokens = max_tokens
        # Seconds between the offline models' streamed pieces (see Settings).
        self.offline_stream_delay = offline_stream_delay

    async def complete(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> Completion:
        """One whole answer from ``ref``; failures raise ``ProviderError``."""
        if ref.is_offline:
            text = _offline_answer(ref, messages)
            prompt, completion = offline.usage(messages, text)
            return Completion(text=text, usage=Usage(prompt, completion, 0.0), model=ref.name)
        litellm = await _litellm_loaded()
        failure: ProviderError | None
        try:
            response = await litellm.acompletion(**self._request(messages, ref, api_key))
        except Exception as exc:
            failure = self._error(exc, ref)
        else:
            failure = None
        if failure is not None:
            # Raised outside the except block so the ProviderError carries no
            # __context__: the original exception holds the provider's text.
            raise failure
        choices = getattr(response, "choices", None) or []
        text = (getattr(choices[0].message, "content", None) or "") if choices else ""
        usage = _usage(getattr(response, "usage", None))
        if not text and usage == Usage():
            raise _no_answer(ref)
        return Completion(
            text=text, usage=_with_cost(litellm, ref, usage, response), model=ref.name
        )

    async def stream(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> AsyncIterator[StreamChunk]:
        """The answer in pieces; the last chunk has an empty delta and the usage.

        A stream that ends with neither a piece nor a usage report (a 200 with
        an empty, HTML or malformed body) raises MALFORMED_OUTPUT: it is not an
        answer, and saving it as one would leave nothing to retry. A stream that
        sends nothing for longer than the timeout raises PROVIDER_TIMEOUT.
        """
        if ref.is_offline:
            async for chunk in self._offline_stream(messages, ref):
                yield chunk
            return
        litellm = await _litellm_loaded()
        request = self._request(messages, ref, api_key)
        failure: ProviderError | None
        try:
            response = await litellm.acompletion(
                **request, stream=True, stream_options={"include_usage": True}
            )
        except Exception as exc:
            failure = self._error(exc, ref)
        else:
            failure = None
        if failure is not None:
            raise failure  # outside the except block: no __context__, see complete()
        reported: Any = None
        priced: Any = None  # the usage chunk, which LiteLLM has already priced
        started = False
        try:
            while True:
                try:
                    # A stalled stream ends here too: the HTTP client's read
                    # timeout (self.timeout, per read) raises, which LiteLLM
                    # reports mid-stream as an HTTP 408 and classify() as a
                    # timeout; the client closes the connection itself.
                    chunk = await response.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    failure = self._error(exc, ref, mid_stream=started)
                if failure is not None:
                    raise failure
                usage = getattr(chunk, "usage", None)
                if usage:
                    reported, priced = usage, chunk
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(getattr(choice, "delta", None), "content", None)
                    if delta:
                        started = True
                        yield StreamChunk(delta=delta)
        finally:
            # Release the HTTP connection when the consumer stops early.
            close = getattr(response, "aclose", None)
            if close is not None:
                await close()
        if not started and _usage(reported) == Usage():
            raise _no_answer(ref)
        yield StreamChunk(
            delta="", usage=_with_cost(litellm, ref, _usage(reported), None, priced=priced)
        )

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        """Tokens in ``text`` for ``ref``'s tokenizer (LiteLLM's token_counter, offline)."""
        litellm = _litellm_if_ready()
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
        if ref.is_offline:
            return OFFLINE_CONTEXT_WINDOW
        key = (ref.litellm_model, ref.api_base)
        cached = _window_cache.get(key)
        if cached is None:
            litellm = _litellm_if_ready()
            if litellm is None:
                # While LiteLLM imports: the safe small window, not cached.
                return OFFLINE_CONTEXT_WINDOW if ref.is_offline else DEFAULT_CONTEXT_WINDOW
            cached = _window_cache[key] = _lookup_window(litellm, ref)
        return cached

    # --- internals ------------------------------------------------------------

    async def _offline_stream(
        self, messages: Sequence[ChatMessage], ref: ModelRef
    ) -> AsyncIterator[StreamChunk]:
        """The offline answer in word pieces, ``offline_stream_delay`` apart, then usage."""
        text = _offline_answer(ref, messages)
        for index, piece in enumerate(p for p in offline.stream_chunks(text) if p):
            if index and self.offline_stream_delay > 0:
                await sleep(self.offline_stream_delay)
            yield StreamChunk(delta=piece)
        prompt, completion = offline.usage(messages, text)
        yield StreamChunk(delta="", usage=Usage(prompt, completion, 0.0))

    def _request(
        self, messages: Sequence[ChatMessage], ref: ModelRef, api_key: str | None
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
        }
        if ref.api_base:
            request["api_base"] = ref.api_base
        if not ref.is_offline:
            request["api_key"] = api_key or NO_KEY_PLACEHOLDER
        return request

    def _error(self, exc: Exception, ref: ModelRef, *, mid_stream: bool = False) -> ProviderError:
        code = classify(exc)
        if code is ErrorCode.PROVIDER_UNREACHABLE and mid_stream:
            return ProviderError(
                f"{ref.name}: the connection to the provider was lost mid-answer", code=code
            )
        retry_after = _retry_after(exc)
        return ProviderError(
            _message(code, ref, self.timeout, _status(exc), retry_after),
            code=code,
            retry_after=retry_after,
        )


def _no_answer(ref: ModelRef) -> ProviderError:
    return ProviderError(
        f"{ref.name}: the provider's answer was empty or unreadable",
        code=ErrorCode.MALFORMED_OUTPUT,
    )


def _lookup_window(litellm: Any, ref: ModelRef) -> int:
    try:
        info = litellm.get_model_info(model=ref.litellm_model, api_base=ref.api_base)
    except Exception:  # not in the catalogue
        return DEFAULT_CONTEXT_WINDOW
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return window if isinstance(window, int) and window > 0 else DEFAULT_CONTEXT_WINDOW


def classify(exc: BaseException) -> ErrorCode:
    """The ErrorCode for a LiteLLM (or HTTP client) exception."""
    litellm = _litellm()
    status = _status(exc)
    if isinstance(exc, litellm.ContextWindowExceededError) or status == 413:
        return ErrorCode.CONTEXT_TOO_LONG
    refused = status is not None and 400 <= status < 500 and status not in (401, 403, 408)
    if refused and _in_chain(exc, _CONTEXT_MARKERS):
        return ErrorCode.CONTEXT_TOO_LONG
    rejected = (litellm.AuthenticationError, litellm.PermissionDeniedError)
    if isinstance(exc, rejected) or status in (401, 403):
        return ErrorCode.PROVIDER_AUTH
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return ErrorCode.PROVIDER_RATE_LIMIT
    # An answer that arrived but could not be read: LiteLLM reports it as a
    # connection error or an HTTP 500 of its own making.
    if _in_chain(exc, _MALFORMED_MARKERS, json.JSONDecodeError):
        return ErrorCode.MALFORMED_OUTPUT
    # Timeout subclasses APIConnectionError: test it first.
    if isinstance(exc, litellm.Timeout) or status == 408:
        return ErrorCode.PROVIDER_TIMEOUT
    if isinstance(exc, litellm.APIConnectionError) or _is_connection_failure(exc):
        return ErrorCode.PROVIDER_UNREACHABLE
    return ErrorCode.PROVIDER_ERROR


def _message(
    code: ErrorCode,
    ref: ModelRef,
    timeout: float,
    status: int | None,
    retry_after: float | None = None,
) -> str:
    """The user's sentence, from the kind of failure alone: nothing of the provider's text."""
    name = ref.name
    if code is ErrorCode.PROVIDER_AUTH:
        hint = f" (set {ref.api_key_env})" if ref.api_key_env else ""
        return f"{name}: the provider rejected the API key{hint}"
    if code is ErrorCode.PROVIDER_RATE_LIMIT:
        when = f"in {retry_after:g} s" if retry_after is not None else "shortly"
        return f"{name}: the provider is rate-limiting requests; try again {when}"
    if code is ErrorCode.PROVIDER_TIMEOUT:
        # LiteLLM reports its own timeout as HTTP 408 too: one sentence for both.
        return f"{name}: no answer within {timeout:g} s"
    if code is ErrorCode.MALFORMED_OUTPUT:
        return f"{name}: the provider's answer was empty or unreadable"
    if code is ErrorCode.PROVIDER_UNREACHABLE:
        where = f" at {_safe_base(ref.api_base)}" if ref.api_base else ""
        return f"{name}: could not connect to the provider{where}"
    if code is ErrorCode.CONTEXT_TOO_LONG:
        return f"{name}: the conversation is longer than the model's context window"
    suffix = f" (HTTP {status})" if status else ""
    return f"{name}: the provider call failed{suffix}"


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _is_connection_failure(exc: BaseException) -> bool:
    return _in_chain(exc, _CONNECTION_MARKERS, ConnectionError)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and every exception it was raised from or while handling."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _in_chain(
    exc: BaseException, markers: tuple[str, ...], kind: type[BaseException] | None = None
) -> bool:
    """Whether any exception in the chain is a ``kind`` or has a marker in its text.

    The text is read to classify only; it is never shown."""
    return any(
        (kind is not None and isinstance(e, kind))
        or any(marker in str(e).lower() for marker in markers)
        for e in _chain(exc)
    )


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait (``Retry-After``), from any response in the chain."""
    for error in _chain(exc):
        response = getattr(error, "response", None)
        for headers in (
            getattr(error, "litellm_response_headers", None),
            getattr(error, "headers", None),
            getattr(response, "headers", None),
        ):
            value = _header(headers, "retry-after")
            if value is not None:
                return _seconds(value)
    return None


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        items = headers.items()
    except (AttributeError, TypeError):
        return None
    for key, value in items:
        if isinstance(key, str) and key.lower() == name and isinstance(value, str):
            return value
    return None


def _seconds(value: str) -> float | None:
    """A Retry-After value — seconds, or an HTTP date — as seconds from now."""
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def _safe_base(api_base: str | None) -> str:
    # Scheme, host and port only: a URL can carry credentials or tokens.
    parts = urlsplit(api_base or "")
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a number: leave it out rather than fail the error message
        port = ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host


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
        elif usage.prompt_tokens is not None and usage.completion_tokens is not None:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=ref.litellm_model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
            cost = prompt_cost + completion_cost
        else:
            return usage
    except Exception:
        return usage
    return Usage(usage.prompt_tokens, usage.completion_tokens, float(cost))


def _offline_answer(ref: ModelRef, messages: Sequence[ChatMessage]) -> str:
    try:
        return offline.answer(ref.model, messages)
    except ValueError:
        raise ProviderError(
            f"{ref.name}: the offline provider has no such model", code=ErrorCode.UNKNOWN_MODEL
        ) from None
