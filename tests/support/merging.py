"""Two lines of a space that diverged, and the merge mutation's input: for the tests of
merges and of what builds on them."""

from __future__ import annotations

from typing import Any

from tests.support.graphql import GraphQLClient
from tests.support.ops import ERRORS, checkpoint, create_session, create_space, send

MERGE = f"""mutation($input: MergeCheckpointsInput!) {{ mergeCheckpoints(input: $input) {{
  checkpoint {{ id title branchName objective summary decisions tasks openQuestions entities
    parent {{ title }} mergeParent {{ title }} }}
  fastForward {ERRORS} }} }}"""


async def fork(gql: GraphQLClient, checkpoint_id: str, branch: str) -> str:
    data = await gql(
        """mutation($c: ID!, $b: String!) {
           forkSession(input: {checkpointId: $c, branchName: $b}) { session { id } } }""",
        c=checkpoint_id,
        b=branch,
    )
    session_id: str = data["forkSession"]["session"]["id"]
    return session_id


async def diverged(gql: GraphQLClient) -> dict[str, Any]:
    """Base on main; main and `alt` each go their own way from it.

    main:  Base → M1 (drops "Use SQLite", adds "Cache in Redis")
    alt:   Base → A1 (respells "Use Postgres", replaces "Use SQLite" by "Use SQLite 3",
                      drops task "Pick a host", adds "Write docs" and entity "Redis")
    """
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await checkpoint(
        gql,
        main,
        "Base",
        objective="Ship it",
        decisions=["Use Postgres", "Use SQLite"],
        tasks=["Pick a host", "Write tests"],
    )
    alt = await fork(gql, base["id"], "alt")
    m1 = await checkpoint(
        gql,
        main,
        "M1",
        objective="Ship it",
        decisions=["Use Postgres", "Cache in Redis"],
        tasks=["Pick a host", "Write tests"],
    )
    await send(gql, alt, "alt work")
    a1 = await checkpoint(
        gql,
        alt,
        "A1",
        objective="Ship it fast",
        summary="Docs matter.",
        decisions=["use postgres", "Use SQLite 3"],
        tasks=["Write tests", "Write docs"],
        entities=["Redis"],
    )
    return {"space": space, "main": main, "alt": alt, "base": base, "m1": m1, "a1": a1}


def merge_input(lab: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"spaceId": lab["space"], "into": "main", "from": lab["a1"]["id"], **fields}
