"""Turns: append-only, numbered by the server inside the writing transaction."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..domain.pages import Page, PageRequest
from ..domain.types import Authorship, ChatSettings, Finish, Role, Turn, Usage
from ..errors import NotFound
from . import claims, rows, sql
from .paging import keyset
from .tables import TURN
from .writes import Refused, finished

# One statement both increments and returns the counter, so two writers can
# never read the same value: on PostgreSQL the row lock serialises them until
# commit, on SQLite the write lock does. A rollback returns the number.
_NEXT_SEQUENCE = (
    "UPDATE session SET last_sequence_number = last_sequence_number + 1 "
    "WHERE id = ? RETURNING last_sequence_number"
)


TURN_COLUMNS = TURN.select()


# Raw, like the window read: the ORM's create (query building, a model
# instance, then a Turn from it) cost more than the statement itself, twice per
# message. Datetimes go in as the ORM writes them (Tortoise's SQLite adapter,
# asyncpg's timestamptz), so rows read back the same either way.
# The turn's values (``_VALUES``) after its session id and number.
_VALUES = tuple(c for c in TURN.columns if c not in ("id", "session_id", "sequence_number"))
_WRITTEN_COLUMNS = ", ".join(["session_id", "sequence_number", *_VALUES])
_MARKS = sql.marks(_VALUES)
_INSERT_TURN = (
    f"INSERT INTO turn ({_WRITTEN_COLUMNS}) VALUES (?, ?, {_MARKS}) RETURNING {TURN_COLUMNS}"
)
# PostgreSQL: the sequence number and the turn in one statement (one round trip,
# not two, before the commit), the turn's values after its session id and
# number; no row when there is no such session. The same row lock as
# _NEXT_SEQUENCE alone. SQLite cannot write in a WITH: it runs both.
_APPEND = (
    f"WITH next AS ({_NEXT_SEQUENCE}), "
    f"written AS (INSERT INTO turn ({_WRITTEN_COLUMNS}) "
    f"SELECT ?, last_sequence_number, {_MARKS} FROM next RETURNING {TURN_COLUMNS}) "
)
_APPEND_ONLY = _APPEND + "SELECT * FROM written"
# … and the turn's claim (``claims.TAKE_WRITTEN``), in the same statement.
_APPEND_CLAIMED = _APPEND + f", claimed AS ({claims.TAKE_WRITTEN}) SELECT * FROM written"


class DuplicateKey(Refused):
    """A turn with this idempotency key already exists in the session."""


class AlreadyAnswered(Refused):
    """The user turn a reply was for has its reply already (``reply``)."""

    def __init__(self, reply: Turn) -> None:
        super().__init__(reply.sequence_number)
        self.reply = reply


# The first reply to a user turn, read after the sequence UPDATE (see append):
# only turns after the user's, so the read is short whatever the session's length.
_FIRST_REPLY = (
    f"SELECT {TURN_COLUMNS} FROM turn WHERE session_id = ? AND sequence_number > ? "
    "AND reply_to_sequence = ? ORDER BY sequence_number LIMIT 1"
)
# The continuation of a reply (at most one: a unique index), through that index.
_CONTINUATION = f"SELECT {TURN_COLUMNS} FROM turn WHERE session_id = ? AND continues_sequence = ?"


@finished
async def append(
    session_id: int,
    *,
    role: Role,
    content: str,
    token_count: int,
    provider: str | None = None,
    model: str | None = None,
    usage: Usage | None = None,
    finish: Finish | None = None,
    reply_to_sequence: int | None = None,
    continues_sequence: int | None = None,
    idempotency_key: str | None = None,
    first_reply_only: bool = False,
    author: Authorship | None = None,
    settings: ChatSettings | None = None,
    claim: tuple[str, int] | None = None,
    written: Callable[[], None] | None = None,
) -> Turn:
    """Write a turn with the next sequence number. With ``first_reply_only``, a
    reply to a turn that has one already is not written: AlreadyAnswered. A
    continuation (``continues_sequence``) of a reply that has one already is
    not written either: AlreadyAnswered with that continuation.

    ``finish``: why a reply ended; the turn is ``interrupted`` when that
    reason left it cut off. ``settings``: a reply's effective settings (none
    set: not recorded). ``claim``: (holder, until) of the claim on answering
    the turn (``api.store.claims``), written in the same transaction.
    ``written``: called once every statement has succeeded, as the
    transaction commits (not called when a statement fails: a duplicate key
    is refused before it)."""
    usage = usage or Usage()
    named = TURN.row(
        {
            "role": role.value,
            "content": content,
            "provider": provider,
            "model": model,
            "token_count": token_count,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost": usage.cost,
            "interrupted": finish is not None and finish.reason.cut_off,
            "reply_to_sequence": reply_to_sequence,
            "idempotency_key": idempotency_key,
            "author_id": author.user_id if author else None,
            "author_token": author.token_name if author else None,
            "created_at": datetime.now(UTC),
            "finish_reason": finish.reason.value if finish else None,
            "provider_finish_reason": finish.provider_reason if finish else None,
            "continues_sequence": continues_sequence,
            "settings": settings.to_json() if settings else None,
        }
    )
    values = [named[column] for column in _VALUES]
    # Nothing to check between the number and the insert: one statement will do.
    checked = (first_reply_only and reply_to_sequence is not None) or continues_sequence is not None
    try:
        async with sql.transaction() as conn:
            if not checked and sql.dialect(conn) == "postgres":
                if claim is None:
                    found = await sql.returning(
                        conn, _APPEND_ONLY, [session_id, session_id, *values]
                    )
                else:
                    holder, until = claim
                    found = await sql.returning(
                        conn, _APPEND_CLAIMED, [session_id, session_id, *values, holder, until]
                    )
                if not found:
                    raise NotFound("No such session.", field="sessionId")
                row: rows.Row = found[0]
            else:
                row = await _append_checked(
                    conn,
                    session_id,
                    values,
                    first_reply_only=first_reply_only,
                    reply_to_sequence=reply_to_sequence,
                    continues_sequence=continues_sequence,
                    claim=claim,
                )
            if written is not None:
                written()
    except sql.IntegrityError as exc:
        if idempotency_key is not None:
            raise DuplicateKey(idempotency_key) from exc
        raise
    return rows.turn(row)


async def _append_checked(
    conn: Any,
    session_id: int,
    values: list[Any],
    *,
    first_reply_only: bool,
    reply_to_sequence: int | None,
    continues_sequence: int | None,
    claim: tuple[str, int] | None,
) -> rows.Row:
    """``append``'s statements one by one: the number, the checks, the turn, its claim."""
    allocated = await sql.fetch_one(conn, _NEXT_SEQUENCE, [session_id])
    if allocated is None:
        raise NotFound("No such session.", field="sessionId")
    if first_reply_only and reply_to_sequence is not None:
        # One reply per user turn. The UPDATE above holds the session's
        # row (PostgreSQL) or the database's write lock (SQLite) until
        # commit, so two replies to one turn (the same idempotency key
        # sent twice at once) pass here one after the other, and the
        # second sees the first. Raising rolls back its sequence number.
        earlier = await sql.fetch_rows(
            conn, _FIRST_REPLY, [session_id, reply_to_sequence, reply_to_sequence]
        )
        if earlier:
            raise AlreadyAnswered(rows.turn(earlier[0]))
    if continues_sequence is not None:
        # Serialised as above; the unique index backs it.
        earlier = await sql.fetch_rows(conn, _CONTINUATION, [session_id, continues_sequence])
        if earlier:
            raise AlreadyAnswered(rows.turn(earlier[0]))
    [row] = await sql.returning(
        conn, _INSERT_TURN, [session_id, allocated["last_sequence_number"], *values]
    )
    if claim is not None:
        holder, until = claim
        await claims.take_new(conn, row[TURN.position["id"]], holder, until=until)
    return row


async def _select(where: str, params: list[Any]) -> list[Turn]:
    found = await sql.fetch_rows(
        sql.connection(), f"SELECT {TURN_COLUMNS} FROM turn WHERE {where}", params
    )
    return [rows.turn(record) for record in found]


async def _first(where: str, params: list[Any]) -> Turn | None:
    found = await _select(where, params)
    return found[0] if found else None


async def by_idempotency_key(session_id: int, key: str) -> Turn | None:
    """Through the (session_id, idempotency_key) unique index."""
    return await _first("session_id = ? AND idempotency_key = ?", [session_id, key])


async def continuation_of(session_id: int, sequence_number: int) -> Turn | None:
    """The turn that continues reply ``sequence_number``, if it has been continued."""
    return await _first("session_id = ? AND continues_sequence = ?", [session_id, sequence_number])


async def reply_to(session_id: int, user_sequence: int) -> Turn | None:
    return await _first(
        "session_id = ? AND reply_to_sequence = ? ORDER BY sequence_number LIMIT 1",
        [session_id, user_sequence],
    )


async def recent(session_id: int, *, after: int, before: int | None, limit: int) -> list[Turn]:
    """Up to ``limit`` turns with after < sequence_number < before, newest first.

    Reads through the (session_id, sequence_number) unique index, so the cost
    depends on ``limit``, not on how long the session is.
    """
    upper = "" if before is None else " AND sequence_number < ?"
    params: list[Any] = [session_id, after] + ([] if before is None else [before])
    return await _select(
        f"session_id = ? AND sequence_number > ?{upper} ORDER BY sequence_number DESC LIMIT ?",
        [*params, limit],
    )


async def last_sequence_at(session_id: int, moment: datetime) -> int:
    """The highest sequence number this session had written by ``moment``."""
    found = await sql.fetch_value(
        sql.connection(),
        "SELECT MAX(sequence_number) FROM turn WHERE session_id = ? AND created_at <= ?",
        [session_id, moment],
    )
    return 0 if found is None else int(found)


# A page of turns stops early once it holds this many characters of content
# (the turn that crosses the line is the page's last, so a page is never empty):
# 1,000 turns of up to 1 MiB each would otherwise be a 1 GB answer.
PAGE_CONTENT_BUDGET = 16 * 1024 * 1024


async def page(
    session_id: int, request: PageRequest, *, content_budget: int = PAGE_CONTENT_BUDGET
) -> Page[Turn]:
    """One page by sequence number (keyset: ``after``/``before`` exclusive), read
    one row past the limit to know whether there is more, and cut short at
    ``content_budget`` characters of content. Raw rows, as ``recent`` reads
    them: ORM instances cost more than the query.

    One statement: the inner query numbers the page's rows and sums their
    content lengths in page order; only rows that start within the budget
    leave the database, and ``rows_read`` (the inner row count) says whether
    anything was held back.
    """
    page_of = keyset(request, "sequence_number")
    params, order, limit = [session_id, *page_of.params], page_of.order, page_of.limit
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT * FROM (SELECT {TURN_COLUMNS}, "
        f"SUM(LENGTH(content)) OVER (ORDER BY sequence_number {order} "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS chars_before, "
        "COUNT(*) OVER () AS rows_read "
        f"FROM (SELECT * FROM turn WHERE session_id = ?{page_of.bounds} "
        f"ORDER BY sequence_number {order} LIMIT ?) AS window_rows) AS counted "
        f"WHERE COALESCE(chars_before, 0) < ? ORDER BY sequence_number {order}",
        [*params, limit + 1, content_budget],
    )
    rows_read = int(found[0][_ROWS_READ]) if found else 0
    kept = [rows.turn(record) for record in found[:limit]]
    return page_of.page(kept, more=rows_read > len(kept))


_ROWS_READ = len(TURN.columns) + 1  # after the turn's columns and chars_before


async def by_id(turn_id: int) -> Turn | None:
    return (await by_ids([turn_id])).get(turn_id)


async def by_ids(ids: list[int]) -> dict[int, Turn]:
    # A page of search hits reads its turns here.
    found = await _select(f"id IN ({sql.marks(ids)})", list(ids))
    return {turn.id: turn for turn in found}


async def in_range(session_id: int, first: int, last: int) -> list[Turn]:
    return await _select(
        "session_id = ? AND sequence_number >= ? AND sequence_number <= ? ORDER BY sequence_number",
        [session_id, first, last],
    )


async def exchange_numbers(session_id: int, anchors: list[int]) -> dict[int, int]:
    """How many user turns of the session have a sequence number up to each anchor:
    two statements for any number of anchors (a count below the lowest, then the
    user turns' numbers between the lowest and the highest), both on the
    (session_id, sequence_number) index."""
    if not anchors:
        return {}
    low, high = min(anchors), max(anchors)
    conn, users = sql.connection(), "FROM turn WHERE session_id = ? AND role = ?"
    params = [session_id, Role.USER.value]
    before = int(
        await sql.fetch_value(
            conn, f"SELECT COUNT(*) {users} AND sequence_number < ?", [*params, low]
        )
    )
    found = await sql.fetch_rows(
        conn,
        f"SELECT sequence_number {users} AND sequence_number >= ? AND sequence_number <= ? "
        "ORDER BY sequence_number",
        [*params, low, high],
    )
    numbers = [int(r[0]) for r in found]
    return {anchor: before + bisect_right(numbers, anchor) for anchor in anchors}
