"""What Smriti itself spends per streamed piece, LiteLLM and uvicorn left out.

    python -m bench.stream_events              # SQLite, 100 streams x 100 pieces x 0.05 s, 3 rounds
    python -m bench.stream_events --db postgres --streams 200 --pieces 50
    python -m bench.stream_events --profile /tmp/events.prof   # cProfile (CPU time) of the rounds

``bench.concurrent_streams`` measures a real ``smriti serve`` beside the LiteLLM
floor; most of either's CPU a piece is LiteLLM's and uvicorn's. This one runs
the app in this process (``create_app``) with the provider mounted as a
transport that drips ``StreamChunk``s itself (no LiteLLM, no HTTP to a
provider), and drives it as an ASGI application (no uvicorn, no sockets): N
``messageStream``s over graphql-sse (``Accept: text/event-stream``, the web
UI's transport) start at once. What is left is Smriti's own path a piece —
the stream loop, the subscription's event, Strawberry's SSE framing, the
Starlette response — plus the drip's timer (``--drip-only`` measures that alone).

Printed per round: the process's CPU (``time.process_time``) per piece and per
event, and the events sent; every stream's text is checked whole and every
reply read back stored (STOP). Rounds alternate nothing: compare two commits by
running each a few times, minutes apart, and say the load average.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import cProfile
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.app import create_app
from api.domain.types import ChatMessage, Finish, FinishReason, ModelParameters, Usage
from api.providers import ModelRef, StreamChunk
from api.providers.config import default_config
from api.providers.registry import ProviderRegistry
from api.settings import Settings
from bench.databases import temporary_database

SUBSCRIPTION = (
    "subscription($input: SendMessageInput!) { messageStream(input: $input) { __typename "
    "... on StreamDelta { delta } ... on StreamAssistantTurn { assistantTurn { sequenceNumber } } "
    "... on StreamFailed { errors { code message } } } }"
)
CREATE = "mutation { createSession(input: {}) { session { id } errors { code } } }"
STORED = (
    "query($s: ID!) { session(id: $s) { turns(last: 1) { edges { node { role content "
    "finishReason } } } } }"
)
FINISHED = Finish(FinishReason.STOP)


class DripTransport:
    """The offline provider's transport, answering ``pieces`` pieces ``drip`` apart."""

    def __init__(self, pieces: int, drip: float) -> None:
        self.pieces, self.drip = pieces, drip

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> AsyncIterator[StreamChunk]:
        for index in range(self.pieces):
            await asyncio.sleep(self.drip)
            yield StreamChunk(delta=f"w{index}.")
        yield StreamChunk(delta="", usage=Usage(10, self.pieces, 0.0), finish=FINISHED)

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        return len(text) // 4 + 1

    def context_window(self, ref: ModelRef) -> int:
        return 100_000

    def output_limit(self, ref: ModelRef) -> int:
        return 1024


def expected_text(pieces: int) -> str:
    return "".join(f"w{index}." for index in range(pieces))


async def call(app: Any, body: dict[str, Any], *, stream: bool = False) -> list[bytes]:
    """One POST /graphql through the ASGI interface; the response body's chunks."""
    payload = json.dumps(body).encode()
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"accept", b"text/event-stream" if stream else b"application/json"),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent = False
    done = asyncio.Event()
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            if message.get("body"):
                chunks.append(message["body"])
            if not message.get("more_body", False):
                done.set()

    await app(scope, receive, send)
    done.set()
    return chunks


def events_of(chunks: list[bytes]) -> list[dict[str, Any]]:
    text = b"".join(chunks).decode()
    found = []
    for block in text.split("\r\n\r\n"):
        for line in block.split("\r\n"):
            if line.startswith("data: ") and len(line) > 6:
                found.append(json.loads(line[6:]))
    return found


@dataclass
class Round:
    cpu_seconds: float
    wall_seconds: float
    pieces: int
    events: int
    event_bytes: int


async def one_round(
    app: Any, streams: int, pieces: int, profiler: cProfile.Profile | None
) -> Round:
    sessions = []
    for _ in range(streams):
        answer = json.loads(b"".join(await call(app, {"query": CREATE})))
        sessions.append(answer["data"]["createSession"]["session"]["id"])
    await asyncio.sleep(0.5)  # the creations' after-work

    async def one(session: str, number: int) -> list[bytes]:
        variables = {"input": {"sessionId": session, "content": f"message {number}"}}
        return await call(app, {"query": SUBSCRIPTION, "variables": variables}, stream=True)

    cpu, wall = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    bodies = await asyncio.gather(*(one(s, n) for n, s in enumerate(sessions)))
    if profiler is not None:
        profiler.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    expected = expected_text(pieces)
    events = 0
    size = 0
    for chunks in bodies:
        found = events_of(chunks)
        deltas = [e["data"]["messageStream"] for e in found if e.get("data")]
        text = "".join(d["delta"] for d in deltas if d["__typename"] == "StreamDelta")
        if text != expected:
            raise SystemExit(f"a stream's text differs: {text[:80]!r}…")
        if deltas[-1]["__typename"] != "StreamAssistantTurn":
            raise SystemExit(f"a stream did not end with its reply: {deltas[-1]}")
        events += len(found)
        size += sum(len(c) for c in chunks)
    for session in sessions:
        answer = json.loads(
            b"".join(await call(app, {"query": STORED, "variables": {"s": session}}))
        )
        node = answer["data"]["session"]["turns"]["edges"][-1]["node"]
        if node != {"role": "ASSISTANT", "content": expected, "finishReason": "STOP"}:
            raise SystemExit(f"a reply was not stored whole: {node}")
    return Round(cpu, wall, streams * pieces, events, size)


async def drip_only(streams: int, pieces: int, drip: float) -> float:
    """CPU a piece of the drip alone (its timer and chunk): part of every round's figure."""
    transport = DripTransport(pieces, drip)
    ref = ModelRef("offline/echo", "offline", "echo", "offline/echo")

    async def drain() -> None:
        async for _ in transport.stream([], ref, api_key=None):
            pass

    cpu = time.process_time()
    await asyncio.gather(*(drain() for _ in range(streams)))
    return (time.process_time() - cpu) / (streams * pieces)


async def run(args: argparse.Namespace) -> int:
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    async with AsyncExitStack() as stack:
        database_url = await stack.enter_async_context(temporary_database(args.db))
        registry = ProviderRegistry(
            default_config(), env={}, mounts={"offline": DripTransport(args.pieces, args.drip)}
        )
        settings = Settings(
            database_url=database_url,
            providers_file=None,
            title_sessions=False,
            preload_providers=False,
            allowed_hosts=("127.0.0.1",),
        )
        app = create_app(settings, registry=registry)
        await stack.enter_async_context(app.router.lifespan_context(app))
        await one_round(app, 5, args.pieces, None)  # warm-up
        drip_cost = await drip_only(args.streams, args.pieces, args.drip)
        per_piece = []
        for number in range(args.rounds):
            result = await one_round(app, args.streams, args.pieces, profiler)
            ms_piece = 1000 * result.cpu_seconds / result.pieces
            per_piece.append(ms_piece)
            print(
                f"round {number + 1}: {args.streams} streams x {args.pieces} pieces: "
                f"CPU {result.cpu_seconds:.2f} s in {result.wall_seconds:.1f} s, "
                f"{ms_piece:.3f} ms/piece, {1000 * result.cpu_seconds / result.events:.3f} "
                f"ms/event ({result.events} events, {result.event_bytes / result.events:.0f} "
                f"bytes/event); load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        print(
            f"median {statistics.median(per_piece):.3f} ms/piece (the drip alone "
            f"{1000 * drip_cost:.3f}); Smriti's own ~"
            f"{statistics.median(per_piece) - 1000 * drip_cost:.3f} ms/piece"
        )
    if profiler is not None:
        profiler.dump_stats(args.profile)
        print(f"profile: {args.profile}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.stream_events", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--pieces", type=int, default=100)
    parser.add_argument("--drip", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=Path)
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
