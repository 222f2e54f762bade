"""Checkpoints, their lineage and the branches that point into it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from tortoise.transactions import in_transaction

from api.domain.types import Checkpoint, CheckpointContent, TurnRange
from api.errors import NotFound
from api.store import models, rows, sql
from api.store.pages import Page, PageRequest
from api.store.paging import keyset_page
from api.store.writes import finished

HashFunction = Callable[..., str]

# The tip and up to `depth` ancestors, nearest first, in one statement.
_CHAIN = """
WITH RECURSIVE chain(id, parent_id, depth) AS (
    SELECT id, parent_id, 0 FROM checkpoint WHERE id = ?
    UNION ALL
    SELECT c.id, c.parent_id, chain.depth + 1
    FROM checkpoint c JOIN chain ON c.id = chain.parent_id
    WHERE chain.depth < ?
)
SELECT id, depth FROM chain ORDER BY depth
"""


@finished
async def create(
    *,
    space_id: int,
    branch_name: str,
    content: CheckpointContent,
    author_agent: str,
    source_session_id: int | None,
    source_turn_range: TurnRange | None,
    base_sequence: int,
    compute_hash: HashFunction,
) -> Checkpoint:
    """Save a checkpoint on ``branch_name`` with parent = that branch's head,
    and move the head to it — one transaction, serialised per space."""
    now = datetime.now(UTC)
    async with in_transaction("default") as conn:
        # Touching the space first takes its row lock (PostgreSQL) or the
        # write lock (SQLite) before the head is read, so two savers on one
        # branch cannot both take the same parent.
        await models.Space.filter(id=space_id).using_db(conn).update(updated_at=now)
        space = await models.Space.get(id=space_id, using_db=conn)
        branch = await models.Branch.get_or_none(space_id=space_id, name=branch_name, using_db=conn)
        parent = (
            await models.Checkpoint.get(id=branch.head_id, using_db=conn)  # type: ignore[attr-defined]
            if branch
            else None
        )
        digest = compute_hash(
            content,
            # An imported space goes on hashing with its origin's id.
            space_id=space.origin_space_id or space_id,
            parent_hash=parent.hash if parent else None,
            created_at=now,
            branch_name=branch_name,
            author_agent=author_agent,
        )
        row = await models.Checkpoint.create(
            using_db=conn,
            hash=digest,
            space_id=space_id,
            parent_id=parent.id if parent else None,
            branch_name=branch_name,
            title=content.title,
            objective=content.objective,
            summary=content.summary,
            decisions=list(content.decisions),
            tasks=list(content.tasks),
            open_questions=list(content.open_questions),
            entities=list(content.entities),
            author_agent=author_agent,
            source_session_id=source_session_id,
            source_first=source_turn_range.first if source_turn_range else None,
            source_last=source_turn_range.last if source_turn_range else None,
            base_sequence=base_sequence,
            created_at=now,
        )
        if branch:
            await (
                models.Branch.filter(id=branch.id)
                .using_db(conn)
                .update(head_id=row.id, updated_at=now)
            )
        else:
            await models.Branch.create(
                using_db=conn,
                space_id=space_id,
                name=branch_name,
                head_id=row.id,
                created_at=now,
                updated_at=now,
            )
    return rows.checkpoint(row)


async def branch_exists(space_id: int, name: str) -> bool:
    return await models.Branch.filter(space_id=space_id, name=name).exists()


async def get(checkpoint_id: int, *, field: str = "checkpointId") -> Checkpoint:
    row = await models.Checkpoint.get_or_none(id=checkpoint_id)
    if row is None:
        raise NotFound("No such checkpoint.", field=field)
    return rows.checkpoint(row)


async def get_many(ids: list[int]) -> dict[int, Checkpoint]:
    found = await models.Checkpoint.filter(id__in=ids)
    return {row.id: rows.checkpoint(row) for row in found}


async def head_id(space_id: int, branch_name: str) -> int | None:
    branch = await models.Branch.get_or_none(space_id=space_id, name=branch_name)
    return int(branch.head_id) if branch is not None else None  # type: ignore[attr-defined]


async def head(space_id: int, branch_name: str) -> Checkpoint | None:
    tip = await head_id(space_id, branch_name)
    return await get(tip) if tip is not None else None


async def chain(tip_id: int, depth: int) -> list[Checkpoint]:
    """The tip and up to ``depth - 1`` ancestors, nearest first (two statements)."""
    if depth <= 0:
        return []
    conn = sql.connection()
    found = await sql.fetch(conn, _CHAIN, [tip_id, depth - 1])
    order = [int(r["id"]) for r in found]
    by_id = await get_many(order)
    return [by_id[i] for i in order if i in by_id]


async def children(parent_ids: list[int]) -> dict[int, list[Checkpoint]]:
    found = await models.Checkpoint.filter(parent_id__in=parent_ids).order_by("id")
    result: dict[int, list[Checkpoint]] = {i: [] for i in parent_ids}
    for row in found:
        result[row.parent_id].append(rows.checkpoint(row))  # type: ignore[attr-defined]
    return result


async def by_hash_prefix(space_id: int, prefix: str, *, limit: int = 2) -> list[Checkpoint]:
    # Hex digits sort below "g", so [prefix, prefix + "g") is exactly the
    # hashes starting with prefix, answered by the (space_id, hash) index.
    found = await models.Checkpoint.filter(
        space_id=space_id, hash__gte=prefix, hash__lt=prefix + "g"
    ).limit(limit)
    return [rows.checkpoint(row) for row in found]


async def branches(space_ids: list[int]) -> dict[int, list[tuple[str, int]]]:
    """(name, head checkpoint id) of every branch, per space, by name."""
    found = await models.Branch.filter(space_id__in=space_ids).order_by("name")
    result: dict[int, list[tuple[str, int]]] = {i: [] for i in space_ids}
    for row in found:
        result[row.space_id].append((row.name, row.head_id))  # type: ignore[attr-defined]
    return result


async def page(space_id: int, request: PageRequest) -> Page[Checkpoint]:
    query = models.Checkpoint.filter(space_id=space_id)
    return await keyset_page(query, "id", request, rows.checkpoint)
