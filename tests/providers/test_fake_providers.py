"""The Anthropic, Ollama and OpenRouter stubs and the shared scripts: other tests
trust what they record and how they answer, so their wire formats are pinned here."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_openrouter import FakeOpenRouter

BODY: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "two words"}]}


def test_raw_answers_exactly_the_body_given() -> None:
    with FakeOpenAI() as server:
        server.raw("<html>oops</html>", content_type="text/html")
        server.raw("", status=200)
        html = httpx.post(f"{server.base_url}/chat/completions", json=BODY)
        empty = httpx.post(f"{server.base_url}/chat/completions", json={**BODY, "stream": True})

    assert (html.status_code, html.text, html.headers["content-type"]) == (
        200,
        "<html>oops</html>",
        "text/html; charset=utf-8",
    )
    assert (empty.status_code, empty.text) == (200, "")


def test_fail_sends_retry_after_and_unknown_paths_are_recorded() -> None:
    with FakeOpenRouter() as server:
        server.fail(429, retry_after=2.5)
        limited = httpx.post(
            f"{server.base_url}/chat/completions", json=BODY, headers={"authorization": "Bearer k"}
        )
        missing = httpx.post(f"{server.root_url}/v1/chat/completions", json=BODY)

        assert (limited.status_code, limited.headers["retry-after"]) == (429, "2.5")
        assert limited.json() == {
            "error": {"code": 429, "message": "Rate limit exceeded for key k"}
        }
        assert missing.status_code == 404
        assert server.paths == ["/api/v1/chat/completions", "/v1/chat/completions"]
        assert server.requests == [BODY]


def test_anthropic_streams_its_events_and_reads_the_key_from_x_api_key() -> None:
    with FakeAnthropic() as server:
        server.stream_chunks(["Hi", " there"])
        response = httpx.post(
            f"{server.base_url}/v1/messages",
            json={**BODY, "system": "Be brief.", "stream": True},
            headers={"x-api-key": "sk-a"},
        )
        authorizations = server.authorizations

    blocks = [b for b in response.text.split("\n\n") if b]
    events = [b.split("\n")[0].removeprefix("event: ") for b in blocks]
    data = [json.loads(b.split("\n")[1].removeprefix("data: ")) for b in blocks]
    assert events == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [d["delta"]["text"] for d in data[2:4]] == ["Hi", " there"]
    # "Be brief." and "two words": 4 prompt words; 2 reply words.
    assert data[0]["message"]["usage"] == {"input_tokens": 4, "output_tokens": 1}
    assert data[5]["usage"] == {"output_tokens": 2}
    assert authorizations == ["sk-a"]


def test_ollama_streams_ndjson_unless_told_not_to() -> None:
    with FakeOllama() as server:
        server.reply("Hi there")
        streamed = httpx.post(f"{server.base_url}/api/chat", json=BODY)
        whole = httpx.post(f"{server.base_url}/api/chat", json={**BODY, "stream": False})
        generate = httpx.post(f"{server.base_url}/api/generate", json=BODY)
        paths = server.paths

    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert [line["message"]["content"] for line in lines] == ["Hi", " there", ""]
    assert [line["done"] for line in lines] == [False, False, True]
    assert (lines[-1]["prompt_eval_count"], lines[-1]["eval_count"]) == (2, 2)
    assert whole.json()["message"] == {"role": "assistant", "content": "fake reply #2"}
    assert generate.status_code == 404
    assert paths == ["/api/chat", "/api/chat", "/api/generate"]
