"""The Space node: a namespace of checkpoints and sessions."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry import relay

from ...domain import types as domain
from ...domain.types import MAIN_BRANCH
from ...services import reading
from ..checkpoints.lineage_graph import (
    MAX_LINEAGE_GRAPH_NODES,
    LineageBranch,
    LineageGraph,
    LineageNode,
)
from ..context import Info
from ..core import ids
from ..core.chat_settings import ChatSettings
from ..core.enums import SpaceRole
from ..core.pagination import (
    CHECKPOINTS,
    SESSIONS,
    PageCursor,
    PageSize,
    connection,
    cursor,
    page_request,
)
from ..members.types import SpaceMember
from ..sessions.filters import (
    ArchivedFilter,
    BranchesFilter,
    PinnedFilter,
    SessionBranches,
    TagFilter,
    session_filters,
)

if TYPE_CHECKING:
    from ..checkpoints.types import Checkpoint
    from ..sessions.types import Session

CheckpointRef = Annotated["Checkpoint", strawberry.lazy("..checkpoints.types")]
SessionRef = Annotated["Session", strawberry.lazy("..sessions.types")]


@strawberry.type(description="A branch of a space's lineage and the checkpoint at its tip.")
class Branch:
    name: str = strawberry.field(description='The branch name ("main" or a fork\'s name).')
    head_id: strawberry.Private[int]

    @strawberry.field(description="The newest checkpoint on the branch.")
    async def head(self, info: Info) -> CheckpointRef | None:
        from ..checkpoints.types import Checkpoint

        found = await info.context.loaders.checkpoint_by_id.load(self.head_id)
        return Checkpoint.from_domain(found) if found else None


@strawberry.type(
    description="A space: holds checkpoints (a lineage) and the sessions that use them."
)
class Space(relay.Node):
    id: relay.NodeID[int]
    name: str = strawberry.field(description="The space's name.")
    description: str = strawberry.field(description="What the space is for.")
    created_at: datetime = strawberry.field(description="When the space was created.")
    updated_at: datetime = strawberry.field(description="When the space last changed.")
    # Read for this request's actor: what hangs from it is theirs to read too.
    domain_space: strawberry.Private[domain.Space]

    @classmethod
    def from_domain(cls, space: domain.Space) -> Space:
        return cls(
            id=space.id,
            name=space.name,
            description=space.description,
            created_at=space.created_at,
            updated_at=space.updated_at,
            domain_space=space,
        )

    @classmethod
    async def resolve_nodes(
        cls, *, info: Info, node_ids: Iterable[str], required: bool = False
    ) -> list[Any]:
        found = await info.context.loaders.space_by_id.load_many([int(i) for i in node_ids])
        return [cls.from_domain(s) if s else None for s in found]

    @strawberry.field(
        description="Default instructions and parameters for the space's sessions "
        "(a session's own value wins, field by field)."
    )
    def settings(self) -> ChatSettings:
        return ChatSettings.from_domain(self.domain_space.settings)

    @strawberry.field(
        description="Your role in this space (a space you are not a member of does not "
        "exist for you)."
    )
    async def viewer_role(self, info: Info) -> SpaceRole:
        role = await info.context.loaders.role_by_space_id.load(self.id)
        assert role is not None  # a space is only loaded for its members
        return SpaceRole[role.value]

    @strawberry.field(description="The space's members and their roles, in the order added.")
    async def members(self, info: Info) -> list[SpaceMember]:
        found = await info.context.loaders.members_by_space_id.load(self.id)
        return [SpaceMember.from_domain(m) for m in found]

    @strawberry.field(description="The branches of this space's lineage, by name.")
    async def branches(self, info: Info) -> list[Branch]:
        found = await info.context.loaders.branches_by_space_id.load(self.id)
        return [Branch(name=name, head_id=head) for name, head in found]

    @strawberry.field(description="The head checkpoint of a branch (main by default).")
    async def head(
        self,
        info: Info,
        branch: Annotated[str, strawberry.argument(description="The branch name.")] = MAIN_BRANCH,
    ) -> CheckpointRef | None:
        from ..checkpoints.types import Checkpoint

        for name, head_id in await info.context.loaders.branches_by_space_id.load(self.id):
            if name == branch:
                found = await info.context.loaders.checkpoint_by_id.load(head_id)
                return Checkpoint.from_domain(found) if found else None
        return None

    @strawberry.field(
        description="Every checkpoint of the space, oldest first, across all branches. "
        "Each node's `parent` and `branchName` draw the graph."
    )
    async def lineage(
        self,
        info: Info,
        first: Annotated[
            int | None, strawberry.argument(description="How many (at most 1000).")
        ] = None,
        after: PageCursor = None,
    ) -> relay.Connection[CheckpointRef]:
        from ..checkpoints.types import node_of, prime

        request = page_request(scope=CHECKPOINTS, first=first, after=after, cap=1000)
        page, parents = await reading.lineage(info.context.actor, self.domain_space, request)
        prime(info, (*page.items, *parents))
        return connection(page, lambda c: node_of(info, c), lambda c: c.id, scope=CHECKPOINTS)

    @strawberry.field(
        description="The whole lineage in one compact answer: every checkpoint (id, hash, "
        "title, branch, parent ids, creation time), oldest first, and the branches' tips. "
        "It costs about a twentieth of `lineage` per checkpoint, and two SQL statements "
        "whatever its size; for a checkpoint's content, ask `checkpoint(id:)`."
    )
    async def lineage_graph(
        self,
        info: Info,
        first: Annotated[
            int | None,
            strawberry.argument(
                description=f"How many checkpoints at most (at most {MAX_LINEAGE_GRAPH_NODES:,}, "
                "the default)."
            ),
        ] = None,
        after: Annotated[
            str | None,
            strawberry.argument(
                description="The `endCursor` of a previous answer (or any cursor of `lineage`)."
            ),
        ] = None,
    ) -> LineageGraph:
        request = page_request(
            scope=CHECKPOINTS, first=first, after=after, cap=MAX_LINEAGE_GRAPH_NODES
        )
        assert request.first is not None  # page_request defaults it to the cap
        page = await reading.lineage_entries(
            info.context.actor, self.domain_space, after=request.after, limit=request.first
        )
        branches = await info.context.loaders.branches_by_space_id.load(self.id)
        return LineageGraph(
            nodes=[LineageNode.from_domain(entry) for entry in page.items],
            branches=[
                LineageBranch(name=name, head_id=strawberry.ID(ids.encode("Checkpoint", head)))
                for name, head in branches
            ],
            has_next_page=page.has_next,
            end_cursor=cursor(CHECKPOINTS, page.items[-1].id) if page.items else None,
        )

    @strawberry.field(
        description="The sessions attached to this space that you may read (your own, and "
        "those shared with the space), pinned first (the most recently pinned first), then "
        "oldest first. Archived sessions only when asked for."
    )
    async def sessions(
        self,
        info: Info,
        first: PageSize = None,
        after: PageCursor = None,
        archived: ArchivedFilter = False,
        pinned: PinnedFilter = None,
        tag: TagFilter = None,
        branches: BranchesFilter = SessionBranches.ALL,
    ) -> relay.Connection[SessionRef]:
        from ..sessions.types import Session

        cap = info.context.services.settings.max_page_size
        request = page_request(scope=SESSIONS, first=first, after=after, cap=cap)
        page = await reading.space_sessions(
            info.context.actor,
            self.domain_space,
            request,
            session_filters(archived, pinned, tag, branches),
        )
        return connection(page, Session.from_domain, lambda s: s.id, scope=SESSIONS)
