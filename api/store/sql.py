"""SQL through Tortoise's connections: every statement of the store.

Statements are written with ``?`` placeholders and translated for asyncpg;
their column lists come from ``tables``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Sized
from typing import Any, cast

from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError as IntegrityError
from tortoise.transactions import in_transaction

from .tables import Table
from .tables import json_text as _json_text

# ``IntegrityError``: a unique or foreign key refused a write (both drivers'
# errors, as Tortoise raises them).
_PLACEHOLDER = re.compile(r"\?")


def marks(values: Sized) -> str:
    """One ``?`` per value, for an ``IN (…)`` or a VALUES list."""
    return ", ".join("?" * len(values))


def transaction() -> Any:
    """The statements of an ``async with`` block, committed together (its
    connection is the block's ``as``)."""
    return in_transaction("default")


def connection() -> BaseDBAsyncClient:
    client: BaseDBAsyncClient = connections.get("default")
    return client


def dialect(conn: BaseDBAsyncClient) -> str:
    return str(conn.capabilities.dialect)


def translate(conn: BaseDBAsyncClient, statement: str) -> str:
    if dialect(conn) != "postgres":
        return statement
    counter = iter(range(1, 10_000))
    return _PLACEHOLDER.sub(lambda _m: f"${next(counter)}", statement)


async def fetch(
    conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    rows = await conn.execute_query_dict(translate(conn, statement), list(params))
    return [dict(row) for row in rows]


async def fetch_one(
    conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()
) -> dict[str, Any] | None:
    rows = await fetch(conn, statement, params)
    return rows[0] if rows else None


async def fetch_value(conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None: no row)."""
    found = await fetch_rows(conn, statement, params)
    return found[0][0] if found else None


async def fetch_rows(
    conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()
) -> Sequence[Sequence[Any]]:
    """Rows as the driver returns them (read by position): no dict per row,
    for reads of thousands of rows."""
    _, rows = await conn.execute_query(translate(conn, statement), list(params))
    # Typed as dicts by Tortoise; really sqlite3.Row or asyncpg.Record, both indexable.
    return cast("Sequence[Sequence[Any]]", rows)


async def fetch_records(
    conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()
) -> Sequence[Sequence[Any]]:
    """``fetch_rows`` without Tortoise's ``execute_query`` on SQLite, which reads
    the connection's ``total_changes`` from the event loop's thread before the
    query: under load that waited on the driver's thread, 1.9-3.1 ms at the p50
    of a served message's first read against 0.2 ms without it (the statement
    is logged as Tortoise logs it)."""
    if dialect(conn) != "sqlite":
        return await fetch_rows(conn, statement, params)
    values = list(params)
    wrapper: Any = conn.acquire_connection()
    async with wrapper as connection:
        conn.log.debug("%s: %s", statement, values)
        return cast("Sequence[Sequence[Any]]", await connection.execute_fetchall(statement, values))


async def execute(conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()) -> None:
    await conn.execute_query(translate(conn, statement), list(params))


async def write(conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()) -> int:
    """An UPDATE or DELETE; how many rows it changed."""
    changed, _ = await conn.execute_query(translate(conn, statement), list(params))
    return int(changed)


async def returning(
    conn: BaseDBAsyncClient, statement: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """The rows a statement's RETURNING gives, by position (Tortoise's
    ``execute_query`` on asyncpg drops them for an INSERT or UPDATE)."""
    found = await conn.execute_query_dict(translate(conn, statement), list(params))
    return [tuple(row.values()) for row in found]


async def insert(
    conn: BaseDBAsyncClient, table: Table, values: Mapping[str, Any]
) -> tuple[Any, ...]:
    """One row (the model's defaults for what ``values`` leaves out), read
    back as the table's row (``Table.columns``)."""
    written = table.row(values)
    placeholders = marks(written)
    [row] = await returning(
        conn,
        f"INSERT INTO {table.name} ({', '.join(written)}) VALUES ({placeholders}) "
        f"RETURNING {table.select()}",
        list(written.values()),
    )
    return row


# Rows per INSERT of ``insert_many``: well under SQLite's 32,766 parameters.
_ROWS_PER_INSERT = 500


async def insert_many(
    conn: BaseDBAsyncClient, table: Table, values: Sequence[Mapping[str, Any]]
) -> None:
    """Rows that name the same columns, a few hundred per statement."""
    written = [table.row(v) for v in values]
    for start in range(0, len(written), _ROWS_PER_INSERT):
        chunk = written[start : start + _ROWS_PER_INSERT]
        names = list(chunk[0])
        row = "(" + marks(names) + ")"
        await execute(
            conn,
            f"INSERT INTO {table.name} ({', '.join(names)}) VALUES "
            + ", ".join(row for _ in chunk),
            [row[name] for row in chunk for name in names],
        )


async def update(
    conn: BaseDBAsyncClient,
    table: Table,
    changes: Mapping[str, Any],
    where: str,
    params: Sequence[Any] = (),
) -> int:
    """Set ``changes`` (JSON columns as text) on the rows ``where`` holds; how many."""
    values = [
        _json_text(value) if column in table.json else value for column, value in changes.items()
    ]
    sets = ", ".join(f"{column} = ?" for column in changes)
    return await write(conn, f"UPDATE {table.name} SET {sets} WHERE {where}", [*values, *params])
