"""A space with a fork and a mount, and direct tampering with stored checkpoints."""

from __future__ import annotations

from typing import Any

from api.graphql.core import ids
from api.store import sql
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, mount, send

FORK = """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
  session { id } errors { code } } }"""


async def forked_space(gql: GraphQLClient) -> dict[str, Any]:
    """main: C0 → C1 → C2, alt: C0 → Alt1; a third session mounts C1."""
    space = await create_space(gql, "Lineage")
    sid = (await create_session(gql, spaceId=space, title="Main line"))["id"]
    saved = []
    for i in range(3):
        await send(gql, sid, f"step {i}")
        saved.append(await checkpoint(gql, sid, f"C{i}", summary=f"summary {i}"))
    fork = (await gql(FORK, c=saved[0]["id"]))["forkSession"]["session"]["id"]
    await send(gql, fork, "the other way")
    alt = await checkpoint(gql, fork, "Alt1", decisions=["go left"])
    reader = (await create_session(gql, spaceId=space, title="Reader"))["id"]
    await mount(gql, reader, saved[1]["id"])
    await send(gql, reader, "what did we decide?")
    return {"space": space, "main": saved, "alt": alt, "sessions": [sid, fork, reader]}


def key(global_id: str) -> int:
    parsed = ids.parse_id(global_id)
    assert parsed is not None
    return parsed[1]


async def tamper(statement: str, params: list[Any]) -> None:
    """Run an UPDATE on checkpoint rows past their immutability trigger."""
    conn = sql.connection()
    if sql.dialect(conn) == "postgres":
        await conn.execute_script("DROP TRIGGER checkpoint_immutable ON checkpoint")
    else:
        await conn.execute_script("DROP TRIGGER checkpoint_immutable")
    await conn.execute_query(sql.translate(conn, statement), params)


async def build_lineage(gql: GraphQLClient, length: int) -> tuple[str, list[dict[str, str]]]:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    saved = []
    for i in range(length):
        await send(gql, sid, f"step {i}")
        saved.append(await checkpoint(gql, sid, f"C{i}"))
    return space, saved
