"""Checkpoints, their lineage and the branches that point into it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..domain.pages import Page, PageRequest
from ..domain.types import Authorship, Checkpoint, CheckpointContent, LineageEntry, TurnRange
from ..errors import ErrorCode, InputError, NotFound
from . import rows, sql
from .paging import keyset
from .tables import BRANCH, CHECKPOINT, SPACE
from .writes import finished

_COLUMNS = CHECKPOINT.select()

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

# Every ancestor of a checkpoint (itself included) over both parent links:
# each row of `up` yields its parent (k = 0) and its merge parent (k = 1).
_UP = """
{name}(id) AS (
    SELECT CAST(? AS BIGINT)
    UNION
    SELECT CASE WHEN k.n = 0 THEN c.parent_id ELSE c.merge_parent_id END
    FROM {name} JOIN checkpoint c ON c.id = {name}.id
    CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1) k
    WHERE CASE WHEN k.n = 0 THEN c.parent_id ELSE c.merge_parent_id END IS NOT NULL
)"""


# A child always has a larger id than its parents, so the greatest common
# ancestor id is one no other common ancestor descends from: a best one.
def _ancestors_of_both(a: str, b: str, select: str) -> str:
    """``select`` over the ancestors of two checkpoints (``a``, ``b``: their
    CTEs' names, each parameter a checkpoint's id)."""
    return f"WITH RECURSIVE {_UP.format(name=a)},{_UP.format(name=b)}\n{select}"


_COMMON_ANCESTOR = _ancestors_of_both(
    "a", "b", "SELECT MAX(a.id) AS id FROM a JOIN b ON a.id = b.id"
)

# What a line did since a base: ancestors of the tip (itself included) that
# are not ancestors of the base (nor the base).
_SINCE = _ancestors_of_both(
    "t", "b", "SELECT t.id FROM t WHERE t.id NOT IN (SELECT id FROM b) ORDER BY t.id"
)


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
    merge_parent: Checkpoint | None = None,
    expected_head_id: int | None = None,
    author: Authorship | None = None,
) -> Checkpoint:
    """Save a checkpoint on ``branch_name`` with parent = that branch's head,
    and move the head to it — one transaction, serialised per space.

    A merge names its ``merge_parent`` and the head it was computed against
    (``expected_head_id``); if the head has moved since, nothing is saved
    (CONFLICT)."""
    now = datetime.now(UTC)
    async with sql.transaction() as conn:
        # Touching the space first takes its row lock (PostgreSQL) or the
        # write lock (SQLite) before the head is read, so two savers on one
        # branch cannot both take the same parent.
        touched = await sql.returning(
            conn,
            "UPDATE space SET updated_at = ? WHERE id = ? RETURNING COALESCE(origin_space_id, id)",
            [now, space_id],
        )
        if not touched:
            raise NotFound("No such space.", field="spaceId")
        [(hash_space_id,)] = touched
        found = await sql.fetch_rows(
            conn,
            f"SELECT b.id, {CHECKPOINT.select('c')} FROM branch b "
            "JOIN checkpoint c ON c.id = b.head_id WHERE b.space_id = ? AND b.name = ?",
            [space_id, branch_name],
        )
        branch_id = found[0][0] if found else None
        parent = rows.checkpoint(found[0][1:]) if found else None
        if merge_parent is not None and (parent is None or parent.id != expected_head_id):
            raise _moved(branch_name)
        # Only a merge passes merge_parent_hash: every other hash is computed
        # exactly as before merges existed.
        merge = {"merge_parent_hash": merge_parent.hash} if merge_parent is not None else {}
        digest = compute_hash(
            content,
            # An imported space goes on hashing with its origin's id.
            space_id=hash_space_id,
            parent_hash=parent.hash if parent else None,
            created_at=now,
            branch_name=branch_name,
            author_agent=author_agent,
            **merge,
        )
        values = dict(
            hash=digest,
            space_id=space_id,
            parent_id=parent.id if parent else None,
            merge_parent_id=merge_parent.id if merge_parent is not None else None,
            branch_name=branch_name,
            **content.columns(),
            item_ids=content.item_ids.columns() if content.item_ids is not None else None,
            author_agent=author_agent,
            source_session_id=source_session_id,
            source_first=source_turn_range.first if source_turn_range else None,
            source_last=source_turn_range.last if source_turn_range else None,
            base_sequence=base_sequence,
            author_id=author.user_id if author else None,
            author_token=author.token_name if author else None,
            created_at=now,
        )
        saved = rows.checkpoint(await sql.insert(conn, CHECKPOINT, values))
        if branch_id is not None:
            head = {"head_id": saved.id, "updated_at": now}
            await sql.update(conn, BRANCH, head, "id = ?", [branch_id])
        else:
            await sql.insert(
                conn,
                BRANCH,
                dict(
                    space_id=space_id,
                    name=branch_name,
                    head_id=saved.id,
                    created_at=now,
                    updated_at=now,
                ),
            )
    return saved


@finished
async def fast_forward(space_id: int, branch_name: str, *, from_id: int, to_id: int) -> None:
    """Move ``branch_name``'s head from ``from_id`` to ``to_id``; CONFLICT if it
    is no longer at ``from_id``."""
    now = datetime.now(UTC)
    async with sql.transaction() as conn:
        await sql.update(conn, SPACE, {"updated_at": now}, "id = ?", [space_id])
        moved = await sql.update(
            conn,
            BRANCH,
            {"head_id": to_id, "updated_at": now},
            "space_id = ? AND name = ? AND head_id = ?",
            [space_id, branch_name, from_id],
        )
        if not moved:
            raise _moved(branch_name)


def _moved(branch_name: str) -> InputError:
    return InputError(
        f'The branch "{branch_name}" has moved since this merge was prepared; preview it again.',
        code=ErrorCode.CONFLICT,
        field="into",
    )


async def common_ancestor_id(a_id: int, b_id: int) -> int | None:
    """The nearest checkpoint both descend from over either parent link (one statement)."""
    found = await sql.fetch_value(sql.connection(), _COMMON_ANCESTOR, [a_id, b_id])
    return None if found is None else int(found)


async def since(tip_id: int, base_id: int | None) -> list[Checkpoint]:
    """The checkpoints a line added after ``base_id``, up to and including the
    tip, oldest first (two statements); everything up to the tip without a base."""
    found = await sql.fetch(sql.connection(), _SINCE, [tip_id, base_id or 0])
    order = [int(r["id"]) for r in found]
    by_id = await get_many(order)
    return [by_id[i] for i in order if i in by_id]


async def branch_exists(space_id: int, name: str) -> bool:
    return await head_id(space_id, branch_name=name) is not None


async def _select(where: str, params: list[Any]) -> list[Checkpoint]:
    found = await sql.fetch_rows(
        sql.connection(), f"SELECT {_COLUMNS} FROM checkpoint WHERE {where}", params
    )
    return [rows.checkpoint(record) for record in found]


async def get(checkpoint_id: int, *, field: str = "checkpointId") -> Checkpoint:
    found = await _select("id = ?", [checkpoint_id])
    if not found:
        raise NotFound("No such checkpoint.", field=field)
    return found[0]


async def get_many(ids: list[int]) -> dict[int, Checkpoint]:
    if not ids:
        return {}
    found = await _select(f"id IN ({sql.marks(ids)})", list(ids))
    return {checkpoint.id: checkpoint for checkpoint in found}


async def head_id(space_id: int, branch_name: str) -> int | None:
    # Read on every message in HEAD mode.
    found = await sql.fetch_value(
        sql.connection(),
        "SELECT head_id FROM branch WHERE space_id = ? AND name = ?",
        [space_id, branch_name],
    )
    return None if found is None else int(found)


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
    result: dict[int, list[Checkpoint]] = {i: [] for i in parent_ids}
    if not parent_ids:
        return result
    found = await _select(f"parent_id IN ({sql.marks(parent_ids)}) ORDER BY id", list(parent_ids))
    for checkpoint in found:
        assert checkpoint.parent_id is not None
        result[checkpoint.parent_id].append(checkpoint)
    return result


HASH_LENGTH = 64  # SHA-256, hex


async def by_hash_prefix(space_id: int, prefix: str, *, limit: int = 2) -> list[Checkpoint]:
    # Hex digits sort below "g", so [prefix, prefix + "g") is exactly the
    # hashes starting with prefix, answered by the (space_id, hash) index. A
    # whole hash is looked up as it is: prefix + "g" would be one character
    # longer than the column (PostgreSQL's varchar(64) refuses it).
    if len(prefix) > HASH_LENGTH:
        return []
    if len(prefix) == HASH_LENGTH:
        return await _select("space_id = ? AND hash = ? LIMIT ?", [space_id, prefix, limit])
    return await _select(
        "space_id = ? AND hash >= ? AND hash < ? LIMIT ?",
        [space_id, prefix, prefix + "g", limit],
    )


async def branches(space_ids: list[int]) -> dict[int, list[tuple[str, int]]]:
    """(name, head checkpoint id) of every branch, per space, by name."""
    result: dict[int, list[tuple[str, int]]] = {i: [] for i in space_ids}
    if not space_ids:
        return result
    found = await sql.fetch_rows(
        sql.connection(),
        "SELECT space_id, name, head_id FROM branch "
        f"WHERE space_id IN ({sql.marks(space_ids)}) ORDER BY name",
        list(space_ids),
    )
    for space_id, name, head in found:
        result[space_id].append((name, head))
    return result


async def lineage_entries(space_id: int, *, after: int | None, limit: int) -> Page[LineageEntry]:
    """Up to ``limit`` checkpoints of the space with an id above ``after``,
    oldest first, as a graph draws them: one statement, no ORM rows (building
    10,000 model instances with their content cost more than the query)."""
    page_of = keyset(PageRequest(first=limit, after=after), "id")
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT {rows.LINEAGE_COLUMNS} FROM checkpoint WHERE space_id = ?{page_of.bounds} "
        "ORDER BY id LIMIT ?",
        [space_id, *page_of.params, limit + 1],
    )
    return page_of.page([rows.lineage_entry(r) for r in found[:limit]], more=len(found) > limit)


# A page of a space's checkpoints (``{where}``, ``{order}``: the page's
# condition and direction, the last parameter its LIMIT), and in the same
# statement the checkpoints of the space its rows name as parent or merge
# parent that are not among them (``extra`` 1): the first node of a page
# after the first continues one on the page before. A parent in another
# space is not read here (the loader reads it, for whoever may).
_PAGE_WITH_PARENTS = (
    f"WITH page AS (SELECT {_COLUMNS} FROM checkpoint WHERE {{where}} "
    "ORDER BY id {order} LIMIT ?) "
    "SELECT page.*, 0 AS extra FROM page UNION ALL "
    f"SELECT {_COLUMNS}, 1 AS extra FROM checkpoint WHERE space_id = ? "
    "AND id {wanted} ORDER BY extra, id {order}"
)
# The ids wanted, as each database looks them up by its primary key:
# PostgreSQL's planner scanned the whole table for an IN (subquery) of a
# small space (its estimate of the ids is the page's size); an array is
# looked up id by id.
_PARENT_IDS = (
    "SELECT parent_id FROM page UNION SELECT merge_parent_id FROM page EXCEPT SELECT id FROM page"
)
_WANTED = {"postgres": f"= ANY(ARRAY({_PARENT_IDS}))", "sqlite": f"IN ({_PARENT_IDS})"}
_EXTRA = len(CHECKPOINT.columns)  # the position of ``extra`` in a row


async def page(
    space_id: int, request: PageRequest
) -> tuple[Page[Checkpoint], tuple[Checkpoint, ...]]:
    """One page of the space's checkpoints by id (``keyset``: ``after``/``before``
    exclusive, one row past the limit);
    and, read with it (one statement), the other checkpoints of the space the
    page's checkpoints name as parents, with the row past the limit: what a
    lineage page asks for next, without a statement of its own."""
    page_of = keyset(request, "id")
    limit = page_of.limit
    conn = sql.connection()
    wanted = _WANTED["postgres" if sql.dialect(conn) == "postgres" else "sqlite"]
    found = await sql.fetch_rows(
        conn,
        _PAGE_WITH_PARENTS.format(
            where="space_id = ?" + page_of.bounds, order=page_of.order, wanted=wanted
        ),
        [space_id, *page_of.params, limit + 1, space_id],
    )
    read = [rows.checkpoint(record) for record in found]
    on_page = sum(1 for record in found if not record[_EXTRA])
    kept, others = read[: min(limit, on_page)], tuple(read[limit:on_page] + read[on_page:])
    return page_of.page(kept, more=on_page > limit), others
