"""The one send pipeline, through the app: what the provider receives, and its cost.

sendMessage and messageStream walk the same steps (``api.services.chat``):
the same context reaches the provider whichever is used, a window never opens
with an answer (issue 7, finding 12), and a message costs no more SQL
statements than before the pipeline was made one: 9 here, measured on the
code before the change as well (``python -m bench`` counts 10 for its HEAD
sends, before and after).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.applications import Starlette

from api.settings import Settings
from tests.support.databases import TEST_DB
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, preview, send
from tests.support.queries import count_statements
from tests.support.streams import stream_ws


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Room for three turns: after two exchanges the newest three open with an answer.
    return dataclasses.replace(settings, max_window_turns=3)


async def two_exchanges(gql: GraphQLClient, fake: FakeOpenAI) -> str:
    sid: str = (await create_session(gql, title="t", model="lab/my-model"))["id"]
    for question, answer in (("Q one", "A one"), ("Q two", "A two")):
        fake.reply(answer)
        assert (await send(gql, sid, question))["errors"] == []
    return sid


WINDOW = [
    {"role": "user", "content": "Q two"},
    {"role": "assistant", "content": "A two"},
    {"role": "user", "content": "Q three"},
]


async def test_send_message_never_opens_the_window_with_an_answer(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = await two_exchanges(gql, fake_openai)
    planned = await preview(gql, sid, "Q three")
    fake_openai.reply("A three")
    sent = await send(gql, sid, "Q three")

    assert fake_openai.requests[-1]["messages"] == WINDOW
    assert [t["sequenceNumber"] for t in sent["context"]["turns"]] == [3, 4]
    assert sent["context"] == planned  # contextPreview is the same resolution


async def test_message_stream_sends_the_same_window(
    gql: GraphQLClient, app: Starlette, fake_openai: FakeOpenAI
) -> None:
    sid = await two_exchanges(gql, fake_openai)
    fake_openai.stream_chunks(["A", " three"])
    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Q three"})
        events: list[dict[str, Any]] = (await ws.events("1"))["1"]

    assert fake_openai.requests[-1]["messages"] == WINDOW
    assert [t["sequenceNumber"] for t in events[0]["context"]["turns"]] == [3, 4]
    assert events[-1]["assistantTurn"]["content"] == "A three"


async def test_a_message_in_head_mode_costs_eight_statements_six_on_postgresql(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid: str = (await create_session(gql, title="t", spaceId=space, memoryScope="LATEST_3"))["id"]
    for n in range(3):
        assert (await send(gql, sid, f"step {n}"))["errors"] == []
        await checkpoint(gql, sid, f"C{n}")
    with count_statements() as statements:
        sent = await send(gql, sid, "and now?")

    assert sent["errors"] == []
    assert sent["context"]["mode"] == "HEAD"
    assert [c["title"] for c in sent["context"]["checkpoints"]] == ["C0", "C1", "C2"]
    # Nine, and since issue 21 one indexed read of the space's default settings
    # (instructions and parameters its sessions inherit); the newest turns and
    # those settings are read with the session (``sessions.for_message``). On
    # PostgreSQL each turn's sequence number and insert are one statement
    # (``turns.append``).
    assert len(statements) == (6 if TEST_DB == "postgres" else 8), statements
