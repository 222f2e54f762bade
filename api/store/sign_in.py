"""Failed sign-ins per name and address, shared by every worker (table sign_in)."""

from __future__ import annotations

from datetime import datetime

from ..domain.sign_in import SignInCounts, SignInFailures
from . import rows, sql
from .tables import SIGN_IN
from .writes import finished

# Longer than any name or address counted: the rest is cut off before storing.
NAME_CHARS = 100
ADDRESS_CHARS = 64

_PAIR = "name = ? AND address = ?"


def _key(name: str, address: str) -> tuple[str, str]:
    return name[:NAME_CHARS], address[:ADDRESS_CHARS]


async def counts(
    name: str, address: str, *, since: datetime, known_since: datetime
) -> SignInCounts:
    """The failures after ``since`` of this pair, this address and this name."""
    name, address = _key(name, address)
    conn = sql.connection()
    pair = await sql.fetch_rows(
        conn,
        f"SELECT failures, last_failed_at, signed_in_at FROM sign_in WHERE {_PAIR}",
        [name, address],
    )
    by_address = await sql.fetch_rows(
        conn,
        "SELECT SUM(failures), MIN(last_failed_at) FROM sign_in "
        "WHERE last_failed_at >= ? AND address = ?",
        [since, address],
    )
    by_name = await sql.fetch_rows(
        conn,
        "SELECT SUM(failures) FROM sign_in WHERE last_failed_at >= ? AND name = ?",
        [since, name],
    )
    failures, last_failed, signed_in = pair[0] if pair else (0, None, None)
    last_failed, signed_in = rows.maybe_timestamp(last_failed), rows.maybe_timestamp(signed_in)
    fresh = last_failed is not None and last_failed >= since
    address_total, address_oldest = by_address[0] if by_address else (None, None)
    return SignInCounts(
        pair_failures=int(failures) if fresh else 0,
        pair_last_failed=last_failed if fresh else None,
        address_failures=int(address_total or 0),
        address_oldest_failed=rows.maybe_timestamp(address_oldest),
        name_failures=int(by_name[0][0] or 0) if by_name else 0,
        known_address=signed_in is not None and signed_in >= known_since,
    )


@finished
async def failed(name: str, address: str, *, now: datetime, since: datetime) -> None:
    """One more failure of this pair (the first of a new window if the last is older)."""
    name, address = _key(name, address)
    conn = sql.connection()
    for _ in range(2):
        if await sql.write(
            conn,
            "UPDATE sign_in SET failures = failures + 1, last_failed_at = ? "
            f"WHERE {_PAIR} AND last_failed_at >= ?",
            [now, name, address, since],
        ):
            break
        if await sql.update(
            conn, SIGN_IN, {"failures": 1, "last_failed_at": now}, _PAIR, [name, address]
        ):
            break
        try:
            values = dict(name=name, address=address, failures=1, last_failed_at=now)
            await sql.insert(conn, SIGN_IN, values)
            break
        except sql.IntegrityError:
            continue  # another worker created it a moment ago: count on it
    # Rows that only remember failures are forgotten once those age out.
    await sql.execute(
        conn,
        "DELETE FROM sign_in WHERE last_failed_at < ? AND signed_in_at IS NULL",
        [since],
    )


@finished
async def succeeded(name: str, address: str, *, now: datetime) -> None:
    """This name signed in from this address: its failures there are forgiven,
    and the address is known as the owner's."""
    name, address = _key(name, address)
    conn = sql.connection()
    forgiven = {"failures": 0, "last_failed_at": None, "signed_in_at": now}
    if not await sql.update(conn, SIGN_IN, forgiven, _PAIR, [name, address]):
        try:
            await sql.insert(conn, SIGN_IN, dict(name=name, address=address, signed_in_at=now))
        except sql.IntegrityError:
            await sql.update(conn, SIGN_IN, forgiven, _PAIR, [name, address])


async def recent_failures(since: datetime) -> list[SignInFailures]:
    """Every (name, address) with failures after ``since``, the latest first."""
    found = await sql.fetch_rows(
        sql.connection(),
        "SELECT name, address, failures, last_failed_at FROM sign_in "
        "WHERE last_failed_at >= ? AND failures > 0 "
        "ORDER BY last_failed_at DESC, name, address",
        [since],
    )
    return [
        SignInFailures(
            name=name,
            address=address,
            failures=int(failures),
            last_failed_at=rows.timestamp(last_failed_at),
        )
        for name, address, failures, last_failed_at in found
    ]


@finished
async def clear(*, name: str | None = None, address: str | None = None) -> int:
    """Forget the failures of a name (every address) or of an address (every
    name); how many (name, address) pairs had some."""
    where, params = ["failures > 0"], []
    if name is not None:
        where.append("name = ?")
        params.append(name[:NAME_CHARS])
    if address is not None:
        where.append("address = ?")
        params.append(address[:ADDRESS_CHARS])
    forgotten = {"failures": 0, "last_failed_at": None}
    return await sql.update(sql.connection(), SIGN_IN, forgotten, " AND ".join(where), params)
