"""Turns: append-only, numbered by the server inside the writing transaction."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from ..domain.pages import Page, PageRequest
from ..domain.types import Authorship, ChatSettings, Finish, Role, Turn, Usage
from ..errors import NotFound
from . import claims, models, rows, sql
from .writes import Refused, finished

# One statement both increments and returns the counter, so two writers can
# never read the same value: on PostgreSQL the row lock serialises them until
# commit, on SQLite the write lock does. A rollback returns the number.
_NEXT_SEQUENCE = (
    "UPDATE session SET last_sequence_number = last_sequence_number + 1 "
    "WHERE id = ? RETURNING last_sequence_number"
)


TURN_COLUMNS = (
    "id, session_id, sequence_number, role, content, provider, model, token_count, "
    "prompt_tokens, completion_tokens, cost, interrupted, reply_to_sequence, "
    "idempotency_key, author_id, author_token, created_at, finish_reason, "
    "provider_finish_reason, continues_sequence, settings"
)


# Raw, like the window read: the ORM's create (query building, a model
# instance, then a Turn from it) cost more than the statement itself, twice per
# message. Datetimes go in as the ORM writes them (Tortoise's SQLite adapter,
# asyncpg's timestamptz), so rows read back the same either way.
_WRITTEN_COLUMNS = (
    "session_id, sequence_number, role, content, provider, model, "
    "token_count, prompt_tokens, completion_tokens, cost, interrupted, reply_to_sequence, "
    "idempotency_key, author_id, author_token, created_at, finish_reason, "
    "provider_finish_reason, continues_sequence, settings"
)
_INSERT_TURN = (
    f"INSERT INTO turn ({_WRITTEN_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    f"RETURNING {TURN_COLUMNS}"
)
# PostgreSQL: the sequence number and the turn in one statement (one round trip,
# not two, before the commit), the turn's values after its session id and
# number; no row when there is no such session. The same row lock as
# _NEXT_SEQUENCE alone. SQLite cannot write in a WITH: it runs both.
_APPEND = (
    f"WITH next AS ({_NEXT_SEQUENCE}), "
    f"written AS (INSERT INTO turn ({_WRITTEN_COLUMNS}) "
    "SELECT ?, last_sequence_number, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
    f"FROM next RETURNING {TURN_COLUMNS}) "
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
    values = [
        role.value,
        content,
        provider,
        model,
        token_count,
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cost,
        finish is not None and finish.reason.cut_off,
        reply_to_sequence,
        idempotency_key,
        author.user_id if author else None,
        author.token_name if author else None,
        datetime.now(UTC),
        finish.reason.value if finish else None,
        finish.provider_reason if finish else None,
        continues_sequence,
        rows.json_text(settings.to_json() if settings else None),
    ]
    # Nothing to check between the number and the insert: one statement will do.
    checked = (first_reply_only and reply_to_sequence is not None) or continues_sequence is not None
    try:
        async with in_transaction("default") as conn:
            if not checked and sql.dialect(conn) == "postgres":
                if claim is None:
                    row = await sql.fetch_one(conn, _APPEND_ONLY, [session_id, session_id, *values])
                else:
                    holder, until = claim
                    row = await sql.fetch_one(
                        conn, _APPEND_CLAIMED, [session_id, session_id, *values, holder, until]
                    )
                if row is None:
                    raise NotFound("No such session.", field="sessionId")
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
    except IntegrityError as exc:
        if idempotency_key is not None:
            raise DuplicateKey(idempotency_key) from exc
        raise
    assert row is not None  # INSERT … RETURNING returns the row it wrote
    return rows.turn_record(row)


async def _append_checked(
    conn: Any,
    session_id: int,
    values: list[Any],
    *,
    first_reply_only: bool,
    reply_to_sequence: int | None,
    continues_sequence: int | None,
    claim: tuple[str, int] | None,
) -> dict[str, Any] | None:
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
        earlier = await sql.fetch_one(
            conn, _FIRST_REPLY, [session_id, reply_to_sequence, reply_to_sequence]
        )
        if earlier is not None:
            raise AlreadyAnswered(rows.turn_record(earlier))
    if continues_sequence is not None:
        # Serialised as above; the unique index backs it.
        earlier = await sql.fetch_one(conn, _CONTINUATION, [session_id, continues_sequence])
        if earlier is not None:
            raise AlreadyAnswered(rows.turn_record(earlier))
    row = await sql.fetch_one(
        conn, _INSERT_TURN, [session_id, allocated["last_sequence_number"], *values]
    )
    if claim is not None and row is not None:
        holder, until = claim
        await claims.take_new(conn, row["id"], holder, until=until)
    return row


async def by_idempotency_key(session_id: int, key: str) -> Turn | None:
    # Raw, through the (session_id, idempotency_key) unique index: the ORM's
    # query building cost more than the statement.
    found = await sql.fetch_one(
        sql.connection(),
        f"SELECT {TURN_COLUMNS} FROM turn WHERE session_id = ? AND idempotency_key = ?",
        [session_id, key],
    )
    return rows.turn_record(found) if found else None


async def continuation_of(session_id: int, sequence_number: int) -> Turn | None:
    """The turn that continues reply ``sequence_number``, if it has been continued."""
    found = await sql.fetch_one(sql.connection(), _CONTINUATION, [session_id, sequence_number])
    return rows.turn_record(found) if found else None


async def reply_to(session_id: int, user_sequence: int) -> Turn | None:
    row = (
        await models.Turn.filter(session_id=session_id, reply_to_sequence=user_sequence)
        .order_by("sequence_number")
        .first()
    )
    return rows.turn(row) if row else None


async def recent(session_id: int, *, after: int, before: int | None, limit: int) -> list[Turn]:
    """Up to ``limit`` turns with after < sequence_number < before, newest first.

    Reads through the (session_id, sequence_number) unique index, so the cost
    depends on ``limit``, not on how long the session is.
    """
    upper = "" if before is None else " AND sequence_number < ?"
    params: list[Any] = [session_id, after] + ([] if before is None else [before])
    found = await sql.fetch(
        sql.connection(),
        f"SELECT {TURN_COLUMNS} FROM turn WHERE session_id = ? AND sequence_number > ?"
        f"{upper} ORDER BY sequence_number DESC LIMIT ?",
        [*params, limit],
    )
    return [rows.turn_record(record) for record in found]


async def last_sequence_at(session_id: int, moment: datetime) -> int:
    """The highest sequence number this session had written by ``moment``."""
    row = (
        await models.Turn.filter(session_id=session_id, created_at__lte=moment)
        .order_by("-sequence_number")
        .first()
        .values("sequence_number")
    )
    return int(row["sequence_number"]) if row else 0


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
    bounds, params = "", [session_id]
    if request.after is not None:
        bounds += " AND sequence_number > ?"
        params.append(request.after)
    if request.before is not None:
        bounds += " AND sequence_number < ?"
        params.append(request.before)
    backward = request.last is not None and request.first is None
    limit = request.last if backward else request.first
    if limit is None:
        limit = 100
    order = "DESC" if backward else "ASC"
    found = await sql.fetch(
        sql.connection(),
        f"SELECT * FROM (SELECT {TURN_COLUMNS}, "
        f"SUM(LENGTH(content)) OVER (ORDER BY sequence_number {order} "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS chars_before, "
        "COUNT(*) OVER () AS rows_read "
        f"FROM (SELECT * FROM turn WHERE session_id = ?{bounds} "
        f"ORDER BY sequence_number {order} LIMIT ?) AS window_rows) AS counted "
        f"WHERE COALESCE(chars_before, 0) < ? ORDER BY sequence_number {order}",
        [*params, limit + 1, content_budget],
    )
    rows_read = int(found[0]["rows_read"]) if found else 0
    kept = [rows.turn_record(record) for record in found[:limit]]
    more = rows_read > len(kept)
    if backward:
        kept.reverse()
        return Page(tuple(kept), has_next=request.before is not None, has_previous=more)
    return Page(tuple(kept), has_next=more, has_previous=request.after is not None)


async def by_id(turn_id: int) -> Turn | None:
    return (await by_ids([turn_id])).get(turn_id)


async def by_ids(ids: list[int]) -> dict[int, Turn]:
    # Raw: a page of search hits reads its turns here (the ORM's model objects
    # cost ~1 ms for 20 turns).
    found = await sql.fetch(
        sql.connection(),
        f"SELECT {TURN_COLUMNS} FROM turn WHERE id IN ({', '.join('?' for _ in ids)})",
        ids,
    )
    return {int(record["id"]): rows.turn_record(record) for record in found}


async def in_range(session_id: int, first: int, last: int) -> list[Turn]:
    found = await models.Turn.filter(
        session_id=session_id, sequence_number__gte=first, sequence_number__lte=last
    ).order_by("sequence_number")
    return [rows.turn(row) for row in found]


async def exchange_numbers(session_id: int, anchors: list[int]) -> dict[int, int]:
    """How many user turns of the session have a sequence number up to each anchor:
    two statements for any number of anchors (a count below the lowest, then the
    user turns' numbers between the lowest and the highest), both on the
    (session_id, sequence_number) index."""
    if not anchors:
        return {}
    low, high = min(anchors), max(anchors)
    users = models.Turn.filter(session_id=session_id, role=Role.USER.value)
    before = await users.filter(sequence_number__lt=low).count()
    numbers = sorted(
        await users.filter(sequence_number__gte=low, sequence_number__lte=high).values_list(
            "sequence_number", flat=True
        )
    )
    return {anchor: before + bisect_right(numbers, anchor) for anchor in anchors}
