"""messageStream through the real app in process: graphql-transport-ws and SSE.

The `lab` provider is the fake OpenAI server, reached by LiteLLM over HTTP, so
"the provider stream was closed" is what that server saw on its socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sys
from typing import Any

import pytest
from httpx_ws import WebSocketDisconnect
from starlette.applications import Starlette

from api.app import create_app
from api.errors import ConfigError
from api.graphql.core import ids
from api.services import accounts, chat, streaming
from api.settings import Settings
from api.store import claims
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import (
    TURN,
    checkpoint,
    create_session,
    create_space,
    mount,
    preview,
    send,
)
from tests.support.streams import (
    STREAM,
    graphql_ws,
    merged,
    sse_events,
    stream_ws,
    wait_until,
    ws_client,
)

SAVED = f"""query($id: ID!) {{ session(id: $id) {{ lastSequenceNumber
  turns(first: 100) {{ edges {{ node {{ {TURN} }} }} }} }} }}"""
NO_USAGE = {"promptTokens": None, "completionTokens": None, "cost": None}


async def read_turns(gql: GraphQLClient, sid: str) -> tuple[int, list[dict[str, Any]]]:
    data = await gql(SAVED, id=sid)
    session = data["session"]
    return session["lastSequenceNumber"], [edge["node"] for edge in session["turns"]["edges"]]


async def saved_turns(gql: GraphQLClient, sid: str) -> list[dict[str, Any]]:
    last, turns = await read_turns(gql, sid)
    assert last == len(turns)
    return turns


def turn(
    role: str,
    content: str,
    sequence: int,
    *,
    reply_to: int | None = None,
    interrupted: bool = False,
    usage: dict[str, Any] = NO_USAGE,
    model: str = "my-model",
) -> dict[str, Any]:
    """A Turn as TURN selects it, without its id."""
    return {
        "role": role,
        "content": content,
        "sequenceNumber": sequence,
        "provider": "lab" if model == "my-model" else "offline",
        "model": model,
        "interrupted": interrupted,
        "replyToSequence": reply_to,
        "usage": usage,
    }


def without_id(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "id"}


def delta(text: str) -> dict[str, Any]:
    return {"__typename": "StreamDelta", "delta": text}


async def lab_session(gql: GraphQLClient, **fields: Any) -> str:
    sid: str = (await create_session(gql, model="lab/my-model", title="t", **fields))["id"]
    return sid


# --- the stream ---------------------------------------------------------------


async def test_user_turn_first_then_each_piece_then_the_saved_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    planned = await preview(gql, sid, "Where do we start?")
    fake_openai.stream_chunks(["Sydney", ", then", " Melbourne."])

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Where do we start?"})
        events = (await ws.events("1"))["1"]

    saved = await saved_turns(gql, sid)
    assert [without_id(t) for t in saved] == [
        turn("USER", "Where do we start?", 1),
        turn(
            "ASSISTANT",
            "Sydney, then Melbourne.",
            2,
            reply_to=1,
            # The fake counts words: 4 in the prompt, 3 in the reply.
            usage={"promptTokens": 4, "completionTokens": 3, "cost": None},
        ),
    ]
    # The pieces in order, joined where they went out together (see
    # test_pieces_waiting_together_go_out_as_one_delta).
    assert merged(events) == [
        {"__typename": "StreamUserTurn", "userTurn": saved[0], "context": planned},
        delta("Sydney, then Melbourne."),
        {"__typename": "StreamAssistantTurn", "assistantTurn": saved[1]},
    ]
    assert fake_openai.requests[0]["stream"] is True
    assert fake_openai.requests[0]["messages"] == [
        {"role": "user", "content": "Where do we start?"}
    ]
    assert fake_openai.stream_outcomes == {1: "finished"}


async def test_the_context_is_resolved_as_for_send_message(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    # Given a space with two checkpoints, the first one mounted
    space_id = await create_space(gql)
    sid = await lab_session(gql, spaceId=space_id)
    await send(gql, sid, "Plan Australia.")
    australia = await checkpoint(gql, sid, "Australia", decisions=["Fly into Sydney"])
    await send(gql, sid, "Add New Zealand.")
    await checkpoint(gql, sid, "New Zealand", decisions=["Add Queenstown"])
    await mount(gql, sid, australia["id"])
    planned = await preview(gql, sid, "What should we pack?")

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "What should we pack?"})
        events = (await ws.events("1"))["1"]

    # Then the stream used, showed and sent exactly the previewed context
    assert events[0]["context"] == planned
    assert planned["mode"] == "MOUNTED"
    assert planned["boundary"] == 4
    assert [c["title"] for c in planned["checkpoints"]] == ["Australia"]
    assert fake_openai.requests[-1]["messages"] == planned["messages"]
    assert "Queenstown" not in str(fake_openai.requests[-1])
    assert events[0]["userTurn"]["sequenceNumber"] == 5
    assert events[-1]["assistantTurn"]["sequenceNumber"] == 6


async def test_the_offline_provider_streams_its_answer(gql: GraphQLClient, app: Starlette) -> None:
    sid = (await create_session(gql, title="t"))["id"]  # offline/echo, the default

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hello there"})
        events = (await ws.events("1"))["1"]

    answer = (
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)\n"
        "Checkpoints (0): none\n"
        "Earlier turns: 0 (0 from the user, 0 from the assistant)\n"
        "You asked: Hello there"
    )
    # Word by word from the provider; its words come at once, so they are
    # waiting together and go out joined.
    assert merged(events)[1] == delta(answer)
    reply = events[-1]["assistantTurn"]
    assert (reply["role"], reply["content"], reply["sequenceNumber"]) == (
        "ASSISTANT",
        answer,
        2,
    )
    assert (reply["provider"], reply["model"], reply["interrupted"]) == (
        "offline",
        "echo",
        False,
    )
    assert reply["usage"]["promptTokens"] > 0
    assert reply["usage"]["completionTokens"] > 0


# --- stopping -----------------------------------------------------------------


async def test_completing_the_subscription_closes_the_provider_stream_and_keeps_the_pieces(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    # The provider sends two pieces, then keeps the request open.
    fake_openai.stream_chunks(["The answer", " is", " forty", "-two."], hold_after=2)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "What is it?"})
        first = await ws.next_event("1")
        await ws.deltas_until("1", "The answer is")
        await ws.complete("1")

        # The provider's HTTP request was closed by Smriti, promptly
        assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
        # and what the user saw is saved, marked interrupted
        saved = await wait_until(lambda: _turns_when(gql, sid, 2))
        assert [without_id(t) for t in saved] == [
            turn("USER", "What is it?", 1),
            turn("ASSISTANT", "The answer is", 2, reply_to=1, interrupted=True),
        ]
        assert first["userTurn"] == saved[0]
        # Nothing more is sent for the stopped operation; the connection still works.
        fake_openai.stream_chunks(["Still", " here."])
        await ws.subscribe("2", {"sessionId": sid, "content": "Are you there?"})
        events = (await ws.events("2"))["2"]

    assert events[-1]["assistantTurn"]["content"] == "Still here."
    assert events[-1]["assistantTurn"]["sequenceNumber"] == 4


async def test_closing_the_websocket_stops_the_stream_the_same_way(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Half", " a", " thought"], hold_after=1)

    async with ws_client(app) as http, graphql_ws(http) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Think."})
        await ws.next_event("1")
        assert await ws.next_event("1") == delta("Half")
    # the connection is closed here, without a `complete`

    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
    saved = await wait_until(lambda: _turns_when(gql, sid, 2))
    assert without_id(saved[1]) == turn("ASSISTANT", "Half", 2, reply_to=1, interrupted=True)


async def test_stopping_before_the_first_piece_saves_no_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Never", " sent"], hold_after=0)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Anyone?"})
        await ws.next_event("1")
        await wait_until(lambda: len(fake_openai.requests) == 1)
        await ws.complete("1")

    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
    await gql.drain()
    assert [without_id(t) for t in await saved_turns(gql, sid)] == [turn("USER", "Anyone?", 1)]


async def test_closing_the_stream_between_pieces_closes_the_provider_request(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    # Closing while no read is in progress: the provider request is closed by
    # the transport itself (a cancelled read would close it on its own).
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["One", " two", " three"], hold_after=2)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Count")

    events = streaming.stream_message(app.state.services, actor, message)
    assert isinstance(await anext(events), streaming.UserTurnSaved)
    text = ""
    while text != "One two":  # one Delta, or two: as the pieces arrived
        piece = await anext(events)
        assert isinstance(piece, streaming.Delta) and "One two".startswith(text + piece.text)
        text += piece.text
    await events.aclose()

    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
    saved = await saved_turns(gql, sid)
    assert without_id(saved[1]) == turn("ASSISTANT", "One two", 2, reply_to=1, interrupted=True)


# --- pieces waiting together --------------------------------------------------


def _one_write(pieces: list[str]) -> str:
    """An OpenAI stream whose every event is in one body: one write, one read."""

    def event(choices: list[dict[str, Any]], **extra: Any) -> str:
        chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1}
        return "data: " + json.dumps({**chunk, "model": "my-model", "choices": choices, **extra})

    events = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}}])]
    events += [event([{"index": 0, "delta": {"content": p}}]) for p in pieces]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    usage = {"prompt_tokens": 3, "completion_tokens": len(pieces), "total_tokens": 8}
    events.append(event([], usage=usage))
    return "\n\n".join([*events, "data: [DONE]"]) + "\n\n"


async def test_pieces_waiting_together_go_out_as_one_delta(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    pieces = ["Five", " pieces", " in", " one", " write."]
    fake_openai.raw(_one_write(pieces), content_type="text/event-stream")
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Count")

    async with contextlib.aclosing(
        streaming.stream_message(app.state.services, actor, message)
    ) as events:
        received = [event async for event in events]

    assert [type(event) for event in received] == [
        streaming.UserTurnSaved,
        streaming.Delta,
        streaming.ReplySaved,
    ]
    assert received[1] == streaming.Delta("Five pieces in one write.")
    saved = await saved_turns(gql, sid)
    assert without_id(saved[1]) == turn(
        "ASSISTANT",
        "Five pieces in one write.",
        2,
        reply_to=1,
        usage={"promptTokens": 3, "completionTokens": 5, "cost": None},
    )
    assert fake_openai.stream_outcomes == {}  # a raw answer: no stream script ran


async def test_pieces_waiting_together_reach_a_client_as_one_stream_delta(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.raw(_one_write(["Over", " SSE", " at", " once."]), content_type="text/event-stream")

    response = await gql.http.post(
        "/graphql",
        json={"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Hi"}}},
        headers={"Accept": "text/event-stream"},
    )

    saved = await saved_turns(gql, sid)
    events = sse_events(response.text)
    assert [name for name, _ in events] == ["next"] * 3 + ["complete"]
    assert events[1][1]["data"]["messageStream"] == delta("Over SSE at once.")
    assert events[2][1]["data"]["messageStream"]["assistantTurn"] == saved[1]
    assert saved[1]["content"] == "Over SSE at once."


async def test_a_lone_piece_goes_out_at_once(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    # The provider sends one piece and then nothing (it holds the request
    # open): the piece is not kept back to wait for others.
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Alone", " never sent"], hold_after=1)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Hello?")

    events = streaming.stream_message(app.state.services, actor, message)
    assert isinstance(await anext(events), streaming.UserTurnSaved)
    assert await anext(events) == streaming.Delta("Alone")
    assert fake_openai.stream_outcomes == {}  # still open
    await events.aclose()

    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
    saved = await saved_turns(gql, sid)
    assert without_id(saved[1]) == turn("ASSISTANT", "Alone", 2, reply_to=1, interrupted=True)


async def test_the_provider_is_asked_while_the_user_turn_event_is_out(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    # The event's fields (HTML, exchange number, author) take reads of their
    # own: the provider's request is under way meanwhile, not after them.
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Soon", " enough"])
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Quick?", idempotency_key="k-1")

    events = streaming.stream_message(app.state.services, actor, message)
    first = await anext(events)
    assert isinstance(first, streaming.UserTurnSaved)
    await wait_until(lambda: _asked(fake_openai))  # no further event asked for
    rest = [event async for event in events]

    # The pieces may have waited together (the request was under way): one Delta or two.
    assert {type(e).__name__ for e in rest[:-1]} == {"Delta"}
    assert type(rest[-1]).__name__ == "ReplySaved"
    assert "".join(e.text for e in rest[:-1]) == "Soon enough"
    assert len(fake_openai.requests) == 1
    saved = await saved_turns(gql, sid)
    assert [(t["role"], t["content"], t["sequenceNumber"]) for t in saved] == [
        ("USER", "Quick?", 1),
        ("ASSISTANT", "Soon enough", 2),
    ]
    assert await claims.read(first.user_turn.id) is None  # the claim ended with the reply


async def test_stopped_once_the_user_turn_is_out_the_early_request_is_closed(
    app: Starlette, gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Never", " sent"], hold_after=0)
    actor = await accounts.local_actor()
    message = chat.Message(ids.decode(sid, "Session", field="id"), "Wait", idempotency_key="k-2")

    events = streaming.stream_message(app.state.services, actor, message)
    first = await anext(events)
    assert isinstance(first, streaming.UserTurnSaved)
    await wait_until(lambda: _asked(fake_openai))
    await events.aclose()

    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 2.0) == "client-closed"
    assert [without_id(t) for t in await saved_turns(gql, sid)] == [turn("USER", "Wait", 1)]
    assert await claims.read(first.user_turn.id) is None  # ended: the key may be sent again
    # Sent again, the key is answered by a new request to the provider.
    fake_openai.stream_chunks(["Now"])
    again = [e async for e in streaming.stream_message(app.state.services, actor, message)]
    assert [type(e).__name__ for e in again] == ["UserTurnSaved", "Delta", "ReplySaved"]
    assert len(fake_openai.requests) == 2


# --- failures -----------------------------------------------------------------


async def test_a_provider_failure_mid_answer_saves_the_pieces_and_ends_with_an_error(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["The answer", " is", " forty", "-two."], fail_after=2)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "What is it?"})
        events = (await ws.events("1"))["1"]

    saved = await saved_turns(gql, sid)
    assert [without_id(t) for t in saved] == [
        turn("USER", "What is it?", 1),
        turn("ASSISTANT", "The answer is", 2, reply_to=1, interrupted=True),
    ]
    assert merged(events) == [
        {"__typename": "StreamUserTurn", "userTurn": saved[0], "context": events[0]["context"]},
        delta("The answer is"),
        {
            "__typename": "StreamFailed",
            "errors": [
                {
                    "code": "PROVIDER_UNREACHABLE",
                    "message": "lab/my-model: the connection to the provider was lost mid-answer",
                    "field": None,
                }
            ],
            "partialReply": saved[1],
        },
    ]


async def test_a_provider_failure_before_any_piece_keeps_the_user_turn_for_a_retry(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.fail(429)

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Try me", "idempotencyKey": "k-1"})
        failed = (await ws.events("1"))["1"]
        fake_openai.stream_chunks(["Done", "."])
        await ws.subscribe("2", {"sessionId": sid, "content": "Try me", "idempotencyKey": "k-1"})
        retried = (await ws.events("2"))["2"]

    assert failed[1:] == [
        {
            "__typename": "StreamFailed",
            "errors": [
                {
                    "code": "PROVIDER_RATE_LIMIT",
                    "message": "lab/my-model: the provider is rate-limiting requests; "
                    "try again shortly",
                    "field": None,
                }
            ],
            "partialReply": None,
        }
    ]
    saved = await saved_turns(gql, sid)
    assert [without_id(t) for t in saved] == [
        turn("USER", "Try me", 1),
        turn(
            "ASSISTANT",
            "Done.",
            2,
            reply_to=1,
            usage={"promptTokens": 2, "completionTokens": 1, "cost": None},
        ),
    ]
    assert failed[0]["userTurn"] == retried[0]["userTurn"] == saved[0]
    assert merged(retried)[1:] == [
        delta("Done."),
        {"__typename": "StreamAssistantTurn", "assistantTurn": saved[1]},
    ]
    # The retry's prompt holds the user turn once.
    assert fake_openai.requests[-1]["messages"] == [{"role": "user", "content": "Try me"}]


async def test_a_repeated_idempotency_key_replays_the_original_exchange(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Once", " only."])

    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Say it once", "idempotencyKey": "k"})
        first = (await ws.events("1"))["1"]
        await ws.subscribe("2", {"sessionId": sid, "content": "Say it once", "idempotencyKey": "k"})
        again = (await ws.events("2"))["2"]

    assert len(fake_openai.requests) == 1
    assert again == [first[0], delta("Once only."), first[-1]]
    assert [t["sequenceNumber"] for t in await saved_turns(gql, sid)] == [1, 2]


@pytest.mark.parametrize(
    "fields",
    [
        {"content": "   \n\t"},
        {"content": "hi", "model": "nobody/nothing"},
        {"content": "hi", "model": "openai/gpt-4o-mini"},  # its key variable is not set
        {"content": "hi", "context": {"checkpointId": "Q2hlY2twb2ludDo5OTk="}},  # none
        {"content": "hi", "sessionId": "U2Vzc2lvbjo5OTk5"},  # Session:9999
    ],
)
async def test_a_refused_message_is_one_error_event_as_send_message_reports_it(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI, fields: dict[str, Any]
) -> None:
    sid = await lab_session(gql)
    message = {"sessionId": sid, **fields}

    async with stream_ws(app) as ws:
        await ws.subscribe("1", message)
        events = (await ws.events("1"))["1"]

    extra = {k: v for k, v in message.items() if k not in ("sessionId", "content")}
    sent = await send(gql, message["sessionId"], message["content"], **extra)

    assert sent["errors"] != []
    assert events == [
        {"__typename": "StreamFailed", "errors": sent["errors"], "partialReply": None}
    ]
    assert await saved_turns(gql, sid) == []
    assert fake_openai.requests == []


# --- concurrency and connections ---------------------------------------------


async def test_two_concurrent_streams_in_one_session_number_turns_1_to_4(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    # Each answer waits, so both user turns are written before either reply.
    fake_openai.delay(0.3)

    async with stream_ws(app) as ws:
        await ws.subscribe("a", {"sessionId": sid, "content": "First question"})
        first = await ws.next_event("a")
        await ws.subscribe("b", {"sessionId": sid, "content": "Second question"})
        events = await ws.events("a", "b")

    events["a"].insert(0, first)

    saved = await saved_turns(gql, sid)
    assert [(t["sequenceNumber"], t["role"]) for t in saved] == [
        (1, "USER"),
        (2, "USER"),
        (3, "ASSISTANT"),
        (4, "ASSISTANT"),
    ]
    assert events["a"][0]["userTurn"] == saved[0]
    assert events["b"][0]["userTurn"] == saved[1]
    # The fake numbers its default replies by request: map each request to its stream
    # (the second request's last message holds the first question, unanswered then,
    # and its own, a blank line apart).
    reply_to_request = {
        request["messages"][-1]["content"].split("\n\n")[-1]: f"fake reply #{number}"
        for number, request in enumerate(fake_openai.requests, start=1)
    }
    for op_id, question, user_sequence in (
        ("a", "First question", 1),
        ("b", "Second question", 2),
    ):
        kinds = [e["__typename"] for e in merged(events[op_id])]
        assert kinds == ["StreamUserTurn", "StreamDelta", "StreamAssistantTurn"]
        reply = events[op_id][-1]["assistantTurn"]
        assert reply in saved[2:]
        assert reply["replyToSequence"] == user_sequence
        assert reply["content"] == reply_to_request[question]
        assert "".join(e["delta"] for e in events[op_id][1:-1]) == reply["content"]


async def test_turns_in_later_events_show_the_session_as_it_is_then(
    gql: GraphQLClient, app: Starlette
) -> None:
    # A websocket's context lives as long as the connection: no stale session.
    sid = (await create_session(gql, title="t"))["id"]
    query = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
      ... on StreamUserTurn { userTurn { session { lastSequenceNumber } } }
      ... on StreamAssistantTurn { assistantTurn { session { lastSequenceNumber } } } } }"""

    seen = []

    async with stream_ws(app) as ws:
        for op_id in ("1", "2"):
            await ws.subscribe(op_id, {"sessionId": sid, "content": "Count"}, query=query)
            events = (await ws.events(op_id))[op_id]
            seen += [
                e[key]["session"]["lastSequenceNumber"]
                for e in events
                for key in ("userTurn", "assistantTurn")
                if key in e
            ]

    assert seen == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # not a browser
        ("http://smriti.test", True),  # the page this server served
        ("http://evil.example", False),
        ("http://smriti.test:8080", False),  # another port is another origin
    ],
)
async def test_websockets_are_accepted_from_the_same_origin_only_by_default(
    app: Starlette, origin: str | None, allowed: bool
) -> None:
    headers = {"Origin": origin} if origin else {}
    assert await _handshake(app, headers) == ("accepted" if allowed else 1008)


async def test_allowed_origins_admit_other_pages(settings: Settings) -> None:
    listed = dataclasses.replace(settings, allowed_origins=("https://Notebook.example:443",))
    app = create_app(listed)
    async with app.router.lifespan_context(app):
        assert await _handshake(app, {"Origin": "https://notebook.example"}) == "accepted"
        assert await _handshake(app, {"Origin": "https://other.example"}) == 1008


def test_a_malformed_allowed_origin_stops_start_up(settings: Settings) -> None:
    with pytest.raises(ConfigError) as raised:
        create_app(dataclasses.replace(settings, allowed_origins=("notebook.example",)))
    assert raised.value.message.startswith(
        "SMRITI_ALLOWED_ORIGINS: Invalid origin 'notebook.example' in allowed_origins."
    )


# --- SSE ------------------------------------------------------------------------


async def test_the_stream_over_server_sent_events(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["Over", " SSE."])

    response = await gql.http.post(
        "/graphql",
        json={"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Hi"}}},
        headers={"Accept": "text/event-stream"},
    )

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    saved = await saved_turns(gql, sid)
    events = sse_events(response.text)
    assert [name for name, _ in events][-1:] == ["complete"]
    assert {name for name, _ in events[:-1]} == {"next"}
    assert merged([data["data"]["messageStream"] for _, data in events[:-1]]) == [
        {"__typename": "StreamUserTurn", "userTurn": saved[0], "context": events[0][1]["data"]
         ["messageStream"]["context"]},
        delta("Over SSE."),
        {"__typename": "StreamAssistantTurn", "assistantTurn": saved[1]},
    ]  # fmt: skip
    assert saved[1]["content"] == "Over SSE."


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("text/event-stream", 405),  # refused outright
        ("application/json", 405),  # whatever the Accept: a subscription writes turns
    ],
)
async def test_a_stream_cannot_be_started_with_get(
    gql: GraphQLClient, fake_openai: FakeOpenAI, accept: str, status: int
) -> None:
    # A GET needs no preflight: an EventSource on any site could send messages.
    sid = await lab_session(gql)
    response = await gql.http.get(
        "/graphql",
        params={
            "query": STREAM,
            "variables": f'{{"input": {{"sessionId": "{sid}", "content": "Hi"}}}}',
        },
        headers={"Accept": accept},
    )

    assert response.status_code == status
    assert fake_openai.requests == []
    assert await saved_turns(gql, sid) == []


# --- helpers --------------------------------------------------------------------


async def _turns_when(gql: GraphQLClient, sid: str, count: int) -> list[dict[str, Any]] | None:
    last, found = await read_turns(gql, sid)
    return found if last == len(found) == count else None


async def _handshake(app: Starlette, headers: dict[str, str]) -> str | int:
    """ "accepted", or the close code of a refused handshake."""
    try:
        async with ws_client(app) as http, graphql_ws(http, headers=headers):
            pass
    except ExceptionGroup as group:  # httpx-ws raises inside a task group
        [refused] = group.exceptions
        assert isinstance(refused, WebSocketDisconnect), group
        return refused.code
    return "accepted"


async def test_a_client_gone_while_the_server_waits_to_write_still_saves_the_reply(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    """SSE, a client that stops reading, then goes away.

    The socket takes the user turn's event and then nothing: the server waits
    to write the first piece, and the reply's pieces after it wait in the
    stream's reader. The subscription is suspended between events, inside
    nobody's ``await``: when the client went, nothing was ever closed (under
    Strawberry's queue of one, as here), and the reply was not saved until
    the garbage collector or the server's stop got to it (one stopped stream
    in a few hundred, measured by tests/system/test_memory.py). The response
    closes its subscription however it ends, and the pieces sent and waiting
    are saved.
    """
    sid = await lab_session(gql)
    fake_openai.stream_chunks(["The answer", " is", " forty", "-two."], hold_after=2)
    body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "What is it?"}}}
    writing = asyncio.Event()
    gone = asyncio.Event()
    sent: list[dict[str, Any]] = []

    asked: list[bool] = []

    async def receive() -> dict[str, Any]:
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and b"StreamDelta" in message.get("body", b""):
            writing.set()
            await asyncio.Event().wait()  # a socket that takes nothing more

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
        "headers": [
            (b"host", b"smriti.test"),
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("smriti.test", 80),
    }
    # What nobody closes is closed when the collector frees it, at once here but
    # much later in a server, where reference cycles hold it (seconds, or never
    # before shutdown): the test keeps such generators instead, as a server does.
    firstiter, finalizer = sys.get_asyncgen_hooks()
    kept: list[Any] = []
    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=kept.append)
    try:
        request = asyncio.create_task(app(scope, receive, send))
        await asyncio.wait_for(writing.wait(), 10)
        # The provider has sent its two pieces; the reading task has taken both.
        await wait_until(lambda: _asked(fake_openai))
        await asyncio.sleep(0.5)
        gone.set()
        await asyncio.wait_for(request, 10)

        saved = await wait_until(lambda: _turns_when(gql, sid, 2), timeout=10)
    finally:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
        for generator in kept:
            with contextlib.suppress(Exception):
                await generator.aclose()
    assert [without_id(t) for t in saved] == [
        turn("USER", "What is it?", 1),
        turn("ASSISTANT", "The answer is", 2, reply_to=1, interrupted=True),
    ]
    assert await asyncio.to_thread(fake_openai.wait_for_stream_end, 1, 5.0) == "client-closed"


async def _asked(fake_openai: FakeOpenAI) -> bool:
    return len(fake_openai.requests) == 1
