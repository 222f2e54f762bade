"""A write cancelled at any point still runs to its end and frees the connection.

A request is cancelled wherever it is waiting when its client goes away. On
SQLite a cancellation inside the transaction's entry used to keep the single
connection's lock for ever (issue 7, finding 1). Here each kind of write is
cancelled after 1, 2, 3, … turns of the event loop; every time the write must
be complete and the next read must answer at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from starlette.applications import Starlette

from api.domain.pages import PageRequest
from api.domain.types import Role
from api.store import checkpoints, sessions, spaces, turns, writes
from tests.support.store import make_session, save

T = TypeVar("T")

# Enough loop turns to walk through a transaction's entry, body and commit.
# From 1: a write cancelled before it ever ran has nothing to finish.
TICKS = range(1, 16)


async def cancelled_after(ticks: int, write: Awaitable[object]) -> None:
    task = asyncio.ensure_future(write)
    for _ in range(ticks):
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def answered_at_once(read: Callable[[], Awaitable[T]]) -> T:
    async with asyncio.timeout(5):  # "for ever" before the fix
        await writes.drain()
        return await read()


@pytest.mark.parametrize("ticks", TICKS)
async def test_a_cancelled_turn_append_is_written_whole(app: Starlette, ticks: int) -> None:
    _, _, session_id = await make_session(space=False)
    await cancelled_after(
        ticks, turns.append(session_id, role=Role.USER, content="hi", token_count=1)
    )

    found = await answered_at_once(lambda: turns.in_range(session_id, 1, 10))
    assert [(t.sequence_number, t.content) for t in found] == [(1, "hi")]
    session = await sessions.get((await spaces.local_user_id()), session_id)
    assert session.last_sequence_number == 1


@pytest.mark.parametrize("ticks", TICKS)
async def test_a_cancelled_checkpoint_save_is_written_whole(app: Starlette, ticks: int) -> None:
    _, space_id, session_id = await make_session()
    assert space_id is not None
    await cancelled_after(ticks, save(space_id, session_id, "C1"))

    owner = await spaces.local_user_id()
    found = await answered_at_once(lambda: spaces.get(owner, space_id))
    assert found.id == space_id
    head = await checkpoints.head(space_id, "main")
    assert head is not None and head.content.title == "C1"


@pytest.mark.parametrize("ticks", TICKS)
async def test_a_cancelled_space_creation_is_written_whole(app: Starlette, ticks: int) -> None:
    owner = await spaces.local_user_id()
    await cancelled_after(ticks, spaces.create(owner, "Trips", ""))

    page = await answered_at_once(lambda: spaces.page(owner, PageRequest(first=10)))
    assert [s.name for s in page.items] == ["Trips"]
