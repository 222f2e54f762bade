"""FakeOpenAI itself: other tests trust what it records and how it answers."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import httpx
import pytest

from tests.support.fake_openai import FakeOpenAI

BODY: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "two words"}]}


def post(server: FakeOpenAI, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, headers=headers)


def sse_payloads(response: httpx.Response) -> list[Any]:
    lines = [line for line in response.text.split("\n") if line]
    assert all(line.startswith("data: ") for line in lines)
    return [
        line.removeprefix("data: ")
        if line == "data: [DONE]"
        else json.loads(line.removeprefix("data: "))
        for line in lines
    ]


def test_default_replies_are_numbered_and_requests_recorded(fake_openai: FakeOpenAI) -> None:
    first = post(fake_openai, BODY, authorization="Bearer k1").json()
    second = post(fake_openai, {**BODY, "model": "n"}).json()

    assert first == {
        "id": "chatcmpl-fake-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "fake reply #1"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5},
    }
    assert second["choices"][0]["message"]["content"] == "fake reply #2"
    assert fake_openai.requests == [BODY, {**BODY, "model": "n"}]
    assert fake_openai.authorizations == ["Bearer k1", None]


def test_scripts_are_used_in_order(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("one", prompt_tokens=7, completion_tokens=9)
    fake_openai.fail(429)

    answers = [post(fake_openai, BODY) for _ in range(3)]

    assert answers[0].json()["choices"][0]["message"]["content"] == "one"
    assert answers[0].json()["usage"] == {
        "prompt_tokens": 7,
        "completion_tokens": 9,
        "total_tokens": 16,
    }
    assert answers[1].status_code == 429
    assert answers[1].json()["error"]["code"] == "rate_limit_exceeded"
    assert answers[2].json()["choices"][0]["message"]["content"] == "fake reply #3"


def test_stream_sends_usage_only_when_asked(fake_openai: FakeOpenAI) -> None:
    fake_openai.stream_chunks(["a", " b"])
    fake_openai.stream_chunks(["a", " b"])

    plain = sse_payloads(post(fake_openai, {**BODY, "stream": True}))
    with_usage = sse_payloads(
        post(fake_openai, {**BODY, "stream": True, "stream_options": {"include_usage": True}})
    )

    def deltas(payloads: list[Any]) -> list[Any]:
        return [p["choices"] for p in payloads if isinstance(p, dict)]

    assert deltas(plain) == [
        [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
        [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}],
        [{"index": 0, "delta": {"content": " b"}, "finish_reason": None}],
        [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    ]
    assert plain[-1] == "[DONE]"
    assert deltas(with_usage)[-1] == []
    usage_chunk = with_usage[-2]
    assert isinstance(usage_chunk, dict)
    assert usage_chunk["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}


def test_stream_can_drop_the_connection(fake_openai: FakeOpenAI) -> None:
    fake_openai.stream_chunks(["a", " b", " c"], fail_after=1)

    with pytest.raises(httpx.RemoteProtocolError):
        post(fake_openai, {**BODY, "stream": True})


def test_stream_outcomes_record_finished_and_dropped_streams(fake_openai: FakeOpenAI) -> None:
    fake_openai.stream_chunks(["a", " b"])
    fake_openai.stream_chunks(["a", " b", " c"], fail_after=1)

    post(fake_openai, {**BODY, "stream": True})
    with pytest.raises(httpx.RemoteProtocolError):
        post(fake_openai, {**BODY, "stream": True})

    assert fake_openai.wait_for_stream_end(2) == "dropped"
    assert fake_openai.stream_outcomes == {1: "finished", 2: "dropped"}


def test_a_held_stream_sends_its_pieces_then_waits_for_the_client_to_leave(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.stream_chunks(["a", " b", " c"], hold_after=2)

    with httpx.stream(
        "POST", f"{fake_openai.base_url}/chat/completions", json={**BODY, "stream": True}
    ) as response:
        # One iterator throughout: abandoning an httpx line iterator closes the connection.
        lines = (line for line in response.iter_lines() if line)
        received = [json.loads(next(lines).removeprefix("data: ")) for _ in range(3)]
        time.sleep(0.2)
        assert fake_openai.stream_outcomes == {}

    assert [r["choices"][0]["delta"].get("content") for r in received] == ["", "a", " b"]
    assert fake_openai.wait_for_stream_end(1) == "client-closed"


def test_interval_paces_the_pieces(fake_openai: FakeOpenAI) -> None:
    fake_openai.stream_chunks(["a", " b", " c"], interval=0.1)

    started = time.monotonic()
    post(fake_openai, {**BODY, "stream": True})

    assert 0.3 <= time.monotonic() - started < 1.5


def test_required_key_is_checked_and_echoed_like_openai_does() -> None:
    with FakeOpenAI(api_key="sk-right") as server:
        ok = post(server, BODY, authorization="Bearer sk-right")
        wrong = post(server, BODY, authorization="Bearer sk-wrong")

    assert ok.status_code == 200
    assert wrong.status_code == 401
    assert wrong.json()["error"]["message"].startswith("Incorrect API key provided: sk-wrong.")


def test_stop_is_quick_even_with_a_request_waiting() -> None:
    server = FakeOpenAI()
    server.start()
    server.delay(30)

    def wait_for_answer() -> None:
        # Either answer is fine: an early reply, or the connection closing.
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{server.base_url}/chat/completions", json=BODY, timeout=60)

    waiting = threading.Thread(target=wait_for_answer, daemon=True)
    waiting.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)

    started = time.monotonic()
    server.stop()

    assert server.requests == [BODY]
    assert time.monotonic() - started < 2
    waiting.join(timeout=5)
