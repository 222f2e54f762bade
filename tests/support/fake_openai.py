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

Scripting — each call queues one response for the next request (first in,
first out); with nothing queued the reply is ``"fake reply #n"`` where n is
the request's 1-based number:
    ``reply(text, prompt_tokens=None, completion_tokens=None)``
        answer with ``text``; streamed word by word when the request streams.
    ``stream_chunks(chunks, fail_after=None, hold_after=None, interval=0)``
        answer with these pieces (joined for a non-streaming request); with
        ``fail_after=n`` the connection is dropped after n pieces; with
        ``hold_after=n`` the server sends n pieces and then holds the response
        open, sending nothing more, until the client goes away (or the server
        stops); ``interval`` seconds pass before each streamed piece.
    ``fail(status, code=None, message=None)``
        answer with an OpenAI-style error body. Defaults by status: 401 and
        429 *echo the API key the request carried* in the message (real
        providers echo part of it — tests check that it never leaks further);
        400 with ``code="context_length_exceeded"`` uses OpenAI's wording;
        500 is a server error.
    ``delay(seconds)``
        wait this long before answering *every* following request (0 to stop).
        The wait is cut short when the server stops, so shutdown stays quick.

``FakeOpenAI(api_key="sk-…")`` additionally answers 401 to any request whose
``Authorization`` is not ``Bearer sk-…``.

Usage numbers are deterministic: prompt_tokens is the number of
whitespace-separated words in all message contents, completion_tokens the
number of words in the reply (unless given to ``reply``).

Recorded, thread-safe, as copies: ``requests`` (JSON bodies, in order),
``authorizations`` (the Authorization header of each request, or None) and
``stream_outcomes`` (request number → how its streamed response ended:
"finished", "dropped" by ``fail_after``, "client-closed" when the client went
away first, "server-stopped" for a held stream at shutdown).
``wait_for_stream_end(number, timeout)`` waits for one of those outcomes.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

CREATED = 1_700_000_000


@dataclass(frozen=True)
class _Script:
    kind: str  # "reply" | "chunks" | "fail"
    chunks: tuple[str, ...] = ()
    fail_after: int | None = None
    hold_after: int | None = None
    interval: float = 0.0
    status: int = 200
    code: str | None = None
    message: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _DroppedConnection(Exception):
    """Raised inside a streaming body to cut the connection mid-response."""


class _ServerStopped(Exception):
    """Ends a held streaming body when the server stops."""


class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1:<free port>; use it as a context manager."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self._api_key = api_key
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._authorizations: list[str | None] = []
        self._stream_outcomes: dict[int, str] = {}
        self._stream_ended = threading.Condition(self._lock)
        self._scripts: deque[_Script] = deque()
        self._delay = 0.0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._port: int | None = None

    # --- lifecycle ----------------------------------------------------------

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_config=None,
            # The dropped-connection script makes uvicorn log an error by design.
            log_level="critical",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("FakeOpenAI did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
            if self._thread.is_alive():
                raise RuntimeError("FakeOpenAI did not stop within 5 s")

    @property
    def port(self) -> int:
        assert self._port is not None, "FakeOpenAI is not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ------------------------------------------------------------

    def reply(
        self, text: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None
    ) -> None:
        self._queue(
            _Script(
                "reply",
                chunks=tuple(_words(text)),
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        )

    def stream_chunks(
        self,
        chunks: list[str],
        *,
        fail_after: int | None = None,
        hold_after: int | None = None,
        interval: float = 0.0,
    ) -> None:
        self._queue(
            _Script(
                "chunks",
                chunks=tuple(chunks),
                fail_after=fail_after,
                hold_after=hold_after,
                interval=interval,
            )
        )

    def fail(self, status: int, *, code: str | None = None, message: str | None = None) -> None:
        self._queue(_Script("fail", status=status, code=code, message=message))

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    def _queue(self, script: _Script) -> None:
        with self._lock:
            self._scripts.append(script)

    # --- records --------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return json.loads(json.dumps(self._requests))  # type: ignore[no-any-return]

    @property
    def authorizations(self) -> list[str | None]:
        with self._lock:
            return list(self._authorizations)

    @property
    def stream_outcomes(self) -> dict[int, str]:
        with self._lock:
            return dict(self._stream_outcomes)

    def wait_for_stream_end(self, number: int, timeout: float = 5.0) -> str | None:
        """How streamed request ``number`` (1-based) ended; None if it has not within ``timeout``."""
        with self._stream_ended:
            self._stream_ended.wait_for(lambda: number in self._stream_outcomes, timeout)
            return self._stream_outcomes.get(number)

    def _record_stream_end(self, number: int, outcome: str) -> None:
        with self._stream_ended:
            self._stream_outcomes[number] = outcome
            self._stream_ended.notify_all()

    # --- the app --------------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _models(self, request: Request) -> Response:
        names = {"fake-model", *(str(r.get("model")) for r in self.requests)}
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": n, "object": "model", "owned_by": "fake"} for n in sorted(names)],
            }
        )

    async def _chat_completions(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid_request_error", None, "The request body is not valid JSON.")
        if not isinstance(body, dict):
            return _error(
                400, "invalid_request_error", None, "The request body must be a JSON object."
            )
        authorization = request.headers.get("authorization")
        with self._lock:
            self._requests.append(body)
            self._authorizations.append(authorization)
            number = len(self._requests)
            script = self._scripts.popleft() if self._scripts else None
            delay = self._delay
        await self._sleep(delay)

        key = (authorization or "").removeprefix("Bearer ")
        if self._api_key is not None and authorization != f"Bearer {self._api_key}":
            return _fail(_Script("fail", status=401), key)
        if script is None:
            script = _Script("reply", chunks=tuple(_words(f"fake reply #{number}")))
        if script.kind == "fail":
            return _fail(script, key)

        text = "".join(script.chunks)
        usage = {
            "prompt_tokens": script.prompt_tokens
            if script.prompt_tokens is not None
            else _count_prompt_words(body.get("messages")),
            "completion_tokens": script.completion_tokens
            if script.completion_tokens is not None
            else len(text.split()),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        model = str(body.get("model", ""))
        completion_id = f"chatcmpl-fake-{number}"

        if not body.get("stream"):
            if script.fail_after is not None:
                # A non-streaming answer cut short: close without a complete body.
                return StreamingResponse(self._drop_after([]), media_type="application/json")
            return JSONResponse(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            )

        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        events = _stream_events(
            completion_id, model, script.chunks, usage if include_usage else None
        )
        if script.fail_after is not None:
            # The role chunk, then fail_after pieces, then the connection drops.
            stream = self._drop_after(events[: 1 + script.fail_after])
        elif script.hold_after is not None:
            stream = self._hold_after(events[: 1 + script.hold_after], script.interval)
        else:
            stream = self._paced(events, len(script.chunks), script.interval)
        return StreamingResponse(self._recorded(number, stream), media_type="text/event-stream")

    async def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            await asyncio.sleep(min(remaining, 0.02))

    async def _drop_after(self, events: list[str]) -> AsyncIterator[str]:
        for event in events:
            yield event
            await asyncio.sleep(0)
        raise _DroppedConnection()

    async def _paced(self, events: list[str], pieces: int, interval: float) -> AsyncIterator[str]:
        # events[0] is the role chunk, events[1..pieces] the text pieces: each
        # piece waits `interval` first.
        for index, event in enumerate(events):
            if interval and 1 <= index <= pieces:
                await self._sleep(interval)
            yield event

    async def _hold_after(self, events: list[str], interval: float) -> AsyncIterator[str]:
        async for event in self._paced(events, len(events) - 1, interval):
            yield event
        # Say nothing more until the client leaves (Starlette then cancels this
        # generator) or the server stops.
        await self._sleep(float("inf"))
        raise _ServerStopped()

    async def _recorded(self, number: int, body: AsyncIterator[str]) -> AsyncIterator[str]:
        outcome = "client-closed"
        try:
            async for event in body:
                yield event
            outcome = "finished"
        except _DroppedConnection:
            outcome = "dropped"
            raise
        except _ServerStopped:
            outcome = "server-stopped"
        finally:
            self._record_stream_end(number, outcome)


def _stream_events(
    completion_id: str, model: str, chunks: tuple[str, ...], usage: dict[str, int] | None
) -> list[str]:
    def event(choices: list[dict[str, Any]], **extra: Any) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(payload)}\n\n"

    events = [
        event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    ]
    events += [
        event([{"index": 0, "delta": {"content": c}, "finish_reason": None}]) for c in chunks
    ]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if usage is not None:
        events.append(event([], usage=usage))
    events.append("data: [DONE]\n\n")
    return events


async def _iterate(events: list[str]) -> AsyncIterator[str]:
    for event in events:
        yield event


def _fail(script: _Script, key: str) -> Response:
    status, code = script.status, script.code
    if status == 401:
        message = script.message or (
            f"Incorrect API key provided: {key}. You can find your API key at "
            "https://platform.openai.com/account/api-keys."
        )
        return _error(401, "invalid_request_error", code or "invalid_api_key", message)
    if status == 429:
        message = (
            script.message
            or f"Rate limit reached for requests made with key {key}. Please try again in 20s."
        )
        return _error(429, "requests", code or "rate_limit_exceeded", message)
    if status == 400 and code == "context_length_exceeded":
        message = script.message or (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens. Please reduce the length of the messages."
        )
        return _error(400, "invalid_request_error", code, message)
    if status >= 500:
        message = script.message or "The server had an error while processing your request."
        return _error(status, "server_error", code, message)
    return _error(status, "invalid_request_error", code, script.message or f"Fake error {status}.")


def _error(status: int, kind: str, code: str | None, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
    )


def _words(text: str) -> list[str]:
    # Word pieces with their leading whitespace, so "".join(pieces) == text.
    return re.findall(r"\s*\S+|\s+", text)


def _count_prompt_words(messages: object) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(
        len(m["content"].split())
        for m in messages
        if isinstance(m, dict) and isinstance(m.get("content"), str)
    )
