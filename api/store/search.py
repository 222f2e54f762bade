"""Full-text search over the index the 0004 migration keeps (FTS5 or tsvector).

Both engines answer the same question: the owner's entries matching every
term, best first, one page at a time. Ranks differ in scale between engines
(FTS5's bm25, PostgreSQL's ts_rank_cd); within one engine higher is better.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from api.domain import search_query
from api.domain.search_query import SearchQuery
from api.store import sql


class Kind(enum.IntEnum):
    """The entry kinds, as the migration numbers them."""

    TURN = 0
    CHECKPOINT = 1
    SESSION = 2
    SPACE = 3


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    object_id: int
    body: str
    rank: float


# How many matches are ranked: the newest ones. Ranking every match of a
# word found in a quarter of 100,000 turns takes 30-50 ms (bm25 and
# ts_rank_cd read each match); the newest 1,000 take a few. A word that
# common needs a second word to find older text.
RANKED_MATCHES = 1000

# bm25 is computed for the rows the inner query returns only: FTS5 walks the
# matches newest first (rowid order) and stops at the limit.
_SQLITE = """
SELECT kind, object_id, body, -score AS rank
FROM (
    SELECT kind, object_id, body, bm25(search_fts) AS score
    FROM search_fts
    WHERE search_fts MATCH ? AND owner_id = ? {filters}
    ORDER BY rowid DESC
    LIMIT ?
)
ORDER BY score, kind, object_id
LIMIT ? OFFSET ?
"""

# The page is chosen on the narrow columns; the bodies of its few rows only
# are read afterwards.
_POSTGRES = """
SELECT e.kind, e.object_id, e.body, top.rank
FROM (
    SELECT kind, object_id, ts_rank_cd(document, q) AS rank
    FROM (
        SELECT kind, object_id, document, q
        FROM search_entry, to_tsquery('simple', ?) AS q
        WHERE document @@ q AND owner_id = ? {filters}
        ORDER BY {newest_first} DESC
        LIMIT ?
    ) AS newest
    ORDER BY rank DESC, kind, object_id
    LIMIT ? OFFSET ?
) AS top
JOIN search_entry e ON e.kind = top.kind AND e.object_id = top.object_id
ORDER BY top.rank DESC, top.kind, top.object_id
"""


# Two ways to the newest matches on PostgreSQL. The planner cannot tell a
# rare word from a common one well enough to choose (it walked every entry
# for a rare word: 28 ms at 100,000 turns), so the query chooses from the
# lexeme frequencies ANALYZE keeps: walking the (owner_id, position) index
# newest first finds 1,000 matches of a word in 10%+ of entries after
# ~10,000 entries; for anything rarer, the GIN index finds all matches and a
# top-N sort keeps the newest ("+ 0" keeps the planner off the walk).
COMMON_WORD_SHARE = 0.1
_WALK = "position"
_GIN = "position + 0"

_WORD_SHARES = """
SELECT most_common_elems::text::text[] AS words, most_common_elem_freqs AS shares
FROM pg_stats WHERE tablename = 'search_entry' AND attname = 'document'
"""


async def _newest_first(conn: Any, query: SearchQuery) -> str:
    """The ORDER BY expression for ``query``: the index walk when every term
    has a word found in at least COMMON_WORD_SHARE of the entries."""
    row = await sql.fetch_one(conn, _WORD_SHARES)
    if row is None or row["words"] is None:
        return _GIN
    shares = dict(zip(row["words"], row["shares"], strict=False))
    common = all(
        any(shares.get(word, 0.0) >= COMMON_WORD_SHARE for word in term.words)
        for term in query.terms
        if not term.prefix
    ) and any(not term.prefix for term in query.terms)
    return _WALK if common else _GIN


async def find(
    owner_id: int,
    query: SearchQuery,
    *,
    space_id: int | None,
    kinds: Sequence[Kind] | None,
    limit: int,
    offset: int,
) -> list[Entry]:
    """Up to ``limit`` entries after the first ``offset``, best first, among the
    ``RANKED_MATCHES`` newest matches."""
    conn = sql.connection()
    postgres = sql.dialect(conn) == "postgres"
    filters: list[str] = []
    params: list[Any] = []
    if kinds is not None:
        filters.append(f"AND kind IN ({', '.join('?' for _ in kinds)})")
        params += [int(k) for k in kinds]
    if space_id is not None:
        # Turns and sessions follow their session into or out of a space, so
        # their space is read from the session, never stored with them.
        filters.append(
            "AND (space_id = ? OR session_id IN (SELECT id FROM session WHERE space_id = ?))"
        )
        params += [space_id, space_id]
    template = (
        _POSTGRES.replace("{newest_first}", await _newest_first(conn, query))
        if postgres
        else _SQLITE
    )
    engine_query = search_query.to_tsquery(query) if postgres else search_query.to_fts5(query)
    rows = await sql.fetch(
        conn,
        template.format(filters=" ".join(filters)),
        [engine_query, owner_id, *params, RANKED_MATCHES, limit, offset],
    )
    return [
        Entry(
            kind=Kind(row["kind"]),
            object_id=int(row["object_id"]),
            body=row["body"],
            rank=float(row["rank"]),
        )
        for row in rows
    ]
