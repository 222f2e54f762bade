"""Full-text search over the index the 0004 migration keeps (FTS5 or tsvector).

Both engines answer the same question: the owner's entries matching every
term, best first, one page at a time. Ranks differ in scale between engines
(FTS5's bm25, PostgreSQL's ts_rank_cd); within one engine higher is better.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..domain import search_query
from ..domain.search_query import Kind, SearchQuery
from . import sql
from .readable import readable_sessions


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
    WHERE search_fts MATCH ? AND {scope} {filters}
    ORDER BY rowid DESC
    LIMIT ?
)
ORDER BY score, kind, object_id
LIMIT ? OFFSET ?
"""

# FTS5's bm25 weighs each phrase by the number of rows that hold it, and counts
# them at every search, over the whole table (fts5_aux.c, xQueryPhrase): for a
# phrase of two common words that count is most of the search (20 of 26 ms at
# 100,000 turns; the newest 1,000 matches are found in 2). A query that is one
# phrase is ranked here instead, by bm25's own formula on what FTS5 stores:
# each row's instances of the phrase (highlight() marks them), its length in
# tokens (the docsize table), the table's row and token totals (its averages
# record, id 1 of its data table), and the phrase's row count, counted at most once a minute per
# process like PostgreSQL's word statistics (so for that minute a phrase weighs
# what it weighed when counted). The same rows, ranks and order as bm25's, as
# long as the count holds. A phrase with a word twice is left to bm25:
# highlight() merges instances that overlap.
#
# highlight() adds one character per instance: the length it adds counts them.
# The bodies of the page's rows only are read afterwards.
_SQLITE_PHRASE = """
SELECT rowid, kind, object_id,
       length(highlight(search_fts, 0, char(1), '')) - length(body) AS instances,
       (SELECT sz FROM search_fts_docsize WHERE id = search_fts.rowid) AS sizes,
       (SELECT block FROM search_fts_data WHERE id = 1) AS totals
FROM search_fts
WHERE search_fts MATCH ? AND {scope} {filters}
ORDER BY rowid DESC
LIMIT ?
"""
_SQLITE_COUNT = "SELECT count(*) AS hits FROM search_fts WHERE search_fts MATCH ?"
_SQLITE_BODIES = "SELECT rowid, body FROM search_fts WHERE rowid IN ({rowids})"
BM25_K1 = 1.2  # FTS5's constants
BM25_B = 0.75
PHRASE_COUNT_SECONDS = 60.0
_PHRASE_COUNTS_KEPT = 1000
_phrase_counts: dict[str, tuple[float, int]] = {}


def ranked_here(query: SearchQuery) -> bool:
    """SQLite: ``query`` is one phrase, ranked without FTS5's count (above)."""
    if len(query.terms) != 1:
        return False
    words = [search_query.fold(word) for word in query.terms[0].words]
    return len(words) > 1 and len(set(words)) == len(words)


def _varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers, as FTS5 writes its sizes."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def bm25(instances: float, tokens: float, idf: float, average: float) -> float:
    """One phrase's bm25 score for a row, as fts5_aux.c computes it (the same
    operations in the same order, so the same double)."""
    score = 0.0
    score += idf * (
        (instances * (BM25_K1 + 1.0))
        / (instances + BM25_K1 * (1 - BM25_B + BM25_B * tokens / average))
    )
    return score


def forget_phrase_counts() -> None:
    """Count every phrase again at its next search."""
    _phrase_counts.clear()


async def _phrase_count(conn: Any, expression: str) -> int:
    now = time.monotonic()
    known = _phrase_counts.get(expression)
    if known is not None and now - known[0] < PHRASE_COUNT_SECONDS:
        return known[1]
    row = await sql.fetch_one(conn, _SQLITE_COUNT, [expression])
    hits = int(row["hits"]) if row is not None else 0
    if len(_phrase_counts) >= _PHRASE_COUNTS_KEPT:
        _phrase_counts.clear()
    _phrase_counts[expression] = (now, hits)
    return hits


def _size(blob: bytes) -> int:
    """A row's length in tokens: the sum of its columns' sizes (docsize)."""
    if max(blob, default=0) < 0x80:
        return sum(blob)  # every size one byte: most rows
    return sum(_varints(blob))


async def _sqlite_phrase(
    conn: Any, expression: str, scope: str, params: list[Any], filters: str, limit: int, offset: int
) -> list[dict[str, Any]]:
    """A one-phrase query's page on SQLite, ranked as bm25 ranks it (above)."""
    rows = await sql.fetch_rows(
        conn,
        _SQLITE_PHRASE.format(scope=scope, filters=filters),
        [expression, *params, RANKED_MATCHES],
    )
    if not rows:
        return []
    totals = _varints(rows[0][5])
    entries, tokens = totals[0], sum(totals[1:])
    hits = await _phrase_count(conn, expression)
    idf = math.log((entries - hits + 0.5) / (hits + 0.5))
    if idf <= 0.0:
        idf = 1e-6  # as bm25: a phrase in more than half the rows
    average = tokens / entries
    ranked = sorted(
        (
            (-bm25(float(instances), float(_size(sizes)), idf, average), kind, object_id, rowid)
            for rowid, kind, object_id, instances, sizes, _totals in rows
        )
    )[offset : offset + limit]
    if not ranked:
        return []
    statement = _SQLITE_BODIES.format(rowids=", ".join(str(int(r[3])) for r in ranked))
    bodies: dict[int, str] = {row[0]: row[1] for row in await sql.fetch_rows(conn, statement)}
    return [
        {"kind": kind, "object_id": object_id, "body": bodies[rowid], "rank": -score}
        for score, kind, object_id, rowid in ranked
    ]


# The page is chosen on the narrow columns; the bodies of its few rows only
# are read afterwards. ``found`` says how many matches were ranked: a window
# (below) that holds fewer than RANKED_MATCHES may have missed newer ones.
_POSTGRES = """
SELECT e.kind, e.object_id, e.body, top.rank, top.found
FROM (
    SELECT kind, object_id, ts_rank_cd(document, q) AS rank, count(*) OVER () AS found
    FROM ({newest}) AS newest
    ORDER BY rank DESC, kind, object_id
    LIMIT ? OFFSET ?
) AS top
JOIN search_entry e ON e.kind = top.kind AND e.object_id = top.object_id
ORDER BY top.rank DESC, top.kind, top.object_id
"""
_NEWEST = """
SELECT kind, object_id, document, q
FROM search_entry, to_tsquery('simple', ?) AS q
WHERE document @@ q AND {scope} {filters} {window}
ORDER BY {newest_first} DESC
LIMIT ?
"""
_WINDOW = "AND position > (SELECT max(position) FROM search_entry WHERE owner_id = ?) - ?"


# Three ways to the newest matches on PostgreSQL, chosen from the share of
# entries the query is expected to match (from the lexeme frequencies ANALYZE
# keeps): the planner cannot tell a rare word from a common one well enough
# to choose (it walked every entry for a rare word: 28 ms at 100,000 turns).
#
# * WALK: a query matching COMMON_WORD_SHARE of the entries or more walks the
#   (owner_id, position) index newest first and stops at RANKED_MATCHES
#   matches (about 10,000 entries read at 10%).
# * GIN: a query expected to match at most GIN_MATCHES entries takes all its
#   matches from the GIN index and keeps the newest ("+ 0" keeps the planner
#   off the walk). Each match costs a visit to its table row, ~2.5 us: 9 ms
#   for a word in 3% of 100,000 entries.
# * WINDOW: in between, only the newest entries are searched: enough of them
#   (WINDOW_MARGIN times what should hold RANKED_MATCHES matches) that the
#   GIN index and the position index, ANDed, usually find all of the newest
#   matches while visiting a third as many rows. When the window holds fewer
#   than RANKED_MATCHES matches, newer ones cannot be missing but older ones
#   may be, so the search runs again without it.
COMMON_WORD_SHARE = 0.1
GIN_MATCHES = 2 * RANKED_MATCHES
WINDOW_MARGIN = 1.5


class Path(enum.Enum):
    WALK = enum.auto()
    GIN = enum.auto()
    WINDOW = enum.auto()


# "+ 0" keeps the planner off the walk, for the paths that must not take it.
_ORDER = {Path.WALK: "position", Path.GIN: "position + 0", Path.WINDOW: "position + 0"}


@dataclass(frozen=True, slots=True)
class WordStatistics:
    """What ANALYZE found: each common word's share of the entries, the share
    below which a word is not listed, and how many entries there are."""

    shares: dict[str, float]
    floor: float
    entries: float


def expected_share(query: SearchQuery, stats: WordStatistics) -> float:
    """The share of entries expected to match ``query``: terms independent, a
    phrase as likely as its words together, a prefix as its listed words."""
    share = 1.0
    for term in query.terms:
        for word in term.words[:-1] if term.prefix else term.words:
            share *= stats.shares.get(word, stats.floor)
        if term.prefix:
            stem = term.words[-1]
            listed = sum(s for w, s in stats.shares.items() if w.startswith(stem))
            share *= min(1.0, max(listed, stats.floor))
    return share


def choose_path(query: SearchQuery, stats: WordStatistics | None) -> tuple[Path, int]:
    """How to find ``query``'s newest matches, and the window's size in entries."""
    if stats is None:
        return Path.GIN, 0
    share = expected_share(query, stats)
    if share >= COMMON_WORD_SHARE:
        return Path.WALK, 0
    if share * stats.entries <= GIN_MATCHES:
        return Path.GIN, 0
    return Path.WINDOW, math.ceil(WINDOW_MARGIN * RANKED_MATCHES / share)


# The last three frequencies are the minimum, the maximum and the share of
# nulls (PostgreSQL's pg_stats documentation): words not listed are rarer than
# the minimum.
_WORD_STATISTICS = """
SELECT s.most_common_elems::text::text[] AS words, s.most_common_elem_freqs AS shares,
       c.reltuples AS entries
FROM pg_stats s JOIN pg_class c ON c.oid = 'search_entry'::regclass
WHERE s.schemaname = current_schema() AND s.tablename = 'search_entry'
  AND s.attname = 'document'
"""

# Statistics change only when ANALYZE runs (autovacuum, after ~10% of the
# table changes): they are read again at most this often, per process.
STATISTICS_SECONDS = 60.0
_statistics: tuple[float, WordStatistics | None] | None = None


async def _word_statistics(conn: Any) -> WordStatistics | None:
    global _statistics
    now = time.monotonic()
    if _statistics is not None and now - _statistics[0] < STATISTICS_SECONDS:
        return _statistics[1]
    row = await sql.fetch_one(conn, _WORD_STATISTICS)
    stats = None
    if row is not None and row["words"] is not None:
        words, shares = row["words"], row["shares"]
        stats = WordStatistics(
            shares=dict(zip(words, shares[: len(words)], strict=True)),
            floor=float(shares[len(words)]),
            entries=float(row["entries"]),
        )
    _statistics = (now, stats)
    return stats


def forget_statistics() -> None:
    """Read the statistics again at the next search (after an ANALYZE)."""
    global _statistics
    _statistics = None


# What a user may read (issue 9): their own turns and sessions, the spaces
# they are a member of with those spaces' checkpoints, and the turns and
# sessions shared with those spaces. Entries keep the owner they were written
# with, so a user who shares nothing (and left none of the spaces they made)
# is scoped by ``owner_id = ?`` alone, the (owner_id, position) index's query.
_OWN = f"kind IN ({Kind.TURN:d}, {Kind.SESSION:d}) AND owner_id = ?"
_MEMBER_SPACES = "SELECT space_id FROM space_member WHERE user_id = ?"
_SHARED = readable_sessions("s", through_space_only=True)
_SHARED_SESSIONS = f"SELECT s.id FROM session s WHERE {_SHARED.sql}"
_SHARED_SCOPE = (
    f"(({_OWN}) OR space_id IN ({_MEMBER_SPACES}) OR session_id IN ({_SHARED_SESSIONS}))"
)

# The WALK for a user who reads more than their own entries (PostgreSQL): no
# index gives the OR above newest first, so the walk read and sorted every
# entry of the table (66-87 ms at 100,000 turns). Instead each part of the
# scope is walked newest first on its own index (the owner's on
# search_entry_newest, each member space and each shared session on 0017's)
# and the RANKED_MATCHES newest of the walks are kept: the same entries. The
# parts are made disjoint (a space's or session's walk skips what an earlier
# part holds), so no entry is counted twice. ``ts_match_vq`` is ``@@`` that
# the planner cannot answer from the GIN index: for a query this common it
# otherwise read all the matches of a space to sort them.
_READABLE_NEWEST = f"""
SELECT kind, object_id, document, to_tsquery('simple', ?) AS q
FROM (
    (SELECT kind, object_id, document, position FROM search_entry, to_tsquery('simple', ?) AS q
     WHERE ts_match_vq(document, q) AND {_OWN} {{filters}}
     ORDER BY position DESC LIMIT ?)
    UNION ALL
    (SELECT found.* FROM ({_MEMBER_SPACES}) AS part CROSS JOIN LATERAL (
        SELECT kind, object_id, document, position FROM search_entry, to_tsquery('simple', ?) AS q
        WHERE space_id = part.space_id AND ts_match_vq(document, q) AND NOT ({_OWN}) {{filters}}
        ORDER BY position DESC LIMIT ?) AS found)
    UNION ALL
    (SELECT found.* FROM ({_SHARED_SESSIONS}) AS part CROSS JOIN LATERAL (
        SELECT kind, object_id, document, position FROM search_entry, to_tsquery('simple', ?) AS q
        WHERE session_id = part.id AND ts_match_vq(document, q) AND NOT ({_OWN})
          AND (space_id IS NULL OR space_id NOT IN ({_MEMBER_SPACES})) {{filters}}
        ORDER BY position DESC LIMIT ?) AS found)
) AS readable
ORDER BY position DESC
LIMIT ?
"""


def _scope(owner_id: int, shared: bool) -> tuple[str, list[Any]]:
    if not shared:
        return "owner_id = ?", [owner_id]
    return _SHARED_SCOPE, [owner_id, owner_id, *_SHARED.params(owner_id)]


async def find(
    owner_id: int,
    query: SearchQuery,
    *,
    space_id: int | None,
    kinds: Sequence[Kind] | None,
    limit: int,
    offset: int,
    shared: bool = False,
) -> list[Entry]:
    """Up to ``limit`` entries after the first ``offset``, best first, among the
    ``RANKED_MATCHES`` newest matches. ``shared``: the user reads more than
    their own entries (``members.shares_anything``)."""
    conn = sql.connection()
    postgres = sql.dialect(conn) == "postgres"
    filters: list[str] = []
    params: list[Any] = []
    if kinds is not None:
        filters.append(f"AND kind IN ({sql.marks(kinds)})")
        params += [int(k) for k in kinds]
    if space_id is not None:
        # Turns and sessions follow their session into or out of a space, so
        # their space is read from the session, never stored with them.
        filters.append(
            "AND (space_id = ? OR session_id IN (SELECT id FROM session WHERE space_id = ?))"
        )
        params += [space_id, space_id]
    where = Where(owner_id, shared, " ".join(filters), params)
    if not postgres and ranked_here(query):
        scope, scope_params = _scope(owner_id, shared)
        rows = await _sqlite_phrase(
            conn,
            search_query.to_fts5(query),
            scope,
            [*scope_params, *params],
            where.filters,
            limit,
            offset,
        )
    elif not postgres:
        scope, scope_params = _scope(owner_id, shared)
        rows = await sql.fetch(
            conn,
            _SQLITE.format(scope=scope, filters=where.filters),
            [search_query.to_fts5(query), *scope_params, *params, RANKED_MATCHES, limit, offset],
        )
    else:
        path, window = choose_path(query, await _word_statistics(conn))
        rows = await _postgres(conn, query, where, path, window, limit, offset)
        if path is Path.WINDOW and (rows[0]["found"] if rows else 0) < RANKED_MATCHES:
            rows = await _postgres(conn, query, where, Path.GIN, 0, limit, offset)
    return [
        Entry(
            kind=Kind(row["kind"]),
            object_id=int(row["object_id"]),
            body=row["body"],
            rank=float(row["rank"]),
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class Where:
    """Which entries a search may find: whose, and the caller's filters
    (``AND ...`` clauses, with their ``params``)."""

    owner_id: int
    shared: bool
    filters: str
    params: list[Any]


async def _postgres(
    conn: Any,
    query: SearchQuery,
    where: Where,
    path: Path,
    window: int,
    limit: int,
    offset: int,
) -> list[dict[str, Any]]:
    tsquery = search_query.to_tsquery(query)
    owner, filters = where.owner_id, where.params
    if where.shared and path is Path.WALK:
        newest = _READABLE_NEWEST.format(filters=where.filters)
        params = [
            tsquery,
            *[tsquery, owner, *filters, RANKED_MATCHES],
            *[owner, tsquery, owner, *filters, RANKED_MATCHES],
            *[*_SHARED.params(owner), tsquery, owner, owner, *filters, RANKED_MATCHES],
            RANKED_MATCHES,
        ]
    else:
        windowed = path is Path.WINDOW
        scope, scope_params = _scope(owner, where.shared)
        newest = _NEWEST.format(
            scope=scope,
            filters=where.filters,
            window=_WINDOW if windowed else "",
            newest_first=_ORDER[path],
        )
        params = [
            tsquery,
            *scope_params,
            *filters,
            *([owner, window] if windowed else []),
            RANKED_MATCHES,
        ]
    statement = _POSTGRES.format(newest=newest)
    return await sql.fetch(conn, statement, [*params, limit, offset])
