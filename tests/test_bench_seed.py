"""bench/seed.py writes data the app reads: a benchmark over seeded rows that
read as null would time NOT_FOUND, not the read it names."""

from __future__ import annotations

import base64

from starlette.applications import Starlette

from bench.seed import SIDE_BRANCH_LENGTH, Seeder
from tests.support.graphql import GraphQLClient


def _space_id(number: int) -> str:
    return base64.b64encode(f"Space:{number}".encode()).decode()


async def test_a_seeded_space_reads_as_its_owner_sees_it(
    app: Starlette, gql: GraphQLClient
) -> None:
    seeder = Seeder()
    owner = await seeder.owner()
    lineage = await seeder.lineage_space(owner, 12, ("side-1",))
    await seeder.fix_sequences()

    data = await gql(
        """query ($id: ID!) {
          space(id: $id) {
            name
            branches { name head { title } }
            lineage(first: 100) { edges { node { branchName } } }
          }
        }""",
        id=_space_id(lineage.space_id),
    )

    space = data["space"]
    assert space["name"] == "Lineage of 12"
    assert sorted(branch["name"] for branch in space["branches"]) == ["main", "side-1"]
    branches = [edge["node"]["branchName"] for edge in space["lineage"]["edges"]]
    # main's 12, the side branch's, and the side branch merged back into main
    assert len(branches) == lineage.total == 12 + SIDE_BRANCH_LENGTH + 1
    assert branches.count("side-1") == SIDE_BRANCH_LENGTH
    assert space["branches"][[b["name"] for b in space["branches"]].index("main")]["head"] == {
        "title": "merge of side-1 checkpoint 0"
    }
