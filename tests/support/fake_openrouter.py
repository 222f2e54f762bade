"""A recording stub of OpenRouter (``POST /api/v1/chat/completions``) for tests.

OpenRouter speaks OpenAI's format (see ``fake_openai.py``) at another path
and reports errors its own way: ``{"error": {"code": <HTTP status>, "message":
…}}``; its context overflow is a 400 whose message says "maximum context
length". Point LiteLLM at ``server.base_url``.
"""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import Answer, Script

CONTEXT_TOO_LONG = (
    "This endpoint's maximum context length is 8192 tokens. However, you requested about "
    "9000 tokens (8000 of text input, 1000 in the output). Please reduce the length of "
    'either one, or use the "middle-out" transform to compress your prompt automatically.'
)


class FakeOpenRouter(FakeOpenAI):
    chat_path = "/api/v1/chat/completions"
    thread_name = "fake-openrouter"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/api/v1"

    def completion_id(self, answer: Answer) -> str:
        return f"gen-fake-{answer.number}"

    def error(self, script: Script, key: str) -> Response:
        status = script.status
        if status == 401:
            message = f"No auth credentials found for key {key}"
        elif status == 429:
            message = f"Rate limit exceeded for key {key}"
        elif status == 400 and script.code == "context_length_exceeded":
            message = CONTEXT_TOO_LONG
        else:
            message = f"Fake error {status}."
        return JSONResponse(
            {"error": {"code": status, "message": script.message or message}},
            status_code=status,
        )
