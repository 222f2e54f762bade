"""``python -m bench.shapes``: what a shape of 10,000 lineage nodes costs in GraphQL alone.

No database, no HTTP: the same 10,000 rows served by a small Strawberry schema
in three shapes, each with graphql-core's stock executor and with Smriti's
(``api/graphql/core/execution.py``), then encoded to JSON as the view does:

- ``objects``: one typed object per node, seven plain fields (what
  ``Space.lineageGraph`` returns);
- ``arrays``: seven parallel typed lists (``[ID!]!``, ``[String!]!`` …), one
  value per node in each;
- ``objects, async list``: the object shape from an async resolver.

Prints the fastest of 9 runs per shape and executor, per node: on a shared
machine the minimum is the figure least disturbed by other work.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import strawberry

from api.graphql.core.execution import PlainFieldsExecutor

NODES = 10_000
RUNS = 9
_NOW = datetime(2026, 12, 1, tzinfo=UTC)
_ROWS = [
    (f"Q2hlY2twb2ludDo{i}", f"{i * 7919:064x}", f"main checkpoint {i}", "main", i)
    for i in range(NODES)
]


@strawberry.type
class Node:
    id: strawberry.ID
    hash: str
    title: str
    branch_name: str
    parent_id: strawberry.ID | None
    merge_parent_id: strawberry.ID | None
    created_at: datetime


@strawberry.type
class Arrays:
    ids: list[strawberry.ID]
    hashes: list[str]
    titles: list[str]
    branch_names: list[str]
    parents: list[int | None]
    merge_parents: list[int | None]
    created_at: list[datetime]


def _nodes() -> list[Node]:
    return [
        Node(
            id=strawberry.ID(r[0]),
            hash=r[1],
            title=r[2],
            branch_name=r[3],
            parent_id=strawberry.ID(_ROWS[r[4] - 1][0]) if r[4] else None,
            merge_parent_id=None,
            created_at=_NOW,
        )
        for r in _ROWS
    ]


@strawberry.type
class Query:
    @strawberry.field
    def objects(self) -> list[Node]:
        return _nodes()

    @strawberry.field
    async def objects_async(self) -> list[Node]:
        return _nodes()

    @strawberry.field
    def arrays(self) -> Arrays:
        return Arrays(
            ids=[strawberry.ID(r[0]) for r in _ROWS],
            hashes=[r[1] for r in _ROWS],
            titles=[r[2] for r in _ROWS],
            branch_names=[r[3] for r in _ROWS],
            parents=[r[4] - 1 if r[4] else None for r in _ROWS],
            merge_parents=[None] * NODES,
            created_at=[_NOW] * NODES,
        )


FIELDS = "id hash title branchName parentId mergeParentId createdAt"
SHAPES = {
    "objects": f"{{ objects {{ {FIELDS} }} }}",
    "objects, async list": f"{{ objectsAsync {{ {FIELDS} }} }}",
    "arrays": "{ arrays { ids hashes titles branchNames parents mergeParents createdAt } }",
}


async def _fastest_ms(schema: strawberry.Schema, query: str) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        result: Any = await schema.execute(query)
        assert not result.errors, result.errors
        json.dumps(result.data)
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


async def main() -> None:
    executors = {"graphql-core": None, "plain fields": PlainFieldsExecutor}
    print(f"{'shape':<22}" + "".join(f"{name + ' µs/node':>26}" for name in executors))
    for shape, query in SHAPES.items():
        figures = []
        for executor in executors.values():
            schema = strawberry.Schema(query=Query, execution_context_class=executor)
            figures.append(await _fastest_ms(schema, query) * 1000 / NODES)
        print(f"{shape:<22}" + "".join(f"{f:>26.1f}" for f in figures))


if __name__ == "__main__":
    asyncio.run(main())
