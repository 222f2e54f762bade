"""Claims on answering a user turn: one holder at a time, on either database."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette

from api.domain.types import Role
from api.errors import ErrorCode, NotFound, ProviderError
from api.store import claims, sessions, turns
from tests.support.store import make_session


async def keyed_turn() -> int:
    return (await keyed_session())[2]


async def keyed_session() -> tuple[int, int, int]:
    """(owner, session, turn): a session whose one turn was sent with a key."""
    owner, _, session_id = await make_session(space=False)
    turn = await turns.append(
        session_id, role=Role.USER, content="hi", token_count=1, idempotency_key="k"
    )
    return owner, session_id, turn.id


async def test_one_holder_at_a_time_until_the_claim_lapses(app: Starlette) -> None:
    turn_id = await keyed_turn()

    first = await claims.take(turn_id, "a", now=1_000, until=31_000)
    while_held = await claims.take(turn_id, "b", now=30_999, until=60_999)
    renewed = await claims.renew(turn_id, "a", until=61_000)
    still_held = await claims.take(turn_id, "b", now=60_999, until=90_999)
    lapsed = await claims.take(turn_id, "b", now=61_000, until=91_000)
    not_theirs = await claims.renew(turn_id, "a", until=99_000)

    assert (first, while_held, renewed, still_held, lapsed, not_theirs) == (
        True,
        False,
        True,
        False,
        True,
        False,
    )
    assert await claims.read(turn_id) == claims.Claim("b", 91_000, None)


async def test_of_many_at_once_one_takes_it(app: Starlette) -> None:
    turn_id = await keyed_turn()

    taken = await asyncio.gather(
        *(claims.take(turn_id, f"h{n}", now=1_000, until=31_000) for n in range(8))
    )

    assert sorted(taken) == [False] * 7 + [True]
    claim = await claims.read(turn_id)
    assert claim is not None and claim.holder == f"h{taken.index(True)}"


async def test_a_failed_try_leaves_its_error_and_lapses(app: Starlette) -> None:
    turn_id = await keyed_turn()
    await claims.take(turn_id, "a", now=1_000, until=31_000)

    await claims.release(turn_id, "b", ProviderError("not theirs"))  # changes nothing
    await claims.release(
        turn_id,
        "a",
        ProviderError("slow down", code=ErrorCode.PROVIDER_RATE_LIMIT, retry_after=2.5),
    )
    failed = await claims.read(turn_id)
    retaken = await claims.take(turn_id, "c", now=1_001, until=31_001)

    assert failed is not None
    assert (failed.holder, failed.expires_at) == ("a", 0)
    assert failed.failure is not None
    assert (failed.failure.code, failed.failure.message, failed.failure.retry_after) == (
        ErrorCode.PROVIDER_RATE_LIMIT,
        "slow down",
        2.5,
    )
    assert retaken is True
    assert await claims.read(turn_id) == claims.Claim("c", 31_001, None)


async def test_a_released_claim_is_gone_and_goes_with_its_session(app: Starlette) -> None:
    owner, session_id, turn_id = await keyed_session()
    await claims.take(turn_id, "a", now=1_000, until=31_000)
    await claims.release(turn_id, "a")
    released = await claims.read(turn_id)
    await claims.take(turn_id, "b", now=1_000, until=31_000)

    await sessions.delete(owner, session_id)

    assert released is None
    assert await claims.read(turn_id) is None


async def test_a_key_sent_again_writes_nothing_neither_turn_nor_claim(app: Starlette) -> None:
    # On PostgreSQL the number, the turn and its claim are one statement; on
    # SQLite three: either way the refused write leaves no trace.
    owner, session_id, turn_id = await keyed_session()
    await claims.take(turn_id, "first", now=1_000, until=31_000)
    called: list[str] = []

    with pytest.raises(turns.DuplicateKey):
        await turns.append(
            session_id,
            role=Role.USER,
            content="hi again",
            token_count=1,
            idempotency_key="k",
            claim=("second", 61_000),
            written=lambda: called.append("written"),
        )

    assert called == []
    assert await claims.read(turn_id) == claims.Claim("first", 31_000, None)
    assert (await sessions.get(owner, session_id)).last_sequence_number == 1
    found = await turns.append(session_id, role=Role.USER, content="next", token_count=1)
    assert found.sequence_number == 2


async def test_a_turn_of_no_session_is_not_found(app: Starlette) -> None:
    with pytest.raises(NotFound, match="No such session"):
        await turns.append(
            999_999, role=Role.USER, content="hi", token_count=1, claim=("h", 31_000)
        )
