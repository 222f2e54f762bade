"""Migration 0008 on rows written before it: every space's creator is its owner,
and turns and checkpoints without an author read as their session's owner and
their space's creator (local mode, where nothing else changes)."""

from __future__ import annotations

import importlib

from starlette.applications import Starlette

from api.domain.hashing import checkpoint_hash
from api.domain.types import CheckpointContent, Role
from api.graphql.core import ids
from api.store import checkpoints, models, sql, turns
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, create_space

migration = importlib.import_module("api.store.migrations.0008_members")


async def test_the_migration_makes_each_space_creator_its_owner(
    gql: GraphQLClient, app: Starlette
) -> None:
    first = await create_space(gql, "One")
    second = await create_space(gql, "Two")
    await models.SpaceMember.all().delete()  # as before 0008: no member rows
    assert await gql("{ spaces { edges { node { id } } } }") == {"spaces": {"edges": []}}

    await sql.connection().execute_script(migration.BACKFILL_OWNERS + ";")

    found = await gql("{ spaces { edges { node { id viewerRole members { userName role } } } } }")
    assert found["spaces"]["edges"] == [
        {
            "node": {
                "id": space,
                "viewerRole": "OWNER",
                "members": [{"userName": "local", "role": "OWNER"}],
            }
        }
        for space in (first, second)
    ]


async def test_rows_without_an_author_read_as_the_owner_without_a_token(
    gql: GraphQLClient, app: Starlette
) -> None:
    space = await create_space(gql)
    session = (await create_session(gql, spaceId=space))["id"]
    session_key = ids.decode(session, "Session", field="id")
    space_key = ids.decode(space, "Space", field="id")
    # Written as before 0008: no author columns.
    await turns.append(session_key, role=Role.USER, content="old", token_count=1)
    saved = await checkpoints.create(
        space_id=space_key,
        branch_name="main",
        content=CheckpointContent(title="Old"),
        author_agent="user",
        source_session_id=session_key,
        source_turn_range=None,
        base_sequence=1,
        compute_hash=checkpoint_hash,
    )
    assert (saved.author_id, saved.author_token) == (None, None)
    read = await gql(
        "query($s: ID!, $c: ID!) { session(id: $s) { authorName turns { nodes { author "
        "{ name viaToken } } } } checkpoint(id: $c) { author { name viaToken } } }",
        s=session,
        c=ids.encode("Checkpoint", saved.id),
    )
    assert read == {
        "session": {
            "authorName": "local",
            "turns": {"nodes": [{"author": {"name": "local", "viaToken": None}}]},
        },
        "checkpoint": {"author": {"name": "local", "viaToken": None}},
    }
