"""EventStreamResponse: a subscription's SSE events sent by the task that reads them.

Driven through the ASGI interface with a scripted subscription: what is sent,
in what order, the heartbeat, and how the subscription is closed however the
response ends (done, client gone, failed, cancelled).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from api.graphql.event_stream import EventStream, EventStreamResponse
from tests.support.graphql import GraphQLClient
from tests.support.streams import STREAM, sse_events

HEADERS = {"Content-Type": "text/event-stream"}
PING = ": ping\r\n\r\n"


class Subscription:
    """A scripted subscription: its events, what happened to it, when it closed."""

    def __init__(self, events: list[str], *, then: str = "end") -> None:
        self.script = events
        self.then = then  # "end", "wait" (for ever), "fail", or "wait" and "fail" when stopped
        self.log: list[str] = []
        self.waiting = asyncio.Event()
        self.closed = asyncio.Event()

    async def events(self) -> AsyncGenerator[str, None]:
        try:
            for event in self.script:
                yield event
            if self.then in ("wait", "fail when stopped"):
                self.waiting.set()
                await asyncio.Event().wait()
            if self.then == "fail":
                raise RuntimeError("a bug")
        except asyncio.CancelledError:
            self.log.append("cancelled")
            await asyncio.sleep(0.01)  # a save: awaited to its end, not cut short
            if self.then == "fail when stopped":
                raise RuntimeError("a bug in the save") from None
            self.log.append("saved")
            raise
        finally:
            self.log.append("events closed")

    async def aclose(self) -> None:
        self.log.append("subscription closed")
        self.closed.set()


class Client:
    """The ASGI side: records what is sent; ``leave()`` is the client going away."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.changed = asyncio.Condition()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        async with self.changed:
            self.changed.notify_all()

    async def until_sent(self, body: str) -> None:
        """Returns once exactly ``body`` has been sent."""
        async with self.changed:
            await self.changed.wait_for(lambda: self.body() == body)

    def leave(self) -> None:
        self.gone.set()

    def body(self) -> str:
        return "".join(m.get("body", b"").decode() for m in self.sent[1:])


class Clock:
    """The heartbeat's clock: an interval ends when the test says so."""

    def __init__(self) -> None:
        self.due: asyncio.Queue[None] = asyncio.Queue()
        self.intervals: list[float] = []

    async def tick(self, interval: float) -> None:
        self.intervals.append(interval)
        await self.due.get()


def response(
    subscription: Subscription, interval: float = 60.0, clock: Clock | None = None
) -> EventStreamResponse:
    stream = EventStream(subscription.events, subscription, PING, interval)
    if clock is not None:
        stream = dataclasses.replace(stream, tick=clock.tick)
    return EventStreamResponse(stream, status_code=200, headers=HEADERS)


async def test_events_go_out_in_order_then_the_end_and_the_subscription_is_closed() -> None:
    subscription = Subscription(["event: next\r\ndata: 1\r\n\r\n", "event: complete\r\n\r\n"])
    client = Client()

    await response(subscription)({"type": "http"}, client.receive, client.send)

    assert client.sent[0]["type"] == "http.response.start"
    assert client.sent[0]["status"] == 200
    assert (b"content-type", b"text/event-stream") in client.sent[0]["headers"]
    assert [(m["body"], m["more_body"]) for m in client.sent[1:]] == [
        (b"event: next\r\ndata: 1\r\n\r\n", True),
        (b"event: complete\r\n\r\n", True),
        (b"", False),
    ]
    assert subscription.log == ["events closed", "subscription closed"]


async def test_an_idle_stream_sends_a_heartbeat_every_interval() -> None:
    subscription = Subscription(["event: next\r\ndata: 1\r\n\r\n"], then="wait")
    client, clock = Client(), Clock()
    task = asyncio.create_task(
        response(subscription, interval=0.05, clock=clock)(
            {"type": "http"}, client.receive, client.send
        )
    )
    await subscription.waiting.wait()
    await client.until_sent("event: next\r\ndata: 1\r\n\r\n")
    for _ in range(2):  # two intervals go by
        clock.due.put_nowait(None)
    await client.until_sent("event: next\r\ndata: 1\r\n\r\n" + PING * 2)
    client.leave()
    await asyncio.wait_for(task, 5)

    assert client.body() == "event: next\r\ndata: 1\r\n\r\n" + PING * 2
    # Each wait was one interval, and the third was under way when the client left.
    assert clock.intervals == [0.05, 0.05, 0.05]
    assert subscription.log == ["cancelled", "saved", "events closed", "subscription closed"]


def test_the_heartbeat_waits_on_the_event_loops_clock_by_default() -> None:
    stream = EventStream(Subscription([]).events, Subscription([]), PING, 15.0)
    assert stream.tick is asyncio.sleep


async def test_a_client_that_goes_away_stops_the_subscription_which_saves_first() -> None:
    subscription = Subscription(["event: next\r\ndata: 1\r\n\r\n"], then="wait")
    client = Client()
    task = asyncio.create_task(
        response(subscription)({"type": "http"}, client.receive, client.send)
    )
    await subscription.waiting.wait()

    client.leave()
    await asyncio.wait_for(task, 5)

    assert subscription.log == ["cancelled", "saved", "events closed", "subscription closed"]
    assert client.body() == "event: next\r\ndata: 1\r\n\r\n"  # no end: the client is gone


async def test_a_cancelled_response_still_lets_the_subscription_save() -> None:
    # Shutdown cancels the request's task: the save under way is not cut short.
    subscription = Subscription([], then="wait")
    client = Client()
    task = asyncio.create_task(
        response(subscription)({"type": "http"}, client.receive, client.send)
    )
    await subscription.waiting.wait()

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The close goes on in a task of its own, shielded from the cancellation.
    await asyncio.wait_for(subscription.closed.wait(), 5)

    assert subscription.log == ["cancelled", "saved", "events closed", "subscription closed"]


async def test_a_failing_subscription_fails_the_response_once_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    subscription = Subscription(["event: next\r\ndata: 1\r\n\r\n"], then="fail")
    client = Client()

    with pytest.raises(RuntimeError, match="a bug"):
        await response(subscription)({"type": "http"}, client.receive, client.send)

    assert subscription.log == ["events closed", "subscription closed"]
    assert client.body() == "event: next\r\ndata: 1\r\n\r\n"
    assert [r for r in caplog.records if r.name == "api.graphql.event_stream"] == []


async def test_a_subscription_failing_as_it_stops_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Nobody is left to raise it to: the client has gone.
    subscription = Subscription([], then="fail when stopped")
    client = Client()
    task = asyncio.create_task(
        response(subscription)({"type": "http"}, client.receive, client.send)
    )
    await subscription.waiting.wait()

    client.leave()
    await asyncio.wait_for(task, 5)

    assert subscription.log == ["cancelled", "events closed", "subscription closed"]
    [record] = [r for r in caplog.records if r.name == "api.graphql.event_stream"]
    assert (record.levelname, record.getMessage()) == (
        "ERROR",
        "a subscription failed as its stream stopped",
    )
    assert record.exc_info is not None and str(record.exc_info[1]) == "a bug in the save"


async def test_a_subscription_over_sse_gets_heartbeats_while_idle(
    app: Starlette, gql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline echo, slowed down: the stream is idle between its pieces.
    view = next(r.endpoint for r in app.routes if getattr(r, "path", "") == "/graphql")
    monkeypatch.setattr(view._stream_transport_map["sse"], "heartbeat_interval", 0.01)
    monkeypatch.setattr(app.state.services.registry._mounts["offline"], "stream_delay", 0.03)
    created = await gql("mutation { createSession(input: {}) { session { id } errors { code } } }")
    sid = created["createSession"]["session"]["id"]

    response = await gql.http.post(
        "/graphql",
        json={"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "a b"}}},
        headers={"Accept": "text/event-stream"},
        timeout=httpx.Timeout(10),
    )

    assert PING in response.text
    events = sse_events(response.text)
    assert [name for name, _ in events][-1] == "complete"
    *deltas, reply = [e["data"]["messageStream"] for _, e in events[1:-1]]
    assert {d["__typename"] for d in deltas} == {"StreamDelta"}
    assert "".join(d["delta"] for d in deltas) == reply["assistantTurn"]["content"]
