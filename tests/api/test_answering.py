"""One provider call per idempotency key, however many requests carry it at once.

The same key sent again while the first request still waits for the provider
(a client that gave up waiting and tried again, graphql-sse sending its POST
again after a broken connection) waits for that answer and returns it: one
user turn, one reply, one provider call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.applications import Starlette

from api.graphql.core import ids
from api.services import accounts, answering, chat
from api.store import claims
from tests.support.databases import TEST_DB
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send
from tests.support.queries import count_statements
from tests.support.streams import merged, stream_ws

TURNS = """query($s: ID!) { session(id: $s) { lastSequenceNumber
  turns(first: 10) { edges { node { sequenceNumber role content } } } } }"""


async def lab_session(gql: GraphQLClient) -> str:
    sid: str = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    return sid


async def saved(gql: GraphQLClient, sid: str) -> list[tuple[int, str, str]]:
    session = (await gql(TURNS, s=sid))["session"]
    found = [e["node"] for e in session["turns"]["edges"]]
    assert session["lastSequenceNumber"] == len(found)
    return [(t["sequenceNumber"], t["role"], t["content"]) for t in found]


def exchange(result: dict[str, Any]) -> tuple[Any, ...]:
    return (
        result["userTurn"]["sequenceNumber"],
        result["assistantTurn"] and result["assistantTurn"]["content"],
        [e["code"] for e in result["errors"]],
    )


async def test_sends_with_one_key_at_once_ask_the_provider_once(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.delay(0.5)  # the others arrive while the first waits
    fake_openai.reply("Once.")

    results = await asyncio.gather(*(send(gql, sid, "Hi", idempotencyKey="k") for _ in range(4)))

    assert [exchange(r) for r in results] == [(1, "Once.", [])] * 4
    assert await saved(gql, sid) == [(1, "USER", "Hi"), (2, "ASSISTANT", "Once.")]
    assert len(fake_openai.requests) == 1


async def test_a_send_during_a_stream_with_its_key_returns_the_streamed_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Stre", "amed."], interval=0.3)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hi", "idempotencyKey": "k"})
        first = await ws.next_event("1")  # the user's turn: the stream is under way
        sent = await send(gql, sid, "Hi", idempotencyKey="k")
        streamed = (await ws.events("1"))["1"]

    assert first["__typename"] == "StreamUserTurn"
    assert [e["__typename"] for e in merged(streamed)] == [
        "StreamDelta",
        "StreamAssistantTurn",
    ]
    assert merged(streamed)[0]["delta"] == "Streamed."
    assert exchange(sent) == (1, "Streamed.", [])
    assert sent["assistantTurn"]["id"] == streamed[-1]["assistantTurn"]["id"]
    assert await saved(gql, sid) == [(1, "USER", "Hi"), (2, "ASSISTANT", "Streamed.")]
    assert len(fake_openai.requests) == 1


async def test_a_stream_during_a_send_with_its_key_replays_the_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.delay(0.5)
    fake_openai.reply("Sent.")

    sending = asyncio.create_task(send(gql, sid, "Hi", idempotencyKey="k"))
    while not fake_openai.requests:  # the send is waiting for the provider
        await asyncio.sleep(0.01)
    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hi", "idempotencyKey": "k"})
        streamed = (await ws.events("1"))["1"]
    sent = await sending

    assert [e["__typename"] for e in streamed] == [
        "StreamUserTurn",
        "StreamDelta",
        "StreamAssistantTurn",
    ]
    assert streamed[1] == {"__typename": "StreamDelta", "delta": "Sent."}
    assert streamed[-1]["assistantTurn"]["id"] == sent["assistantTurn"]["id"]
    assert len(fake_openai.requests) == 1


async def test_those_waiting_on_a_failed_try_get_its_error_and_a_later_try_asks_again(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.delay(0.5)
    fake_openai.fail(429)

    failed = await asyncio.gather(*(send(gql, sid, "Hi", idempotencyKey="k") for _ in range(3)))
    calls_then = len(fake_openai.requests)
    fake_openai.delay(0)
    fake_openai.reply("Now.")
    retried = await send(gql, sid, "Hi", idempotencyKey="k")

    assert [exchange(r) for r in failed] == [(1, None, ["PROVIDER_RATE_LIMIT"])] * 3
    assert calls_then == 1
    assert exchange(retried) == (1, "Now.", [])
    assert await saved(gql, sid) == [(1, "USER", "Hi"), (2, "ASSISTANT", "Now.")]
    assert len(fake_openai.requests) == 2


async def test_a_claim_left_by_a_process_that_died_is_taken_over_once_it_lapses(
    gql: GraphQLClient, fake_openai: FakeOpenAI, monkeypatch: Any
) -> None:
    sid = await lab_session(gql)
    fake_openai.fail(500)
    first = await send(gql, sid, "Hi", idempotencyKey="k")  # the user's turn, unanswered
    # A request took the claim, then its process died: nobody pushes it on.
    turn_id = ids.decode(first["userTurn"]["id"], "Turn", field="id")
    now = answering._now()
    await claims.take(turn_id, "gone", now=now, until=now + 300)
    monkeypatch.setattr(answering, "POLL_SECONDS", 0.02)
    fake_openai.reply("Taken over.")

    retried = await send(gql, sid, "Hi", idempotencyKey="k")

    assert exchange(first) == (1, None, ["PROVIDER_ERROR"])
    assert exchange(retried) == (1, "Taken over.", [])
    assert answering._now() >= now + 300  # it waited for the claim to lapse
    assert len(fake_openai.requests) == 2


async def test_a_turn_sent_with_a_key_is_claimed_in_the_write_that_saves_it(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    # A request sending the key again never finds the turn without its claim,
    # and the claim costs no statement (nor, on PostgreSQL, commit) of its own.
    sid = await lab_session(gql)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Hello", idempotency_key="k-1")

    prepared = await chat.prepare(app.state.services, actor, message, operation="sendMessage")

    claim = await claims.read(prepared.user_turn.id)
    assert claim is not None
    assert claim.holder == prepared.claimed
    assert claim.failure is None
    fake_openai.reply("Hi")
    with count_statements() as statements:
        exchange = await chat.answer(app.state.services, prepared)
    assert exchange.assistant_turn is not None
    assert exchange.assistant_turn.content == "Hi"
    assert len(fake_openai.requests) == 1
    assert await claims.read(prepared.user_turn.id) is None
    # The reply (sequence, the first-reply check, the insert) and the claim's end.
    assert [s.split()[0] for s in statements] == ["UPDATE", "SELECT", "INSERT", "DELETE"], (
        statements
    )


class Started:
    """A stand-in for the early provider request ``prepare`` starts (``early``)."""

    def __init__(self, log: list[str], ref: Any, context: Any) -> None:
        self.ref, self.context, self.log = ref, context, log
        log.append("started")

    async def close(self) -> None:
        self.log.append("closed")


async def test_a_new_turn_starts_the_early_request_as_it_commits_a_repeated_key_does_not(
    gql: GraphQLClient, app: Starlette
) -> None:
    sid = await lab_session(gql)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Hello", idempotency_key="k-9")
    log: list[str] = []

    def start(ref: Any, context: Any) -> Started:
        # Called while the turn's write commits: its statements have run.
        return Started(log, ref, context)

    services = app.state.services
    prepared = await chat.prepare(services, actor, message, operation="sendMessage", early=start)
    assert log == ["started"]
    assert isinstance(prepared.early, Started)
    assert (prepared.early.ref, prepared.early.context) == (prepared.ref, prepared.context)
    assert prepared.user_turn.sequence_number == 1

    again = await chat.prepare(services, actor, message, operation="sendMessage", early=start)
    assert again.repeated
    assert again.early is None
    assert log == ["started"]  # the key's turn is answered (or waited for), never asked twice
    await prepared.early.close()


async def test_a_write_that_fails_after_the_early_start_closes_it(
    gql: GraphQLClient, app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session is switched to the message's model after the turn's write;
    # should that fail, the request started for the turn is closed, not left running.
    sid = await lab_session(gql)
    actor = await accounts.local_actor()
    message = chat.Message(
        ids.decode(sid, "Session", field="id"), "Hello", model="offline/echo", idempotency_key="k-8"
    )
    log: list[str] = []

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(chat.sessions, "configure", broken)
    with pytest.raises(RuntimeError, match="went away"):
        await chat.prepare(
            app.state.services,
            actor,
            message,
            operation="sendMessage",
            early=lambda ref, context: Started(log, ref, context),
        )
    assert log == ["started", "closed"]


async def test_a_key_is_looked_up_in_the_statement_that_reads_the_session(
    gql: GraphQLClient, app: Starlette
) -> None:
    # Before anything is written, a message sent with a key needs its session,
    # the turn its key was sent with already, if any, and the session's newest
    # turns (the window): one statement, not three.
    sid = await lab_session(gql)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Hello", idempotency_key="k-7")
    services = app.state.services

    with count_statements() as first:
        prepared = await chat.prepare(services, actor, message, operation="sendMessage")
    with count_statements() as again:
        repeated = await chat.prepare(services, actor, message, operation="sendMessage")

    # The session with the key's turn (none yet) and the window; the sequence,
    # the turn and its claim (on PostgreSQL one statement: ``turns.append``).
    writes = ["WITH"] if TEST_DB == "postgres" else ["UPDATE", "INSERT", "INSERT"]
    assert [s.split()[0] for s in first] == ["SELECT", *writes], first
    assert all(f in first[0] for f in ("FROM session", "idempotency_key = ", "FROM turn")), first
    # The session with the key's turn (found); that turn, the window before it
    # and its reply.
    assert [s.split()[0] for s in again] == ["SELECT"] * 4, again
    assert (repeated.repeated, repeated.user_turn) == (True, prepared.user_turn)
