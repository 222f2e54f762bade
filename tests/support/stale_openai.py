"""An OpenAI-compatible chat server whose kept-alive connections go stale.

Raw asyncio on 127.0.0.1 (no framework, which would hide the connections): it
answers a connection's first request (a whole chat completion, or an SSE stream
when ``"stream": true``; both with Content-Length and keep-alive), and closes
the socket without a word when a SECOND request arrives on that connection —
what a client sees when it sends on a pooled connection just as the server
closes it for being idle (uvicorn's 5 s keep-alive). New connections answer
normally. Start it on the test's event loop::

    async with StaleOpenAI() as server:
        server.base_url      # "http://127.0.0.1:PORT/v1"
        server.attempts      # requests received (answered or not)
        server.answered      # requests answered
        server.connections   # connections accepted
"""

from __future__ import annotations

import asyncio
import json
from types import TracebackType
from typing import Any, Self

CREATED = 1_700_000_000


class StaleOpenAI:
    def __init__(self, text: str = "Kyoto") -> None:
        self.text = text
        self.attempts = 0
        self.answered = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()  # a handler waiting for a request then sees the end
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        served = 0
        try:
            while True:
                body = await _read_request(reader)
                if body is None:
                    return  # the client closed the connection
                self.attempts += 1
                served += 1
                if served > 1:
                    return  # stale: close without answering (finally)
                writer.write(self._answer(body))
                await writer.drain()
                self.answered += 1
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            self._handlers.discard(handler)
            writer.close()

    def _answer(self, body: dict[str, Any]) -> bytes:
        usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        if body.get("stream"):
            chunk: dict[str, Any] = {"id": "chatcmpl-stale", "object": "chat.completion.chunk"}
            chunk |= {"created": CREATED, "model": body.get("model", "")}
            events = [
                {**chunk, "choices": [{"index": 0, "delta": {"content": self.text}}]},
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {**chunk, "choices": [], "usage": usage},
            ]
            payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            kind = "text/event-stream"
        else:
            message = {"role": "assistant", "content": self.text}
            payload = json.dumps(
                {
                    "id": "chatcmpl-stale",
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": usage,
                }
            )
            kind = "application/json"
        data = payload.encode()
        head = (
            "HTTP/1.1 200 OK\r\n"
            f"Content-Type: {kind}\r\n"
            f"Content-Length: {len(data)}\r\n"
            "Connection: keep-alive\r\n\r\n"
        )
        return head.encode() + data


async def _read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next request's JSON body, or None when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b"{}"
    parsed: dict[str, Any] = json.loads(body)
    return parsed
