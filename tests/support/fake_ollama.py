"""A recording stub of Ollama's chat API (``POST /api/chat``) for tests.

Scripting and records as for every stub (``fake_provider.py``); a key, when
one is sent, travels as ``Authorization: Bearer …``. Point LiteLLM at
``server.base_url``. Any other path (``/api/generate`` included) is recorded
in ``paths`` and answered 404, so a test sees a client that used the wrong
endpoint. ``POST /api/show`` describes the model (a context length of
``context_length``, 8192 unless set), as LiteLLM asks it for a window.

Answers: one JSON object (``message: {role, content}``, ``done: true``,
``prompt_eval_count``, ``eval_count``), or, when the request streams (Ollama
streams unless told ``"stream": false``), newline-delimited JSON: one object
per piece, then a ``done`` object with the counts.

``fail(status, message=…)`` answers ``{"error": message}`` as Ollama does;
with ``code="context_length_exceeded"`` the message is Ollama's
"input length exceeds the context length" wording; 401 and 429 echo the key.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.fake_provider import Answer, Events, FakeProvider, Script

CONTEXT_TOO_LONG = "the input length exceeds the context length"
CREATED_AT = "2023-11-14T22:13:20Z"


class FakeOllama(FakeProvider):
    chat_path = "/api/chat"
    stream_media_type = "application/x-ndjson"
    thread_name = "fake-ollama"
    context_length = 8192

    @property
    def base_url(self) -> str:
        return self.root_url

    def streams(self, body: dict[str, Any]) -> bool:
        return body.get("stream", True) is not False

    def extra_routes(self) -> list[Route]:
        return [Route("/api/show", self._show, methods=["POST"])]

    async def _show(self, request: Request) -> Response:
        self._record_path(request)
        return JSONResponse(
            {
                "details": {"family": "llama"},
                "model_info": {"llama.context_length": self.context_length},
                "template": "",
            }
        )

    def whole(self, answer: Answer) -> Response:
        return JSONResponse(_line(answer, answer.text, done=True))

    def events(self, answer: Answer) -> Events:
        return Events(
            head=[],
            pieces=[json.dumps(_line(answer, piece, done=False)) + "\n" for piece in answer.chunks],
            tail=[json.dumps(_line(answer, "", done=True)) + "\n"],
        )

    def error(self, script: Script, key: str) -> Response:
        status = script.status
        if status == 401:
            message = f"unauthorized: key {key}"
        elif status == 429:
            message = f"too many requests for key {key}"
        elif script.code == "context_length_exceeded":
            message = CONTEXT_TOO_LONG
        else:
            message = f"fake error {status}"
        return JSONResponse({"error": script.message or message}, status_code=status)


def _line(answer: Answer, content: str, *, done: bool) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": answer.model,
        "created_at": CREATED_AT,
        "message": {"role": "assistant", "content": content},
        "done": done,
    }
    if done:
        line |= {
            "done_reason": answer.finish or "stop",
            "prompt_eval_count": answer.prompt_tokens,
            "eval_count": answer.completion_tokens,
        }
    return line
