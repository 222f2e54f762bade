"""A subscription answered as Server-Sent Events (graphql-sse), each event sent
by the task that reads it.

Strawberry streams a subscription over SSE through a queue of one: a task
reads the subscription and puts each encoded event on the queue, another puts
a heartbeat there every 15 s, and the response's task takes each item off the
queue and sends it (while Starlette's fourth task waits for the client to go
away). Every event of a streamed reply so paid a put, a get and one more task
switch than it needed: a quarter of what the server spent a piece outside
LiteLLM (``python -m bench.stream_events``).

Here one task (the pump) reads the subscription and sends each event as it
comes out; the response's own task waits for the pump to end, for the client
to go away, or for the next heartbeat (``: ping`` every 15 s, as Strawberry
sends it). Sends never overlap: the pump and the heartbeat take turns under a
lock. However the response ends — the stream's end, the client gone, the
request cancelled (shutdown) — the pump is stopped and the subscription
closed in a task of its own, so a cancellation cannot cut that short: closing
a streamed reply saves what was received (docs/architecture.md#a-reply-cut-off-is-saved).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

log = logging.getLogger(__name__)


class Closable(Protocol):
    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class EventStream:
    """What to send: the encoded events (``events()``, each one SSE event, the
    last ``complete``), the subscription behind them (closed with the
    response), and the heartbeat to send every ``interval`` seconds."""

    events: Callable[[], AsyncGenerator[str, None]]
    subscription: Closable
    heartbeat: str
    interval: float
    # Waits out one interval before a heartbeat: the event loop's clock, or a
    # test's, which decides exactly when each heartbeat is due.
    tick: Callable[[float], Awaitable[None]] = asyncio.sleep


class EventStreamResponse(Response):
    """An ``EventStream`` as the body of an HTTP response (see the module docstring)."""

    def __init__(
        self, stream: EventStream, *, status_code: int, headers: Mapping[str, str]
    ) -> None:
        self.stream = stream
        self.events = stream.events()
        self.status_code = status_code
        self.background = None
        self.failed_here = False  # the pump's failure was raised by __call__
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        turn = asyncio.Lock()
        pump = asyncio.ensure_future(self._pump(send, turn))
        try:
            gone = asyncio.ensure_future(_disconnected(receive))
            try:
                body = self.stream.heartbeat.encode()
                ping = {"type": "http.response.body", "body": body, "more_body": True}
                while True:
                    tick = asyncio.ensure_future(self.stream.tick(self.stream.interval))
                    try:
                        done, _ = await asyncio.wait(
                            (pump, gone, tick), return_when=asyncio.FIRST_COMPLETED
                        )
                    finally:
                        tick.cancel()
                    if pump in done:
                        self.failed_here = True
                        pump.result()  # its failure is the response's
                        return
                    if gone in done:
                        return
                    async with turn:
                        await send(ping)
            finally:
                gone.cancel()
        finally:
            pump.cancel()
            await asyncio.shield(asyncio.ensure_future(self._close(pump)))

    async def _pump(self, send: Send, turn: asyncio.Lock) -> None:
        async for text in self.events:
            async with turn:
                await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
        async with turn:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _close(self, pump: asyncio.Future[None]) -> None:
        """Wait for the pump (stopped: its subscription saves what it has),
        then close the events and the subscription, should either be left open."""
        await asyncio.wait({pump})
        failure = None if pump.cancelled() else pump.exception()
        if failure is not None and not self.failed_here:
            # Stopped (the client gone, shutdown) and failed while stopping: a
            # bug nobody else will report.
            log.error("a subscription failed as its stream stopped", exc_info=failure)
        try:
            await self.events.aclose()
        finally:
            await self.stream.subscription.aclose()


async def _disconnected(receive: Receive) -> None:
    """Returns once the client has gone away (the request body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
