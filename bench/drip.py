"""A dripping OpenAI-compatible provider for the concurrent-streams benchmark.

    python -m bench.drip [--pieces 100] [--drip 0.2]

Prints its base URL (``http://127.0.0.1:<port>/v1``) on one line and serves
until its standard input closes. A streamed chat completion gets ``--pieces``
word pieces (``piece_text(i)``), one every ``--drip`` seconds on a fixed
schedule (piece i at (i + 1) x drip after the request: a late wake-up is not
carried over to the next piece), as OpenAI's SSE chunks: a role chunk, the
pieces, a chunk with finish_reason "stop", the usage chunk when the request
asks for it (``stream_options.include_usage``), then ``data: [DONE]``. A
request that does not stream gets the whole text at once. A message that is
exactly ``warm`` (the benchmark's warm-up) gets one piece at once.

A bare asyncio server (HTTP/1.1, keep-alive, chunked responses): hundreds of
streams at once cost it little more than one timer and one write per piece.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

CREATED = 1_700_000_000
MODEL = "model"
WARM = "warm"


def piece_text(index: int) -> str:
    """The ``index``-th piece: no whitespace at its ends, so the reply is kept exactly."""
    return f"w{index}."


def expected_text(pieces: int) -> str:
    return "".join(piece_text(i) for i in range(pieces))


def _chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-drip",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "choices": choices,
        **extra,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def events(pieces: int, include_usage: bool) -> tuple[bytes, list[bytes], list[bytes]]:
    """(head, one event per piece, tail) of one streamed answer."""
    role = {"role": "assistant", "content": ""}
    head = _chunk([{"index": 0, "delta": role, "finish_reason": None}])
    body = [
        _chunk([{"index": 0, "delta": {"content": piece_text(i)}, "finish_reason": None}])
        for i in range(pieces)
    ]
    tail = [_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])]
    if include_usage:
        usage = {"prompt_tokens": 10, "completion_tokens": pieces, "total_tokens": pieces + 10}
        tail.append(_chunk([], usage=usage))
    tail.append(b"data: [DONE]\n\n")
    return head, body, tail


def _framed(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Drip:
    def __init__(self, pieces: int, drip: float) -> None:
        self.pieces = pieces
        self.drip = drip
        self.streams = 0  # streamed answers begun
        self.cache = {flag: events(pieces, flag) for flag in (False, True)}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                await self.answer(head.split(b" ", 2)[1], body, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def answer(self, path: bytes, body: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            request = json.loads(body) if body else {}
        except ValueError:
            request = {}
        if not path.endswith(b"/chat/completions"):
            data = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            writer.write(_whole(data.encode()))
            return
        if not request.get("stream"):
            text = expected_text(self.pieces)
            data = json.dumps(
                {
                    "id": "chatcmpl-drip",
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": MODEL,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": self.pieces},
                }
            )
            writer.write(_whole(data.encode()))
            return
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        head, pieces, tail = self.cache[include_usage]
        drip = self.drip
        messages = request.get("messages") or [{}]
        if messages[-1].get("content") == WARM:
            pieces, drip = pieces[:1], 0.0
        self.streams += 1
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n" + _framed(head)
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        for index, piece in enumerate(pieces):
            wait = started + (index + 1) * drip - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(_framed(piece))
            await writer.drain()
        writer.write(b"".join(_framed(event) for event in tail) + b"0\r\n\r\n")
        await writer.drain()


def _whole(data: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(data),
        data,
    )


async def serve(pieces: int, drip: float) -> None:
    drip_server = Drip(pieces, drip)
    server = await asyncio.start_server(drip_server.handle, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    # Until the benchmark closes our standard input (or exits).
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.drip")
    parser.add_argument("--pieces", type=int, default=100)
    parser.add_argument("--drip", type=float, default=0.2, help="seconds between pieces")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.pieces, args.drip))


if __name__ == "__main__":
    main()
