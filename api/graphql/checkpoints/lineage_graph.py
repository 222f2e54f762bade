"""A space's whole lineage in one compact, typed answer (`Space.lineageGraph`).

Built for reading thousands of checkpoints at once: every field below is a
plain value set when the node is built, so GraphQL resolves it with the
default attribute read — no resolver, no DataLoader, no nested object per
parent; and api/graphql/core/execution.py reads such fields without graphql-core's
per-field machinery. ``Space.lineage`` (a connection of full `Checkpoint`
nodes) costs about twenty times as much CPU per checkpoint (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import datetime

import strawberry

from ...domain.types import LineageEntry
from ..core import ids

# The most nodes one answer holds (a larger lineage is read in pages, by
# `after`). The query cost counts `nodes` at this size (api/graphql/core/cost.py).
MAX_LINEAGE_GRAPH_NODES = 20_000


@strawberry.type(
    description="One checkpoint as a drawing of the lineage needs it: its id, hash, "
    "title, branch, its parents' ids and when it was saved. Its full content is on "
    "`Checkpoint` (`node(id:)` or `checkpoint(id:)` with this id)."
)
class LineageNode:
    id: strawberry.ID = strawberry.field(
        description="The checkpoint's global id (the same as `Checkpoint.id`)."
    )
    hash: str = strawberry.field(description="The checkpoint's hash (as `Checkpoint.hash`).")
    short_hash: str = strawberry.field(description="The first 7 characters of the hash.")
    title: str = strawberry.field(description="The checkpoint's title.")
    branch_name: str = strawberry.field(description="The branch it was saved on.")
    parent_id: strawberry.ID | None = strawberry.field(
        description="The id of its parent (null for a root). The parent is a node of the "
        "same graph, earlier in `nodes`."
    )
    merge_parent_id: strawberry.ID | None = strawberry.field(
        description="For a merge checkpoint, the id of the checkpoint merged in (its second "
        "parent, earlier in `nodes`); null otherwise."
    )
    created_at: datetime = strawberry.field(description="When it was saved.")

    @classmethod
    def from_domain(cls, entry: LineageEntry) -> LineageNode:
        parent, merge_parent = entry.parent_id, entry.merge_parent_id
        return cls(
            id=strawberry.ID(ids.encode("Checkpoint", entry.id)),
            hash=entry.hash,
            short_hash=entry.hash[:7],
            title=entry.title,
            branch_name=entry.branch_name,
            parent_id=None if parent is None else strawberry.ID(ids.encode("Checkpoint", parent)),
            merge_parent_id=(
                None
                if merge_parent is None
                else strawberry.ID(ids.encode("Checkpoint", merge_parent))
            ),
            created_at=entry.created_at,
        )


@strawberry.type(description="A branch as the lineage graph draws it: its name and its tip.")
class LineageBranch:
    name: str = strawberry.field(description='The branch name ("main" or a fork\'s name).')
    head_id: strawberry.ID = strawberry.field(
        description="The id of the newest checkpoint on the branch (a node of the graph)."
    )


@strawberry.type(
    description="A space's lineage as a graph: every checkpoint, oldest first, with the ids "
    "of its parents (the edges) and the branches' tips. One request answers a lineage of up "
    f"to {MAX_LINEAGE_GRAPH_NODES:,} checkpoints; a larger one continues with `after: "
    "endCursor` while `hasNextPage` is true."
)
class LineageGraph:
    nodes: list[LineageNode] = strawberry.field(
        description="The checkpoints, oldest first (a parent always comes before its children)."
    )
    branches: list[LineageBranch] = strawberry.field(
        description="Every branch of the space, by name."
    )
    has_next_page: bool = strawberry.field(
        description="True when the lineage has more checkpoints than this answer holds."
    )
    end_cursor: str | None = strawberry.field(
        description="Pass it as `after` to read the checkpoints after the last node."
    )
