"""A scriptable OpenAI-compatible chat server for tests.

It listens on 127.0.0.1 on a free port, in a background thread, so a test can
point a real client (LiteLLM, the openai SDK, httpx) at it and then assert
exactly what went over the wire::

    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        server.base_url            # "http://127.0.0.1:PORT/v1"
        server.reply("hello")      # the next request gets "hello"
        ... call the code under test with api_base=server.base_url ...
        server.requests            # [{"model": ..., "messages": [...], ...}]

As a pytest fixture::

    @pytest.fixture
    def fake_openai() -> Iterator[FakeOpenAI]:
        with FakeOpenAI() as server:
            yield server

Endpoints
    POST /v1/chat/completions   non-streaming JSON, or SSE when ``"stream": true``:
                                ``data: {chunk}`` lines (a role chunk, one chunk per
                                text piece, a finish chunk), then a usage chunk
                                (``choices: []``) when the request asks for it with
                                ``stream_options: {"include_usage": true}`` — as
                                OpenAI does — then ``data: [DONE]``.
    GET  /v1/models             the models seen so far (plus "fake-model").

Scripting (``reply``, ``stream_chunks``, ``fail``, ``raw``, ``delay``) and the
records (``requests``, ``authorizations``, ``paths``, ``stream_outcomes``) are
those of every stub: see ``fake_provider.py``. In this format ``fail`` by
status: 401 and 429 *echo the API key the request carried* in the message
(real providers echo part of it — tests check that it never leaks further);
400 with ``code="context_length_exceeded"`` uses OpenAI's wording; 500 is a
server error. ``authorizations`` holds the ``Authorization`` header as sent.

``FakeOpenAI(api_key="sk-…")`` additionally answers 401 to any request whose
``Authorization`` is not ``Bearer sk-…``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.fake_provider import CREATED, Answer, Events, FakeProvider, Script, sse


class FakeOpenAI(FakeProvider):
    """An OpenAI-compatible server on 127.0.0.1:<free port>; use it as a context manager."""

    chat_path = "/v1/chat/completions"
    thread_name = "fake-openai"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def extra_routes(self) -> list[Route]:
        return [Route("/v1/models", self._models, methods=["GET"])]

    async def _models(self, request: Request) -> Response:
        names = {"fake-model", *(str(r.get("model")) for r in self.requests)}
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": n, "object": "model", "owned_by": "fake"} for n in sorted(names)],
            }
        )

    def whole(self, answer: Answer) -> Response:
        return JSONResponse(
            {
                "id": self.completion_id(answer),
                "object": "chat.completion",
                "created": CREATED,
                "model": answer.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer.text},
                        "finish_reason": answer.finish or "stop",
                    }
                ],
                "usage": _usage(answer),
            }
        )

    def events(self, answer: Answer) -> Events:
        def event(choices: list[dict[str, Any]], **extra: Any) -> str:
            return sse(
                {
                    "id": self.completion_id(answer),
                    "object": "chat.completion.chunk",
                    "created": CREATED,
                    "model": answer.model,
                    "choices": choices,
                    **extra,
                }
            )

        options = answer.body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        tail = [event([{"index": 0, "delta": {}, "finish_reason": answer.finish or "stop"}])]
        if include_usage:
            tail.append(event([], usage=_usage(answer)))
        tail.append("data: [DONE]\n\n")
        return Events(
            head=[
                event(
                    [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ]
                )
            ],
            pieces=[
                event([{"index": 0, "delta": {"content": c}, "finish_reason": None}])
                for c in answer.chunks
            ],
            tail=tail,
        )

    def completion_id(self, answer: Answer) -> str:
        return f"chatcmpl-fake-{answer.number}"

    def error(self, script: Script, key: str) -> Response:
        status, code = script.status, script.code
        if status == 401:
            message = script.message or (
                f"Incorrect API key provided: {key}. You can find your API key at "
                "https://platform.openai.com/account/api-keys."
            )
            return self.error_body(401, "invalid_request_error", code or "invalid_api_key", message)
        if status == 429:
            message = (
                script.message
                or f"Rate limit reached for requests made with key {key}. Please try again in 20s."
            )
            return self.error_body(429, "requests", code or "rate_limit_exceeded", message)
        if status == 400 and code == "context_length_exceeded":
            message = script.message or (
                "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9000 tokens. Please reduce the length of the messages."
            )
            return self.error_body(400, "invalid_request_error", code, message)
        if status >= 500:
            message = script.message or "The server had an error while processing your request."
            return self.error_body(status, "server_error", code, message)
        return self.error_body(
            status, "invalid_request_error", code, script.message or f"Fake error {status}."
        )

    def error_body(self, status: int, kind: str, code: str | None, message: str) -> Response:
        return JSONResponse(
            {"error": {"message": message, "type": kind, "param": None, "code": code}},
            status_code=status,
        )


def _usage(answer: Answer) -> dict[str, int]:
    return {
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "total_tokens": answer.prompt_tokens + answer.completion_tokens,
    }
