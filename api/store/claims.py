"""Claims on answering a user turn, shared by every worker (table reply_claim).

A claim names the request (``holder``) that asks the provider for a turn's
reply, until ``expires_at`` (milliseconds since the epoch). Taking one is a
single statement, so of two requests only one holds it, on either database:
the insert, or the takeover of a claim that has lapsed. ``api.services.answering``
says how they are used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ErrorCode, ProviderError
from . import sql
from .writes import finished

_TAKE = (
    "INSERT INTO reply_claim (turn_id, holder, expires_at) VALUES (?, ?, ?) "
    "ON CONFLICT (turn_id) DO UPDATE SET holder = excluded.holder, "
    "expires_at = excluded.expires_at, failure_code = NULL, failure_message = NULL, "
    "failure_retry_after = NULL "
    "WHERE reply_claim.expires_at <= ? RETURNING holder"
)
_RENEW = "UPDATE reply_claim SET expires_at = ? WHERE turn_id = ? AND holder = ? RETURNING holder"
_READ = (
    "SELECT holder, expires_at, failure_code, failure_message, failure_retry_after "
    "FROM reply_claim WHERE turn_id = ?"
)
_FAILED = (
    "UPDATE reply_claim SET expires_at = 0, failure_code = ?, failure_message = ?, "
    "failure_retry_after = ? WHERE turn_id = ? AND holder = ?"
)
_RELEASE = "DELETE FROM reply_claim WHERE turn_id = ? AND holder = ?"
# The claim on a turn being written, in the transaction that writes it: the
# turn is never seen (by a request sending its key again) without its claim.
# A row left by an earlier turn with the same id can only be stale.
_TAKE_NEW = (
    "INSERT INTO reply_claim (turn_id, holder, expires_at) VALUES (?, ?, ?) "
    "ON CONFLICT (turn_id) DO UPDATE SET holder = excluded.holder, "
    "expires_at = excluded.expires_at, failure_code = NULL, failure_message = NULL, "
    "failure_retry_after = NULL"
)

# The same in the PostgreSQL statement that writes the turn (``turns.append``):
# the turn's id from that statement's ``written`` step.
TAKE_WRITTEN = (
    "INSERT INTO reply_claim (turn_id, holder, expires_at) SELECT id, ?, ? FROM written "
    "ON CONFLICT (turn_id) DO UPDATE SET holder = excluded.holder, "
    "expires_at = excluded.expires_at, failure_code = NULL, failure_message = NULL, "
    "failure_retry_after = NULL"
)


@dataclass(frozen=True)
class Claim:
    holder: str
    expires_at: int
    # The error its holder's try ended with (the claim has lapsed then).
    failure: ProviderError | None


@finished
async def take(turn_id: int, holder: str, *, now: int, until: int) -> bool:
    """Claim the turn for ``holder`` until ``until``: True unless another
    holder's claim runs past ``now``."""
    taken = await sql.fetch_one(sql.connection(), _TAKE, [turn_id, holder, until, now])
    return taken is not None


async def take_new(conn: Any, turn_id: int, holder: str, *, until: int) -> None:
    """Claim a turn for ``holder`` in the transaction (``conn``) writing it."""
    await sql.execute(conn, _TAKE_NEW, [turn_id, holder, until])


@finished
async def renew(turn_id: int, holder: str, *, until: int) -> bool:
    """Push ``holder``'s claim on to ``until``; False if it is no longer theirs."""
    return await sql.fetch_one(sql.connection(), _RENEW, [until, turn_id, holder]) is not None


@finished
async def release(turn_id: int, holder: str, failure: ProviderError | None = None) -> None:
    """End ``holder``'s claim: gone, or lapsed with the error its try ended with."""
    if failure is None:
        await sql.execute(sql.connection(), _RELEASE, [turn_id, holder])
        return
    await sql.execute(
        sql.connection(),
        _FAILED,
        [failure.code.value, failure.message, failure.retry_after, turn_id, holder],
    )


async def read(turn_id: int) -> Claim | None:
    row = await sql.fetch_one(sql.connection(), _READ, [turn_id])
    if row is None:
        return None
    failure = None
    if row["failure_code"] is not None:
        failure = ProviderError(
            row["failure_message"] or "",
            code=ErrorCode(row["failure_code"]),
            retry_after=row["failure_retry_after"],
        )
    return Claim(str(row["holder"]), int(row["expires_at"]), failure)
