"""The full-text index: kept by triggers, queried through the sanitiser, on both engines."""

from __future__ import annotations

import importlib

import pytest
from starlette.applications import Starlette
from tortoise.transactions import in_transaction

from api.domain import search_query
from api.domain.hashing import checkpoint_hash
from api.domain.types import CheckpointContent, MemoryScope, Role, SpaceRole, Visibility
from api.domain.validation import FieldProblem
from api.store import checkpoints, members, search, sessions, spaces, sql, turns
from api.store.search import Kind
from tests.support.queries import count_statements
from tests.support.store import save


async def _session(owner: int, space_id: int | None, title: str = "") -> int:
    session = await sessions.create(
        owner,
        title=title,
        space_id=space_id,
        memory_scope=MemoryScope.LATEST_1,
        provider="offline",
        model="echo",
    )
    return session.id


async def _turn(session_id: int, content: str) -> int:
    return (await turns.append(session_id, role=Role.USER, content=content, token_count=1)).id


async def _find(owner: int, text: str, **options: object) -> list[tuple[Kind, str]]:
    found = await search.find(
        owner,
        search_query.parse(text),
        space_id=options.get("space_id"),  # type: ignore[arg-type]
        kinds=options.get("kinds"),  # type: ignore[arg-type]
        limit=50,
        offset=0,
    )
    return [(e.kind, e.body) for e in found]


async def _other_owner() -> int:
    conn = sql.connection()
    row = await sql.fetch_one(
        conn,
        "INSERT INTO smriti_user (name, created_at) VALUES (?, CURRENT_TIMESTAMP) RETURNING id",
        ["mallory"],
    )
    assert row is not None
    return int(row["id"])


def _postgres() -> bool:
    return sql.dialect(sql.connection()) == "postgres"


async def test_words_in_any_order_phrases_and_prefixes(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "The red fox jumps over the fence.")
    await _turn(sid, "A fox, red as rust.")
    await _turn(sid, "Checkpointing keeps the lineage.")
    await _turn(sid, "Checkout the branch, then check it.")

    # Ranked differently by each engine (bm25 favours the shorter text,
    # ts_rank_cd the closer words); the order is tested below.
    assert sorted(await _find(owner, "fox red")) == [
        (Kind.TURN, "A fox, red as rust."),
        (Kind.TURN, "The red fox jumps over the fence."),
    ]
    assert await _find(owner, '"red fox"') == [(Kind.TURN, "The red fox jumps over the fence.")]
    assert await _find(owner, "checkp*") == [(Kind.TURN, "Checkpointing keeps the lineage.")]
    assert await _find(owner, "check") == [(Kind.TURN, "Checkout the branch, then check it.")]
    assert await _find(owner, '"the bran*"') == [(Kind.TURN, "Checkout the branch, then check it.")]


async def test_more_occurrences_rank_first(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "ocean")
    await _turn(sid, "ocean ocean ocean")
    assert await _find(owner, "ocean") == [
        (Kind.TURN, "ocean ocean ocean"),
        (Kind.TURN, "ocean"),
    ]


async def test_accents_fold_on_sqlite_and_are_exact_on_postgres(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "Meet at the Café Müller")
    await _turn(sid, "नमस्ते दुनिया")
    assert await _find(owner, "café") == [(Kind.TURN, "Meet at the Café Müller")]
    assert await _find(owner, "MÜLLER") == [(Kind.TURN, "Meet at the Café Müller")]
    assert await _find(owner, "दुनिया") == [(Kind.TURN, "नमस्ते दुनिया")]
    # FTS5's remove_diacritics folds accents; PostgreSQL's `simple` does not.
    expected = [] if _postgres() else [(Kind.TURN, "Meet at the Café Müller")]
    assert await _find(owner, "cafe") == expected


async def test_checkpoints_sessions_and_spaces_are_indexed_and_renames_reindexed(
    app: Starlette,
) -> None:
    owner = await spaces.local_user_id()
    space = await spaces.create(owner, "Garden", "Tomatoes and basil")
    sid = await _session(owner, space.id, title="Seedlings")
    await save(space.id, sid, "Planting plan")
    await checkpoints.create(
        space_id=space.id,
        branch_name="main",
        content=CheckpointContent(
            title="Watering",
            objective="Keep roots moist",
            summary="Water at dawn",
            decisions=("Drip irrigation",),
            tasks=("Buy hoses",),
            open_questions=("How much basil?",),
            entities=("Rainbarrel",),
        ),
        author_agent="user",
        source_session_id=sid,
        source_turn_range=None,
        base_sequence=0,
        compute_hash=checkpoint_hash,
    )
    watering = (
        Kind.CHECKPOINT,
        "Watering\nKeep roots moist\nWater at dawn\nDrip irrigation\n"
        "Buy hoses\nHow much basil?\nRainbarrel",
    )
    garden = (Kind.SPACE, "Garden\nTomatoes and basil")
    # bm25 ranks the shorter text first; ts_rank_cd ties them (no length
    # normalisation) and the tie goes by kind.
    expected = [watering, garden] if _postgres() else [garden, watering]
    assert await _find(owner, "basil") == expected
    assert [k for k, _ in await _find(owner, "rainbarrel hoses")] == [Kind.CHECKPOINT]
    assert await _find(owner, "seedlings") == [(Kind.SESSION, "Seedlings")]

    await sessions.configure(owner, sid, title="Sprouts")
    await spaces.update(owner, space.id, name="Orchard", description=None, roles=[SpaceRole.OWNER])
    assert await _find(owner, "seedlings") == []
    assert await _find(owner, "sprouts") == [(Kind.SESSION, "Sprouts")]
    assert await _find(owner, "orchard") == [(Kind.SPACE, "Orchard\nTomatoes and basil")]
    assert await _find(owner, "basil", kinds=[Kind.SPACE]) == [
        (Kind.SPACE, "Orchard\nTomatoes and basil")
    ]


async def test_another_owners_and_another_spaces_rows_are_not_found(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    other = await _other_owner()
    mine = await spaces.create(owner, "Mine", "")
    elsewhere = await spaces.create(owner, "Elsewhere", "")
    theirs = await spaces.create(other, "Theirs", "secret zebra")
    await _turn(await _session(other, theirs.id), "zebra in their session")
    await _turn(await _session(owner, mine.id), "zebra in my space")
    await _turn(await _session(owner, elsewhere.id), "zebra elsewhere")
    await _turn(await _session(owner, None), "zebra unattached")

    assert sorted(body for _, body in await _find(owner, "zebra")) == [
        "zebra elsewhere",
        "zebra in my space",
        "zebra unattached",
    ]
    assert await _find(owner, "zebra", space_id=mine.id) == [(Kind.TURN, "zebra in my space")]
    assert await _find(owner, "secret") == []


async def test_deleting_a_session_or_space_removes_its_entries(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    space = await spaces.create(owner, "Doomed space", "")
    sid = await _session(owner, space.id, title="Doomed session")
    await _turn(sid, "walrus one")
    await save(space.id, sid, "walrus checkpoint")
    other_sid = await _session(owner, None)
    await _turn(other_sid, "walrus survives")

    await sessions.delete(owner, sid)
    # Equal ranks on both engines: ties go by kind (turns first), then id.
    assert await _find(owner, "walrus") == [
        (Kind.TURN, "walrus survives"),
        (Kind.CHECKPOINT, "walrus checkpoint\n\n\n"),
    ]
    assert await _find(owner, "doomed") == [(Kind.SPACE, "Doomed space\n")]

    await spaces.delete(owner, space.id, roles=[SpaceRole.OWNER])
    assert await _find(owner, "walrus") == [(Kind.TURN, "walrus survives")]
    assert await _find(owner, "doomed") == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("NEAR( fox river", True),
        # Punctuation inside a chunk joins its words into a phrase.
        ("NEAR(fox river", False),
        ("near,the", True),
        ('fox"', True),
        ('"fox', True),
        ('fox" OR "zebra', False),
        ("fox OR zebra", False),
        ("fox NOT river", True),
        ("river:fox", False),
        ("fox: river", True),
        ("^fox", True),
        ("fox AND", False),
        ("'); DROP TABLE turn; --", False),
        ("*fox", True),
        ("fox*:*", True),
        ("fox & !river | (x)", False),
    ],
)
async def test_hostile_syntax_is_searched_as_words(app: Starlette, text: str, found: bool) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "fox near the river or not")
    expected = [(Kind.TURN, "fox near the river or not")] if found else []
    assert await _find(owner, text) == expected


async def test_operators_are_searched_as_words(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "fox near the river or not")
    await _turn(sid, "just a fox")
    assert await _find(owner, "fox NEAR( river") == [(Kind.TURN, "fox near the river or not")]
    assert await _find(owner, "fox OR") == [(Kind.TURN, "fox near the river or not")]
    assert await _find(owner, 'fox NOT "') == [(Kind.TURN, "fox near the river or not")]


def test_a_query_without_words_or_too_long_is_refused() -> None:
    with pytest.raises(FieldProblem, match="at least one word"):
        search_query.parse('"" * ( - : _')
    with pytest.raises(FieldProblem, match="at most 500 characters"):
        search_query.parse("a" * 501)
    with pytest.raises(FieldProblem, match="at most 20 words"):
        search_query.parse(" ".join(["w"] * 21))


async def test_addresses_numbers_and_tags_are_words_on_both_engines(app: Starlette) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "Mail ana@example.org about v3.14 in <div> or /usr/lib")
    text = "Mail ana@example.org about v3.14 in <div> or /usr/lib"
    for query in ("example", "ana@example.org", "v3.14", "div", "usr lib", "/usr/lib"):
        assert await _find(owner, query) == [(Kind.TURN, text)], query


async def test_only_the_newest_matches_are_ranked(
    app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    await _turn(sid, "heron heron heron heron")
    await _turn(sid, "heron, newer")
    await _turn(sid, "heron heron, newest")
    monkeypatch.setattr(search, "RANKED_MATCHES", 2)
    assert await _find(owner, "heron") == [
        (Kind.TURN, "heron heron, newest"),
        (Kind.TURN, "heron, newer"),
    ]
    monkeypatch.setattr(search, "RANKED_MATCHES", 3)
    assert await _find(owner, "heron") == [
        (Kind.TURN, "heron heron heron heron"),
        (Kind.TURN, "heron heron, newest"),
        (Kind.TURN, "heron, newer"),
    ]


async def test_the_migration_indexes_rows_written_before_it(app: Starlette) -> None:
    migration = importlib.import_module("api.store.migrations.0004_search")
    owner = await spaces.local_user_id()
    space = await spaces.create(owner, "Older lemur space", "lemur notes")
    sid = await _session(owner, space.id, title="Lemur session")
    await _turn(sid, "a lemur turn")
    await save(space.id, sid, "Lemur checkpoint")
    before = await _find(owner, "lemur")
    assert sorted(kind for kind, _ in before) == [
        Kind.TURN,
        Kind.CHECKPOINT,
        Kind.SESSION,
        Kind.SPACE,
    ]

    conn = sql.connection()
    if _postgres():
        await conn.execute_script("DELETE FROM search_entry")
        await conn.execute_script(migration.postgres_backfill())
    else:
        await conn.execute_script("DELETE FROM search_fts")
        await conn.execute_script(migration.sqlite_backfill())
    assert await _find(owner, "lemur") == before


def test_the_path_follows_the_share_of_entries_a_query_is_expected_to_match() -> None:
    stats = search.WordStatistics(
        shares={"common": 0.5, "middle": 0.04, "comet": 0.02, "comma": 0.03},
        floor=0.001,
        entries=100_000,
    )

    def path(text: str) -> tuple[search.Path, int]:
        return search.choose_path(search_query.parse(text), stats)

    assert search.expected_share(search_query.parse("common middle"), stats) == 0.5 * 0.04
    assert search.expected_share(search_query.parse('"common unlisted"'), stats) == 0.5 * 0.001
    assert search.expected_share(search_query.parse("com*"), stats) == 0.5 + 0.02 + 0.03
    assert search.expected_share(search_query.parse("zeb*"), stats) == 0.001
    assert path("common") == (search.Path.WALK, 0)
    assert path("com*") == (search.Path.WALK, 0)
    # 0.04 * 100,000 = 4,000 matches expected: search the newest 1.5 * 1,000 / 0.04.
    assert path("middle") == (search.Path.WINDOW, 37_500)
    assert path("common middle") == (search.Path.GIN, 0)  # 2,000 expected
    assert path("unlisted") == (search.Path.GIN, 0)
    assert search.choose_path(search_query.parse("common"), None) == (search.Path.GIN, 0)


async def test_postgres_finds_the_same_newest_matches_by_every_path(
    app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _postgres():
        pytest.skip("FTS5 always walks its matches newest first")
    owner = await spaces.local_user_id()
    sid = await _session(owner, None)
    for n in range(30):
        await _turn(sid, f"common words {'rare ' * (n % 3 == 0)}{n}")
    await sql.connection().execute_script("ANALYZE search_entry")
    search.forget_statistics()
    stats = await search._word_statistics(sql.connection())
    assert stats is not None and stats.entries == 31  # the turns and their session
    assert search.choose_path(search_query.parse("common"), stats) == (search.Path.WALK, 0)
    assert search.choose_path(search_query.parse("common 7"), stats) == (search.Path.GIN, 0)
    monkeypatch.setattr(search, "RANKED_MATCHES", 3)
    newest_rare = [
        (Kind.TURN, "common words rare 21"),
        (Kind.TURN, "common words rare 24"),
        (Kind.TURN, "common words rare 27"),
    ]
    chosen: list[tuple[search.Path, int]] = [
        (search.Path.WALK, 0),
        (search.Path.GIN, 0),
        # Holds the three newest: one statement.
        (search.Path.WINDOW, 10),
        # Holds two matches only (27 and 24): searched again without the window.
        (search.Path.WINDOW, 6),
    ]
    for path in chosen:
        monkeypatch.setattr(search, "choose_path", lambda _q, _s, path=path: path)
        with count_statements() as statements:
            assert sorted(await _find(owner, "rare")) == newest_rare, path
        assert len(statements) == (2 if path == (search.Path.WINDOW, 6) else 1), path


async def _user(name: str) -> int:
    row = await sql.fetch_one(
        sql.connection(),
        "INSERT INTO smriti_user (name, created_at) VALUES (?, CURRENT_TIMESTAMP) RETURNING id",
        [name],
    )
    assert row is not None
    return int(row["id"])


async def _team_corpus() -> tuple[int, int, set[str]]:
    """Alice (the local user) reads her own turns and sessions, the entries of
    her space and of Bob's team space she is a member of, and the sessions Bob
    shares with it; not Bob's private session nor anything of Carol's.
    Returns (alice, the team space's id, every readable body with "otter")."""
    alice = await spaces.local_user_id()
    bob, carol = await _user("bob"), await _user("carol")
    team = await spaces.create(bob, "Team otter space", "river otter notes")
    # Bob owns the team space: the policy's check passes (his role allows it).
    await members.add(team.id, alice, SpaceRole.EDITOR, by=bob, check_role=lambda role: None)
    own_space = await spaces.create(alice, "My otter space", "")
    carols = await spaces.create(carol, "Carol's otter space", "river otter")
    alone = await _session(alice, None, title="Private otter walk")
    mine_in_team = await _session(alice, team.id, title="Alice shares an otter")
    await sessions.set_visibility(alice, mine_in_team, Visibility.SPACE)
    bob_shared = await _session(bob, team.id, title="Bob shares a river otter")
    await sessions.set_visibility(bob, bob_shared, Visibility.SPACE)
    bob_private = await _session(bob, team.id, title="Bob's private otter")
    carol_session = await _session(carol, carols.id, title="Carol's river otter")
    readable = {
        "Team otter space\nriver otter notes",
        "My otter space\n",
        "Private otter walk",
        "Alice shares an otter",
        "Bob shares a river otter",
    }
    # Interleaved, so that each part of Alice's scope holds some of the newest.
    for n in range(12):
        text = f"{'river ' if n % 2 else ''}otter {n}"
        for session_id, body in (
            (alone, f"alone {text}"),
            (mine_in_team, f"mine in team {text}"),
            (bob_shared, f"bob shared {text}"),
        ):
            await _turn(session_id, body)
            readable.add(body)
        await _turn(bob_private, f"bob private {text}")
        await _turn(carol_session, f"carol {text}")
        if n % 3 == 0:
            await save(team.id, bob_shared, f"team checkpoint {text}")
            await save(own_space.id, alone, f"own checkpoint {text}")
            await save(carols.id, carol_session, f"carol checkpoint {text}")
            # A checkpoint's body: title, objective, summary and items, a line each.
            readable |= {f"team checkpoint {text}\n\n\n", f"own checkpoint {text}\n\n\n"}
    return alice, team.id, readable


async def test_a_member_finds_the_same_newest_matches_by_every_path(
    app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk of a user who reads more than their own entries merges a walk
    per part of their scope (PostgreSQL); the GIN path reads every match, so
    every path must give the same page. SQLite has one path: its hits are
    checked the same way."""
    alice, team, readable = await _team_corpus()
    assert await members.shares_anything(alice)

    async def found(text: str, path: tuple[search.Path, int], **options: object) -> list[object]:
        monkeypatch.setattr(search, "choose_path", lambda _q, _s: path)
        entries = await search.find(
            alice,
            search_query.parse(text),
            space_id=options.get("space_id"),  # type: ignore[arg-type]
            kinds=options.get("kinds"),  # type: ignore[arg-type]
            limit=100,
            offset=0,
            shared=True,
        )
        return [(e.kind, e.object_id, e.body, e.rank) for e in entries]

    everything = await found("otter", (search.Path.GIN, 0))
    assert {body for _kind, _id, body, _rank in everything} == readable
    river = {body for body in readable if "river otter" in body}
    assert {
        body for _k, _i, body, _r in await found('"river otter"', (search.Path.GIN, 0))
    } == river

    paths = [(search.Path.WALK, 0), (search.Path.GIN, 0), (search.Path.WINDOW, 40)]
    options: list[dict[str, object]] = [
        {},
        {"kinds": [Kind.TURN]},
        {"kinds": [Kind.CHECKPOINT, Kind.SPACE]},
        {"space_id": team},
    ]
    for ranked in (5, 1000):
        monkeypatch.setattr(search, "RANKED_MATCHES", ranked)
        for text in ("otter", '"river otter"', "river otter"):
            for option in options:
                pages = [await found(text, path, **option) for path in paths]
                assert pages[0] == pages[1] == pages[2], (ranked, text, option)
                # 5: only the newest five are ranked, in each part's walk too.
                assert len(pages[0]) == min(ranked, len(pages[0])) and len(pages[0]) >= 5


async def test_a_members_walk_reads_each_part_of_their_scope_newest_first(
    app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: the member's walk reads each part of their scope on its own
    index (0017: their turns and sessions, each space, each shared session)
    instead of reading and sorting every entry (the OR of the scope has no
    index to walk)."""
    if not _postgres():
        pytest.skip("FTS5 walks its matches newest first whatever the scope")
    alice, _team, _readable = await _team_corpus()
    monkeypatch.setattr(search, "choose_path", lambda _q, _s: (search.Path.WALK, 0))
    issued: list[tuple[str, list[object]]] = []
    fetch = sql.fetch

    async def capture(conn: object, statement: str, params: list[object]) -> object:
        issued.append((statement, params))
        return await fetch(conn, statement, params)

    monkeypatch.setattr(sql, "fetch", capture)
    found = await search.find(
        alice,
        search_query.parse("otter"),
        space_id=None,
        kinds=None,
        limit=20,
        offset=0,
        shared=True,
    )
    assert len(found) == 20
    monkeypatch.setattr(sql, "fetch", fetch)
    [(statement, params)] = [(s, p) for s, p in issued if "ts_rank_cd" in s]
    # A table of a few dozen rows is read whole by choice: plan as for a large one.
    async with in_transaction("default") as conn:
        await conn.execute_script("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            row["QUERY PLAN"] for row in await fetch(conn, "EXPLAIN " + statement, params)
        )
    # Each part on its own index (a space's or a session's few entries may be
    # read through a bitmap, then sorted), never the whole table.
    for index in (
        "search_entry_own_newest",
        "search_entry_space_newest",
        "search_entry_session_newest",
    ):
        assert index in plan, plan
    assert "Seq Scan on search_entry" not in plan, plan


async def test_sqlite_ranks_a_phrase_as_bm25_does_without_counting_it_each_time(
    app: Starlette, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query that is one phrase is ranked by bm25's formula outside FTS5
    (whose bm25 counts every row holding the phrase at every search): the same
    entries, ranks (to the last bit) and order as FTS5's bm25, for every
    filter and page; the phrase is counted once, not at each search."""
    if _postgres():
        pytest.skip("PostgreSQL ranks with ts_rank_cd, which counts nothing")
    alice, team, _readable = await _team_corpus()
    sid = await _session(alice, None)
    # Phrases once or twice, in texts of different lengths; a word twice.
    for n in range(40):
        filler = " and more" * (n % 7)
        twice = " river otter again" if n % 5 == 0 else ""
        await _turn(sid, f"the river otter {n}{filler}{twice}, otter otter river")
    search.forget_phrase_counts()

    async def page(text: str, **options: object) -> list[object]:
        entries = await search.find(
            alice,
            search_query.parse(text),
            space_id=options.get("space_id"),  # type: ignore[arg-type]
            kinds=options.get("kinds"),  # type: ignore[arg-type]
            limit=options.get("limit", 100),  # type: ignore[arg-type]
            offset=options.get("offset", 0),  # type: ignore[arg-type]
            shared=bool(options.get("shared", True)),
        )
        return [(e.kind, e.object_id, e.body, e.rank) for e in entries]

    cases: list[dict[str, object]] = [
        {},
        {"shared": False},
        {"kinds": [Kind.TURN]},
        {"space_id": team},
        {"limit": 7, "offset": 5},
    ]
    for ranked in (1000, 9):
        monkeypatch.setattr(search, "RANKED_MATCHES", ranked)
        for text in ('"river otter"', '"otter river"', '"river ott*"', '"the river otter"'):
            assert search.ranked_here(search_query.parse(text))
            for case in cases:
                with monkeypatch.context() as bm25_only:
                    bm25_only.setattr(search, "ranked_here", lambda _q: False)
                    expected = await page(text, **case)
                assert expected or "space_id" in case, (text, case)
                assert await page(text, **case) == expected, (ranked, text, case)
    assert not search.ranked_here(search_query.parse('"otter otter"'))
    assert not search.ranked_here(search_query.parse('"river otter" the'))
    assert not search.ranked_here(search_query.parse("otter"))

    with count_statements() as statements:
        await page('"river otter"')
    assert not any("bm25(" in s or "count(*)" in s for s in statements), statements
    search.forget_phrase_counts()
    with count_statements() as statements:
        await page('"river otter"')
    assert sum("count(*)" in s for s in statements) == 1, statements
