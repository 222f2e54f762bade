"""Turns: append-only, numbered by the server inside the writing transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from api.domain.types import Role, Turn, Usage
from api.errors import NotFound
from api.store import models, rows, sql
from api.store.pages import Page, PageRequest
from api.store.writes import Refused, finished

# One statement both increments and returns the counter, so two writers can
# never read the same value: on PostgreSQL the row lock serialises them until
# commit, on SQLite the write lock does. A rollback returns the number.
_NEXT_SEQUENCE = (
    "UPDATE session SET last_sequence_number = last_sequence_number + 1 "
    "WHERE id = ? RETURNING last_sequence_number"
)


_TURN_COLUMNS = (
    "id, session_id, sequence_number, role, content, provider, model, token_count, "
    "prompt_tokens, completion_tokens, cost, interrupted, reply_to_sequence, "
    "idempotency_key, created_at"
)


class DuplicateKey(Refused):
    """A turn with this idempotency key already exists in the session."""


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
    interrupted: bool = False,
    reply_to_sequence: int | None = None,
    idempotency_key: str | None = None,
) -> Turn:
    usage = usage or Usage()
    try:
        async with in_transaction("default") as conn:
            allocated = await sql.fetch_one(conn, _NEXT_SEQUENCE, [session_id])
            if allocated is None:
                raise NotFound("No such session.", field="sessionId")
            row = await models.Turn.create(
                using_db=conn,
                session_id=session_id,
                sequence_number=allocated["last_sequence_number"],
                role=role.value,
                content=content,
                provider=provider,
                model=model,
                token_count=token_count,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost=usage.cost,
                interrupted=interrupted,
                reply_to_sequence=reply_to_sequence,
                idempotency_key=idempotency_key,
                created_at=datetime.now(UTC),
            )
    except IntegrityError as exc:
        if idempotency_key is not None:
            raise DuplicateKey(idempotency_key) from exc
        raise
    return rows.turn(row)


async def by_idempotency_key(session_id: int, key: str) -> Turn | None:
    row = await models.Turn.get_or_none(session_id=session_id, idempotency_key=key)
    return rows.turn(row) if row else None


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
        f"SELECT {_TURN_COLUMNS} FROM turn WHERE session_id = ? AND sequence_number > ?"
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


async def page(session_id: int, request: PageRequest) -> Page[Turn]:
    """One page by sequence number (keyset: ``after``/``before`` exclusive), read
    one row past the limit to know whether there is more. Raw rows, as
    ``recent`` reads them: ORM instances cost more than the query."""
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
    found = await sql.fetch(
        sql.connection(),
        f"SELECT {_TURN_COLUMNS} FROM turn WHERE session_id = ?{bounds} "
        f"ORDER BY sequence_number {'DESC' if backward else 'ASC'} LIMIT ?",
        [*params, limit + 1],
    )
    more = len(found) > limit
    kept = [rows.turn_record(record) for record in found[:limit]]
    if backward:
        kept.reverse()
        return Page(tuple(kept), has_next=request.before is not None, has_previous=more)
    return Page(tuple(kept), has_next=more, has_previous=request.after is not None)


async def by_ids(ids: list[int]) -> dict[int, Turn]:
    found = await models.Turn.filter(id__in=ids)
    return {row.id: rows.turn(row) for row in found}


async def in_range(session_id: int, first: int, last: int) -> list[Turn]:
    found = await models.Turn.filter(
        session_id=session_id, sequence_number__gte=first, sequence_number__lte=last
    ).order_by("sequence_number")
    return [rows.turn(row) for row in found]
