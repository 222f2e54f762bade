"""The PostgreSQL pool gives a connection back without another round trip."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from tortoise import connections

from api.store import sql

pytestmark = pytest.mark.postgres_only


def pool() -> Any:
    return connections.get("default")._pool


def queries_sent() -> int:
    """Queries sent on the pool's connections so far (asyncpg counts them)."""
    return sum(
        holder._con._protocol.queries_count for holder in pool()._holders if holder._con is not None
    )


async def test_a_statement_outside_a_transaction_is_one_query(app: Starlette) -> None:
    await sql.fetch(sql.connection(), "SELECT 1")
    before = queries_sent()

    await sql.fetch(sql.connection(), "SELECT 1")

    # asyncpg's own release sends a reset query after it (pg_advisory_unlock_all,
    # CLOSE ALL, UNLISTEN *, RESET ALL): 2.
    assert queries_sent() - before == 1


async def test_a_transaction_left_open_is_still_rolled_back(app: Starlette) -> None:
    await sql.fetch(sql.connection(), "SELECT 1")
    connection = await pool().acquire()
    await connection.execute("BEGIN")  # as a caller that failed half-way might leave it

    await pool().release(connection)

    open_transactions = [
        holder._con.is_in_transaction() for holder in pool()._holders if holder._con is not None
    ]
    assert open_transactions and not any(open_transactions)
