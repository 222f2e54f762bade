"""The table specs the store's SQL is written from, against the migrated
database itself; and the one rule of who reads a session, on its own."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette

from api.domain.types import MemoryScope, SpaceRole, Visibility
from api.store import members, sessions, spaces, sql, tables
from api.store.readable import readable_sessions

SPECS = [value for value in vars(tables).values() if isinstance(value, tables.Table)]


async def _columns(table: str) -> set[str]:
    """The table's columns as the database lists them (not as the models say)."""
    conn = sql.connection()
    if sql.dialect(conn) == "postgres":
        found = await sql.fetch_rows(
            conn,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ?",
            [table],
        )
    else:
        found = await sql.fetch_rows(conn, f"SELECT name FROM pragma_table_info('{table}')")
    return {str(row[0]) for row in found}


def test_every_table_the_store_writes_has_a_spec() -> None:
    assert sorted(spec.name for spec in SPECS) == [
        "api_token",
        "branch",
        "checkpoint",
        "model_access",
        "preset",
        "session",
        "session_tag",
        "sign_in",
        "smriti_user",
        "space",
        "space_member",
        "turn",
        "web_session",
    ]


async def test_each_spec_names_exactly_the_columns_of_its_migrated_table(app: Starlette) -> None:
    for spec in SPECS:
        assert spec.stored == await _columns(spec.name), spec.name
        assert spec.columns[0] == "id", spec.name
    assert set(tables.TURN.stored - set(tables.TURN.columns)) == {"copied_from_id"}
    assert set(tables.SPACE.stored - set(tables.SPACE.columns)) == {"origin_space_id"}


def test_a_row_for_an_insert_takes_the_models_defaults_and_writes_json_as_text() -> None:
    assert tables.CHECKPOINT.row({"title": "t", "decisions": ["Ünï"]}) == {
        "title": "t",
        "objective": "",
        "summary": "",
        "decisions": '["Ünï"]',
        "tasks": "[]",
        "open_questions": "[]",
        "entities": "[]",
        "author_agent": "user",
        "base_sequence": 0,
    }
    with pytest.raises(ValueError, match=r"turn has no column \['colour'\]"):
        tables.TURN.row({"colour": 1})


async def _user(name: str) -> int:
    [(user_id,)] = await sql.returning(
        sql.connection(),
        "INSERT INTO smriti_user (name, created_at) VALUES (?, CURRENT_TIMESTAMP) RETURNING id",
        [name],
    )
    return int(user_id)


async def test_a_session_is_read_by_its_author_and_by_its_space_when_shared(
    app: Starlette,
) -> None:
    author, member, stranger = await _user("author"), await _user("member"), await _user("x")
    space = await spaces.create(author, "Team", "")
    await members.add(space.id, member, SpaceRole.VIEWER, by=author, check_role=lambda _: None)
    await spaces.create(stranger, "Elsewhere", "")

    async def session(space_id: int | None, visibility: Visibility) -> int:
        made = await sessions.create(
            author,
            title="",
            space_id=space_id,
            memory_scope=MemoryScope.LATEST_1,
            provider="offline",
            model="echo",
        )
        await sessions.set_visibility(author, made.id, visibility)
        return made.id

    private = await session(space.id, Visibility.PRIVATE)
    shared = await session(space.id, Visibility.SPACE)
    alone = await session(None, Visibility.PRIVATE)

    async def readable(user_id: int, *, through_space_only: bool = False) -> list[int]:
        rule = readable_sessions("s", through_space_only=through_space_only)
        found = await sql.fetch_rows(
            sql.connection(),
            f"SELECT s.id FROM session s WHERE {rule.sql} ORDER BY s.id",
            rule.params(user_id),
        )
        return [int(row[0]) for row in found]

    assert await readable(author) == [private, shared, alone]
    assert await readable(member) == [shared]
    assert await readable(stranger) == []
    # Through a space only: what the author shared, not what is theirs alone.
    assert await readable(author, through_space_only=True) == [shared]
    assert await readable(member, through_space_only=True) == [shared]
