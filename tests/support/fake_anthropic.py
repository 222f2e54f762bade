"""A recording stub of Anthropic's Messages API (``POST /v1/messages``) for tests.

Scripting and records as for every stub (``fake_provider.py``); the key
travels in ``x-api-key`` (recorded as sent in ``authorizations``). Point
LiteLLM at ``server.base_url``.

Answers: a ``message`` object (``content: [{type: text}]``, ``usage:
{input_tokens, output_tokens}``), or, when the request streams, Anthropic's
events: ``message_start`` (input tokens), ``content_block_start``, one
``content_block_delta`` per piece, ``content_block_stop``, ``message_delta``
(output tokens), ``message_stop``.

``fail`` by status: 401 ``authentication_error`` and 429 ``rate_limit_error``
echo the key in the message; 400 with ``code="context_length_exceeded"`` is
Anthropic's "prompt is too long" ``invalid_request_error`` (Anthropic sends no
code, only that text); 529 is ``overloaded_error``; other statuses an
``api_error`` (5xx) or ``invalid_request_error``.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from tests.support.fake_provider import Answer, Events, FakeProvider, Script, sse

PROMPT_TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


class FakeAnthropic(FakeProvider):
    chat_path = "/v1/messages"
    key_header = "x-api-key"
    key_prefix = ""
    thread_name = "fake-anthropic"

    @property
    def base_url(self) -> str:
        return self.root_url

    def whole(self, answer: Answer) -> Response:
        return JSONResponse(
            {
                **_message(answer),
                "content": [{"type": "text", "text": answer.text}],
                "stop_reason": answer.finish or "end_turn",
                "usage": {
                    "input_tokens": answer.prompt_tokens,
                    "output_tokens": answer.completion_tokens,
                },
            }
        )

    def events(self, answer: Answer) -> Events:
        start = {
            **_message(answer),
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": answer.prompt_tokens, "output_tokens": 1},
        }
        return Events(
            head=[
                sse({"type": "message_start", "message": start}, "message_start"),
                sse(
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                ),
            ],
            pieces=[
                sse(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                    "content_block_delta",
                )
                for piece in answer.chunks
            ],
            tail=[
                sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                sse(
                    {
                        "type": "message_delta",
                        "delta": {
                            "stop_reason": answer.finish or "end_turn",
                            "stop_sequence": None,
                        },
                        "usage": {"output_tokens": answer.completion_tokens},
                    },
                    "message_delta",
                ),
                sse({"type": "message_stop"}, "message_stop"),
            ],
        )

    def error(self, script: Script, key: str) -> Response:
        status = script.status
        if status == 401:
            kind, message = "authentication_error", f"invalid x-api-key: {key}"
        elif status == 429:
            kind, message = (
                "rate_limit_error",
                f"Number of request tokens has exceeded your rate limit (key {key}).",
            )
        elif status == 529:
            kind, message = "overloaded_error", "Overloaded"
        elif status == 400 and script.code == "context_length_exceeded":
            kind, message = "invalid_request_error", PROMPT_TOO_LONG
        elif status >= 500:
            kind, message = "api_error", "Internal server error"
        else:
            kind, message = "invalid_request_error", f"Fake error {status}."
        return JSONResponse(
            {"type": "error", "error": {"type": kind, "message": script.message or message}},
            status_code=status,
        )


def _message(answer: Answer) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{answer.number}",
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "stop_sequence": None,
    }
