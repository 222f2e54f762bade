"""errors.py: LiteLLM / OpenAI / HTTP-client exceptions → Smriti's typed ProviderError, one row each.

Built by hand, the way LiteLLM raises them, so every rule of the table in the
module's docstring is checked without a server (the stub-server tests in
test_litellm_adapter.py and test_provider_edges.py check that real failures
arrive as these exceptions).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from api.errors import ErrorCode
from api.providers import ModelRef
from api.providers.litellm import loader
from api.providers.litellm.errors import classify, provider_error

SECRET = "sk-fake-SECRET-0123456789abcdef"
REQUEST = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
LAB = ModelRef(
    name="lab/my-model",
    provider="lab",
    model="my-model",
    litellm_model="openai/my-model",
    api_base="http://user:pw@127.0.0.1:8080/v1/tenant?token=abc",
    api_key_env="LAB_API_KEY",
)


def chained(outer: BaseException, cause: BaseException) -> BaseException:
    outer.__cause__ = cause
    return outer


def response(status: int) -> httpx.Response:
    return httpx.Response(status, request=REQUEST)


# (what happened, the exception as LiteLLM or the client raises it, the code)
CASES: list[tuple[str, Callable[[Any], BaseException], ErrorCode]] = [
    (
        "context window exceeded",
        lambda lt: lt.ContextWindowExceededError("too long", "my-model", "openai"),
        ErrorCode.CONTEXT_TOO_LONG,
    ),
    (
        "HTTP 413",
        lambda lt: lt.APIError(413, "big", "openai", "my-model"),
        ErrorCode.CONTEXT_TOO_LONG,
    ),
    (
        "a 400 saying maximum context length (OpenRouter)",
        lambda lt: lt.BadRequestError(
            "This endpoint's maximum context length is 8192 tokens", "my-model", "openrouter"
        ),
        ErrorCode.CONTEXT_TOO_LONG,
    ),
    (
        "a 400 saying input length exceeds the context length (Ollama)",
        lambda lt: lt.BadRequestError(
            "input length exceeds the context length", "llama3.1", "ollama"
        ),
        ErrorCode.CONTEXT_TOO_LONG,
    ),
    (
        "a 429 saying Request too large (OpenAI's token cap)",
        lambda lt: lt.APIError(429, "Request too large for gpt-4o", "openai", "gpt-4o"),
        ErrorCode.CONTEXT_TOO_LONG,
    ),
    (
        "authentication",
        lambda lt: lt.AuthenticationError(f"Incorrect API key {SECRET}", "openai", "my-model"),
        ErrorCode.PROVIDER_AUTH,
    ),
    (
        "a 401 that mentions the context length is still auth",
        lambda lt: lt.AuthenticationError("key invalid; context length 8192", "openai", "m"),
        ErrorCode.PROVIDER_AUTH,
    ),
    (
        "permission denied",
        lambda lt: lt.PermissionDeniedError("no", "openai", "my-model", response=response(403)),
        ErrorCode.PROVIDER_AUTH,
    ),
    ("HTTP 403", lambda lt: lt.APIError(403, "no", "openai", "my-model"), ErrorCode.PROVIDER_AUTH),
    (
        "rate limit",
        lambda lt: lt.RateLimitError(f"slow down {SECRET}", "openai", "my-model"),
        ErrorCode.PROVIDER_RATE_LIMIT,
    ),
    (
        "HTTP 429",
        lambda lt: lt.APIError(429, "slow", "openai", "my-model"),
        ErrorCode.PROVIDER_RATE_LIMIT,
    ),
    (
        "an empty or invalid body (LiteLLM's wording)",
        lambda lt: lt.APIConnectionError(
            "Empty or invalid response from LLM endpoint", "openai", "my-model"
        ),
        ErrorCode.MALFORMED_OUTPUT,
    ),
    (
        "a JSONDecodeError in the chain",
        lambda lt: chained(
            lt.InternalServerError("failed", "openai", "my-model"),
            json.JSONDecodeError("Expecting value", "<html>", 0),
        ),
        ErrorCode.MALFORMED_OUTPUT,
    ),
    (
        "timeout",
        lambda lt: lt.Timeout("timed out", "my-model", "openai"),
        ErrorCode.PROVIDER_TIMEOUT,
    ),
    (
        "HTTP 408 (LiteLLM's own timeout, mid-stream)",
        lambda lt: lt.APIError(408, "timeout", "openai", "my-model"),
        ErrorCode.PROVIDER_TIMEOUT,
    ),
    (
        "API connection error",
        lambda lt: lt.APIConnectionError("boom", "openai", "my-model"),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        'LiteLLM\'s InternalServerError "Connection error."',
        lambda lt: lt.InternalServerError("Connection error.", "openai", "my-model"),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        'OpenAI\'s InternalServerError "Connection error."',
        lambda lt: openai.InternalServerError(
            "Connection error.", response=response(500), body=None
        ),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        "OpenAI's APIConnectionError",
        lambda lt: openai.APIConnectionError(request=REQUEST),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        "a refused connection in the chain",
        lambda lt: chained(RuntimeError("failed"), ConnectionRefusedError(111, "refused")),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        "aiohttp's wording",
        lambda lt: RuntimeError("Cannot connect to host 127.0.0.1:1 ssl:default"),
        ErrorCode.PROVIDER_UNREACHABLE,
    ),
    (
        "HTTP 500",
        lambda lt: lt.InternalServerError("upstream exploded", "openai", "my-model"),
        ErrorCode.PROVIDER_ERROR,
    ),
    (
        "a plain 400",
        lambda lt: lt.BadRequestError("bad request", "my-model", "openai"),
        ErrorCode.PROVIDER_ERROR,
    ),
    ("anything else", lambda lt: ValueError("odd"), ErrorCode.PROVIDER_ERROR),
]


@pytest.mark.parametrize(("make", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classify(make: Callable[[Any], BaseException], code: ErrorCode) -> None:
    assert classify(make(loader.load())) is code


# (what happened, the exception, mid-stream, the ProviderError's code, message, retry_after)
MESSAGES: list[tuple[str, Callable[[Any], BaseException], bool, ErrorCode, str, float | None]] = [
    (
        "auth names the key variable",
        lambda lt: lt.AuthenticationError(f"Incorrect API key {SECRET}", "openai", "my-model"),
        False,
        ErrorCode.PROVIDER_AUTH,
        "lab/my-model: the provider rejected the API key (set LAB_API_KEY)",
        None,
    ),
    (
        "rate limit with Retry-After",
        lambda lt: lt.RateLimitError(
            f"slow down {SECRET}", "openai", "my-model", headers={"retry-after": "7"}
        ),
        False,
        ErrorCode.PROVIDER_RATE_LIMIT,
        "lab/my-model: the provider is rate-limiting requests; try again in 7 s",
        7.0,
    ),
    (
        "rate limit without",
        lambda lt: lt.RateLimitError("slow down", "openai", "my-model"),
        False,
        ErrorCode.PROVIDER_RATE_LIMIT,
        "lab/my-model: the provider is rate-limiting requests; try again shortly",
        None,
    ),
    (
        "timeout names the configured seconds",
        lambda lt: lt.Timeout("timed out", "my-model", "openai"),
        False,
        ErrorCode.PROVIDER_TIMEOUT,
        "lab/my-model: no answer within 30 s",
        None,
    ),
    (
        "unreachable names scheme, host and port only",
        lambda lt: lt.InternalServerError("Connection error.", "openai", "my-model"),
        False,
        ErrorCode.PROVIDER_UNREACHABLE,
        "lab/my-model: could not connect to the provider at http://127.0.0.1:8080",
        None,
    ),
    (
        "unreachable mid-stream",
        lambda lt: lt.APIConnectionError("reset", "openai", "my-model"),
        True,
        ErrorCode.PROVIDER_UNREACHABLE,
        "lab/my-model: the connection to the provider was lost mid-answer",
        None,
    ),
    (
        "context too long",
        lambda lt: lt.ContextWindowExceededError(f"too long {SECRET}", "my-model", "openai"),
        False,
        ErrorCode.CONTEXT_TOO_LONG,
        "lab/my-model: the conversation is longer than the model's context window",
        None,
    ),
    (
        "malformed",
        lambda lt: lt.APIConnectionError(
            "Empty or invalid response from LLM endpoint", "openai", "my-model"
        ),
        False,
        ErrorCode.MALFORMED_OUTPUT,
        "lab/my-model: the provider's answer was empty or unreadable",
        None,
    ),
    (
        "anything else names the HTTP status",
        lambda lt: lt.InternalServerError(f"boom {SECRET}", "openai", "my-model"),
        False,
        ErrorCode.PROVIDER_ERROR,
        "lab/my-model: the provider call failed (HTTP 500)",
        None,
    ),
    (
        "and no status when there is none",
        lambda lt: ValueError(SECRET),
        False,
        ErrorCode.PROVIDER_ERROR,
        "lab/my-model: the provider call failed",
        None,
    ),
]


@pytest.mark.parametrize(
    ("make", "mid_stream", "code", "message", "retry_after"),
    [m[1:] for m in MESSAGES],
    ids=[m[0] for m in MESSAGES],
)
def test_provider_error_is_written_from_the_code_never_from_the_provider(
    make: Callable[[Any], BaseException],
    mid_stream: bool,
    code: ErrorCode,
    message: str,
    retry_after: float | None,
) -> None:
    error = provider_error(make(loader.load()), LAB, timeout=30.0, mid_stream=mid_stream)

    assert (error.code, error.message, error.retry_after) == (code, message, retry_after)
    assert SECRET not in f"{error} {error!r}"
    assert (error.__cause__, error.__context__) == (None, None)
