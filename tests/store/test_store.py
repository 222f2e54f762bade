"""The database enforces what the domain promises."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from tortoise.exceptions import IntegrityError, OperationalError

from api.domain.hashing import verify_chain
from api.domain.types import (
    ChatSettings,
    Finish,
    FinishReason,
    Role,
)
from api.errors import NotFound
from api.store import checkpoints, sessions, spaces, sql, turns
from tests.support.store import make_session, save


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE turn SET content = 'rewritten'",
        "UPDATE turn SET sequence_number = sequence_number + 100",
        # Migration 0010's columns are under the same rule.
        "UPDATE turn SET finish_reason = 'STOP'",
        "UPDATE turn SET continues_sequence = 1",
        "UPDATE checkpoint SET title = 'rewritten'",
        "UPDATE checkpoint SET decisions = '[]'",
    ],
)
async def test_turns_and_checkpoints_reject_update(app: Starlette, statement: str) -> None:
    _, space_id, session_id = await make_session()
    assert space_id is not None
    await turns.append(session_id, role=Role.USER, content="original", token_count=1)
    await save(space_id, session_id, "original")
    with pytest.raises((IntegrityError, OperationalError), match="rows are immutable"):
        await sql.connection().execute_query(statement)
    assert [t.content for t in await turns.recent(session_id, after=0, before=None, limit=5)] == [
        "original"
    ]
    assert (await checkpoints.head(space_id, "main")).content.title == "original"  # type: ignore[union-attr]


async def test_a_reply_is_continued_once(app: Starlette) -> None:
    _, _, session_id = await make_session(space=False)
    await turns.append(session_id, role=Role.USER, content="Kyoto?", token_count=1)
    cut = Finish(FinishReason.LENGTH)
    reply = await turns.append(
        session_id, role=Role.ASSISTANT, content="Kyoto", token_count=1, finish=cut
    )
    first = await turns.append(
        session_id, role=Role.ASSISTANT, content=" was", token_count=1, continues_sequence=2
    )

    with pytest.raises(turns.AlreadyAnswered) as again:
        await turns.append(
            session_id, role=Role.ASSISTANT, content=" is", token_count=1, continues_sequence=2
        )
    # and the database itself holds it (a unique index), past the store's check
    with pytest.raises(IntegrityError):
        await sql.execute(
            sql.connection(),
            "INSERT INTO turn (session_id, sequence_number, role, content, token_count, "
            "interrupted, continues_sequence, created_at) "
            "VALUES (?, 9, 'ASSISTANT', 'x', 0, FALSE, 2, CURRENT_TIMESTAMP)",
            [session_id],
        )

    assert again.value.reply == first
    assert (reply.finish_reason, reply.interrupted) == (FinishReason.LENGTH, True)
    assert await turns.continuation_of(session_id, 2) == first
    assert [t.sequence_number for t in await turns.in_range(session_id, 1, 10)] == [1, 2, 3]


async def test_deleting_a_session_deletes_its_turns_and_keeps_checkpoints(app: Starlette) -> None:
    owner, space_id, session_id = await make_session()
    assert space_id is not None
    await turns.append(session_id, role=Role.USER, content="x", token_count=1)
    saved = await save(space_id, session_id, "kept")
    await sessions.delete(owner, session_id)
    assert await turns.recent(session_id, after=0, before=None, limit=5) == []
    assert (await checkpoints.get(saved.id)).source_session_id == session_id  # type: ignore[attr-defined]


async def test_sequence_numbers_are_unique_per_session_in_the_database(app: Starlette) -> None:
    _, _, session_id = await make_session(space=False)
    first = await turns.append(session_id, role=Role.USER, content="a", token_count=1)
    conn = sql.connection()
    with pytest.raises(IntegrityError):
        await conn.execute_query(
            sql.translate(
                conn,
                "INSERT INTO turn (session_id, sequence_number, role, content, "
                "token_count, interrupted, created_at) VALUES (?, ?, 'USER', 'dup', 1, ?, ?)",
            ),
            [session_id, first.sequence_number, False, first.created_at],
        )


async def test_concurrent_appends_are_gapless(app: Starlette) -> None:
    _, _, session_id = await make_session(space=False)
    written = await asyncio.gather(
        *(
            turns.append(session_id, role=Role.USER, content=str(i), token_count=1)
            for i in range(50)
        )
    )
    assert sorted(t.sequence_number for t in written) == list(range(1, 51))


async def test_a_stored_lineage_verifies_after_a_round_trip(app: Starlette) -> None:
    _, space_id, session_id = await make_session()
    assert space_id is not None
    for title in ("one", "two", "three"):
        await save(space_id, session_id, title)
    head = await checkpoints.head(space_id, "main")
    assert head is not None
    chain = list(reversed(await checkpoints.chain(head.id, 10)))
    assert [c.content.title for c in chain] == ["one", "two", "three"]
    assert verify_chain(chain) is None


async def test_two_checkpoints_saved_at_once_on_one_branch_form_a_chain(app: Starlette) -> None:
    _, space_id, session_id = await make_session()
    assert space_id is not None
    saved = await asyncio.gather(*(save(space_id, session_id, f"c{i}") for i in range(8)))
    parents = sorted((c.parent_id or 0) for c in saved)  # type: ignore[attr-defined]
    ids = sorted(c.id for c in saved)  # type: ignore[attr-defined]
    # One root, and every other checkpoint's parent is a distinct earlier one.
    assert parents == [0, *ids[:-1]]


async def test_an_automatic_title_never_overwrites_one_the_user_set(app: Starlette) -> None:
    owner, _, session_id = await make_session(space=False)
    # make_session titles it "t": the background title must leave it alone.
    assert await sessions.name_if_untitled(owner, session_id, "Auto") is False
    assert (await sessions.get(owner, session_id)).title == "t"
    await sessions.configure(owner, session_id, title="")
    assert await sessions.name_if_untitled(owner, session_id, "Auto") is True
    assert (await sessions.get(owner, session_id)).title == "Auto"


async def test_configure_changes_only_what_is_given(app: Starlette) -> None:
    owner, space_id, session_id = await make_session()
    before = await sessions.get(owner, session_id)
    after = await sessions.configure(owner, session_id, provider="p", model="m")
    assert (after.title, after.memory_scope, after.space_id) == (
        before.title,
        before.memory_scope,
        space_id,
    )
    assert (after.active_provider, after.active_model) == ("p", "m")
    with pytest.raises(ValueError, match="together"):
        await sessions.configure(owner, session_id, model="m")
    detached = await sessions.detach(owner, session_id)
    assert (detached.space_id, detached.branch_name, detached.mount) == (
        None,
        "main",
        None,
    )


async def test_a_message_reads_its_session_key_and_newest_turns_at_once(app: Starlette) -> None:
    owner, _, session_id = await make_session(space=False)
    written = [
        await turns.append(
            session_id,
            role=Role.USER if n % 2 else Role.ASSISTANT,
            content=f"turn {n}",
            token_count=1,
            idempotency_key="k" if n == 2 else None,
        )
        for n in range(1, 6)
    ]

    found = await sessions.for_message(owner, session_id, idempotency_key="k", window=3)
    unkeyed = await sessions.for_message(owner, session_id, idempotency_key=None, window=9)
    unknown = await sessions.for_message(owner, session_id, idempotency_key="nope", window=0)

    assert found.session == await sessions.get(owner, session_id)
    assert found.keyed_turn_id == written[1].id
    assert found.recent == tuple(await turns.recent(session_id, after=0, before=None, limit=3))
    assert [t.sequence_number for t in found.recent] == [5, 4, 3]
    assert (unkeyed.keyed_turn_id, [t.sequence_number for t in unkeyed.recent]) == (
        None,
        [5, 4, 3, 2, 1],
    )
    assert (unknown.keyed_turn_id, unknown.recent, unknown.space_settings) == (None, (), None)


async def test_a_message_reads_its_spaces_settings_with_its_session(app: Starlette) -> None:
    owner, space_id, session_id = await make_session(space=True)
    assert space_id is not None
    await sql.execute(
        sql.connection(),
        "UPDATE space SET settings = ? WHERE id = ?",
        ['{"instructions": "Be brief.", "temperature": 0.5}', space_id],
    )

    found = await sessions.for_message(owner, session_id, idempotency_key=None, window=3)

    assert found.space_settings == ChatSettings(instructions="Be brief.", temperature=0.5)
    assert found.space_settings == await spaces.settings_of(space_id)
    with pytest.raises(NotFound, match="No such session"):
        await sessions.for_message(owner + 1000, session_id, idempotency_key=None, window=3)
