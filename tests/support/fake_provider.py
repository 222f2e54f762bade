"""The shared base of the recording provider stubs (OpenAI, OpenRouter, Anthropic, Ollama).

A stub listens on 127.0.0.1 on a free port, in a background thread, so a test
can point a real client (LiteLLM, an SDK, httpx) at it and then assert exactly
what went over the wire. Each wire format is a subclass that says where the
chat endpoint is, where the key travels, and how an answer, a stream and an
error look (``fake_openai.py``, ``fake_openrouter.py``, ``fake_anthropic.py``,
``fake_ollama.py``); scripting and recording are the same for all of them.

Scripting — each call queues one response for the next chat request (first
in, first out); with nothing queued the reply is ``"fake reply #n"`` where n
is the request's 1-based number:
    ``reply(text, prompt_tokens=None, completion_tokens=None)``
        answer with ``text``; streamed word by word when the request streams.
    ``stream_chunks(chunks, fail_after=None, hold_after=None, interval=0)``
        answer with these pieces (joined for a non-streaming request); with
        ``fail_after=n`` the connection is dropped after n pieces; with
        ``hold_after=n`` the server sends n pieces and then holds the response
        open, sending nothing more, until the client goes away (or the server
        stops); ``interval`` seconds pass before each streamed piece.
    ``fail(status, code=None, message=None, retry_after=None)``
        answer with the format's error body (see the subclass for the default
        wording by status; 401 and 429 *echo the API key the request carried*,
        as real providers echo part of it, so tests can check it never leaks
        further); ``retry_after`` adds a ``Retry-After`` header (seconds).
    ``raw(body, status=200, content_type="application/json")``
        answer with exactly this body, streaming or not: an empty body, an
        HTML page, a truncated JSON document.
    ``delay(seconds)``
        wait this long before answering *every* following request (0 to stop).
        The wait is cut short when the server stops, so shutdown stays quick.

``api_key="…"`` additionally answers 401 to any request that does not carry
that key where the format carries it.

Usage numbers are deterministic: prompt tokens are the number of
whitespace-separated words in all message contents (the system prompt
included), completion tokens the number of words in the reply (unless given
to ``reply``).

Recorded, thread-safe, as copies: ``requests`` (JSON bodies of the chat
requests, in order), ``authorizations`` (the header that carries the key, as
sent, for each: ``Authorization`` or Anthropic's ``x-api-key``; None when absent),
``paths`` (the path of every request received, chat or not, in order) and
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
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

CREATED = 1_700_000_000
# How long the stubs keep an idle connection open: longer than any HTTP client pool
# keeps one for reuse (LiteLLM's aiohttp pool: 15 s, AIOHTTP_KEEPALIVE_TIMEOUT), as
# real providers' servers do. With uvicorn's default (5 s) a call that takes a pooled
# connection just as the stub closes it fails as "could not connect": it stopped
# `python -m bench.memory --db postgres` once in 10,000 sends.
KEEP_ALIVE_S = 75


@dataclass(frozen=True)
class Script:
    kind: str  # "reply" | "chunks" | "fail" | "raw"
    chunks: tuple[str, ...] = ()
    fail_after: int | None = None
    hold_after: int | None = None
    interval: float = 0.0
    status: int = 200
    code: str | None = None
    message: str | None = None
    retry_after: float | None = None
    body: str = ""
    content_type: str = "application/json"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish: str | None = None


@dataclass(frozen=True)
class Answer:
    """What a wire format renders: the reply and its usage, for one request."""

    body: dict[str, Any]  # the request's JSON body
    number: int  # 1-based request number
    chunks: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    finish: str | None = None  # the format's own word for why it ended; None: its usual one

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))


@dataclass(frozen=True)
class Events:
    """A streamed answer: what comes before the pieces, one event per piece, what follows."""

    head: list[str]
    pieces: list[str]
    tail: list[str]


class _DroppedConnection(Exception):
    """Raised inside a streaming body to cut the connection mid-response."""


class _ServerStopped(Exception):
    """Ends a held streaming body when the server stops."""


class FakeProvider:
    """A provider stub on 127.0.0.1:<free port>; use it as a context manager.

    Subclasses set ``chat_path``, where the key travels (``key_header``,
    ``key_prefix``) and ``stream_media_type``, and implement the wire format:
    ``streams``, ``whole``, ``events`` and ``error``.
    """

    chat_path = "/chat"
    key_header = "authorization"
    key_prefix = "Bearer "
    stream_media_type = "text/event-stream"
    thread_name = "fake-provider"

    def __init__(self, *, api_key: str | None = None) -> None:
        self._api_key = api_key
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._authorizations: list[str | None] = []
        self._paths: list[str] = []
        self._stream_outcomes: dict[int, str] = {}
        self._stream_ended = threading.Condition(self._lock)
        self._scripts: deque[Script] = deque()
        self._delay = 0.0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._port: int | None = None

    # --- the wire format (subclasses) -------------------------------------------

    def streams(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def whole(self, answer: Answer) -> Response:
        raise NotImplementedError

    def events(self, answer: Answer) -> Events:
        raise NotImplementedError

    def error(self, script: Script, key: str) -> Response:
        raise NotImplementedError

    def extra_routes(self) -> list[Route]:
        return []

    # --- lifecycle ----------------------------------------------------------

    def __enter__(self) -> Self:
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
            timeout_keep_alive=KEEP_ALIVE_S,
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
            if self._thread.is_alive():
                raise RuntimeError(f"{type(self).__name__} did not stop within 5 s")

    @property
    def port(self) -> int:
        assert self._port is not None, f"{type(self).__name__} is not started"
        return self._port

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- scripting ------------------------------------------------------------

    def reply(
        self,
        text: str,
        *,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        finish: str | None = None,
    ) -> None:
        self._queue(
            Script(
                "reply",
                chunks=tuple(words(text)),
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                finish=finish,
            )
        )

    def stream_chunks(
        self,
        chunks: list[str],
        *,
        fail_after: int | None = None,
        hold_after: int | None = None,
        interval: float = 0.0,
        finish: str | None = None,
    ) -> None:
        self._queue(
            Script(
                "chunks",
                chunks=tuple(chunks),
                fail_after=fail_after,
                hold_after=hold_after,
                interval=interval,
                finish=finish,
            )
        )

    def fail(
        self,
        status: int,
        *,
        code: str | None = None,
        message: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self._queue(
            Script("fail", status=status, code=code, message=message, retry_after=retry_after)
        )

    def raw(self, body: str, *, status: int = 200, content_type: str = "application/json") -> None:
        self._queue(Script("raw", status=status, body=body, content_type=content_type))

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    def _queue(self, script: Script) -> None:
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
    def paths(self) -> list[str]:
        with self._lock:
            return list(self._paths)

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

    def _record_path(self, request: Request) -> None:
        with self._lock:
            self._paths.append(request.url.path)

    # --- the app --------------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(self.chat_path, self._chat, methods=["POST"]),
                *self.extra_routes(),
                # Anything else is recorded and refused, so a test sees a wrong path.
                Route("/{rest:path}", self._unknown, methods=["GET", "POST"]),
            ]
        )

    async def _unknown(self, request: Request) -> Response:
        self._record_path(request)
        return JSONResponse({"error": f"no such endpoint: {request.url.path}"}, status_code=404)

    async def _chat(self, request: Request) -> Response:
        self._record_path(request)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "The request body is not valid JSON."}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "The request body must be an object."}, status_code=400)
        credential = request.headers.get(self.key_header)
        with self._lock:
            self._requests.append(body)
            self._authorizations.append(credential)
            number = len(self._requests)
            script = self._scripts.popleft() if self._scripts else None
            delay = self._delay
        await self._sleep(delay)

        key = (credential or "").removeprefix(self.key_prefix)
        if self._api_key is not None and credential != f"{self.key_prefix}{self._api_key}":
            return self.error(Script("fail", status=401), key)
        if script is None:
            script = Script("reply", chunks=tuple(words(f"fake reply #{number}")))
        if script.kind == "fail":
            response = self.error(script, key)
            if script.retry_after is not None:
                response.headers["retry-after"] = f"{script.retry_after:g}"
            return response
        if script.kind == "raw":
            return Response(script.body, status_code=script.status, media_type=script.content_type)

        answer = Answer(
            body=body,
            number=number,
            chunks=script.chunks,
            prompt_tokens=script.prompt_tokens
            if script.prompt_tokens is not None
            else count_prompt_words(body),
            completion_tokens=script.completion_tokens
            if script.completion_tokens is not None
            else len("".join(script.chunks).split()),
            finish=script.finish,
        )
        if not self.streams(body):
            if script.fail_after is not None:
                # A non-streaming answer cut short: close without a complete body.
                return StreamingResponse(self._drop_after([]), media_type="application/json")
            return self.whole(answer)

        events = self.events(answer)
        if script.fail_after is not None:
            stream = self._drop_after(events.head + events.pieces[: script.fail_after])
        elif script.hold_after is not None:
            stream = self._hold(events.head, events.pieces[: script.hold_after], script.interval)
        else:
            stream = self._paced(events, script.interval)
        return StreamingResponse(self._recorded(number, stream), media_type=self.stream_media_type)

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

    async def _paced(self, events: Events, interval: float) -> AsyncIterator[str]:
        for event in events.head:
            yield event
        for piece in events.pieces:
            if interval:
                await self._sleep(interval)
            yield piece
        for event in events.tail:
            yield event

    async def _hold(
        self, head: list[str], pieces: list[str], interval: float
    ) -> AsyncIterator[str]:
        async for event in self._paced(Events(head, pieces, []), interval):
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


def words(text: str) -> list[str]:
    """Word pieces with their leading whitespace, so ``"".join(pieces) == text``."""
    return re.findall(r"\s*\S+|\s+", text)


def count_prompt_words(body: dict[str, Any]) -> int:
    """Words in every message content and in a top-level ``system`` (Anthropic's place)."""
    texts: list[str] = []
    system = body.get("system")
    for part in system if isinstance(system, list) else [system]:
        texts.append(_text(part))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict):
            content = message.get("content")
            parts = content if isinstance(content, list) else [content]
            texts.extend(_text(part) for part in parts)
    return sum(len(text.split()) for text in texts)


def _text(part: object) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    return ""


def sse(payload: dict[str, Any], event: str | None = None) -> str:
    """One server-sent event carrying ``payload`` as JSON."""
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {json.dumps(payload)}\n\n"
