"""Failed LiteLLM calls in Smriti's words: exceptions → typed ``ProviderError``.

``classify(exc)`` picks the code; the first rule that matches wins, in this order:

    code                  LiteLLM (OpenAI) exception     or, from any provider / HTTP client
    CONTEXT_TOO_LONG      ContextWindowExceededError     HTTP 413; a 4xx but 401/403/408
                                                         saying "context length" & co.
    PROVIDER_AUTH         AuthenticationError,           HTTP 401, 403
                          PermissionDeniedError
    PROVIDER_RATE_LIMIT   RateLimitError                 HTTP 429
    MALFORMED_OUTPUT      "empty or invalid response"    a JSONDecodeError in the chain
    PROVIDER_TIMEOUT      Timeout                        HTTP 408 (LiteLLM's own timeout)
    PROVIDER_UNREACHABLE  APIConnectionError             a ConnectionError, or "Connection
                                                         error." & co. in any exception
                                                         (an InternalServerError included),
                                                         or the HTTP client's own error for
                                                         a connection that failed or broke
                                                         off mid-response (LiteLLM reports a
                                                         stream cut mid-answer as HTTP 500
                                                         for Anthropic and Ollama)
    PROVIDER_ERROR        anything else                  (the message names the HTTP status)

``provider_error(exc, ref, timeout=…)`` builds the ``ProviderError`` the user
sees. Its message is written here from the code and the model's name alone —
never copied from the provider, whose text may echo the key; the provider's
text is read only to classify. A rate limit carries the provider's
``Retry-After`` (seconds, or an HTTP date) as ``retry_after``.

The exception classes come from ``loader.load()``: a call has failed, so
LiteLLM is already imported.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from typing import Any
from urllib.parse import urlsplit

from ...errors import ErrorCode, ProviderError
from ..types import ModelRef
from . import loader

# Substrings LiteLLM and the HTTP clients use for a refused or failed
# connection; some providers report it as an InternalServerError. Matched to
# classify only — the text itself is never shown.
_CONNECTION_MARKERS = (
    "connection error",
    "cannot connect to host",
    "connect call failed",
    "connection refused",
)

# The HTTP clients' classes (httpx, aiohttp, in any exception's MRO) for a
# connection that failed or broke off mid-response; by name, as neither is
# Smriti's dependency. Timeouts are their own classes (TimeoutException,
# ServerTimeoutError is caught by the 408 first).
_BROKEN_CONNECTION_CLASSES = frozenset(
    {"NetworkError", "RemoteProtocolError", "ClientPayloadError", "ClientConnectionError"}
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


def classify(exc: BaseException) -> ErrorCode:
    """The ErrorCode for a LiteLLM (or OpenAI, or HTTP client) exception; see the table above."""
    litellm = loader.load()
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


def provider_error(
    exc: BaseException, ref: ModelRef, *, timeout: float, mid_stream: bool = False
) -> ProviderError:
    """The ProviderError to raise for ``exc``, a failed call to ``ref``.

    Raise it outside the ``except`` block that caught ``exc``, so that it
    carries no ``__context__``: the original exception holds the provider's
    text. ``mid_stream``: pieces of the answer had already arrived.
    """
    code = classify(exc)
    if code is ErrorCode.PROVIDER_UNREACHABLE and mid_stream:
        return ProviderError(
            f"{ref.name}: the connection to the provider was lost mid-answer", code=code
        )
    retry_after = _retry_after(exc)
    return ProviderError(
        message(code, ref, timeout, _status(exc), retry_after),
        code=code,
        retry_after=retry_after,
    )


def no_answer(ref: ModelRef) -> ProviderError:
    """A 200 with neither text nor usage (an empty, HTML or malformed body): not an answer."""
    return ProviderError(
        f"{ref.name}: the provider's answer was empty or unreadable",
        code=ErrorCode.MALFORMED_OUTPUT,
    )


def message(
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
    return _in_chain(exc, _CONNECTION_MARKERS, ConnectionError) or any(
        kind.__name__ in _BROKEN_CONNECTION_CLASSES
        for error in _chain(exc)
        for kind in type(error).__mro__
    )


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
