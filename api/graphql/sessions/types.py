"""The Session node: a conversation, its mount and its turns."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry import relay

from ...domain import chat_settings
from ...domain import types as domain
from ...services import branching, reading
from ...settings import MAX_TURN_PAGE_SIZE
from ..chat.turns import Turn
from ..context import Info
from ..core import ids
from ..core.chat_settings import ChatSettings
from ..core.enums import MemoryScope, SessionVisibility
from ..core.pagination import connection, page_request, turns_of

if TYPE_CHECKING:
    from ..checkpoints.types import Checkpoint
    from ..spaces.types import Space

CheckpointRef = Annotated["Checkpoint", strawberry.lazy("..checkpoints.types")]
SpaceRef = Annotated["Space", strawberry.lazy("..spaces.types")]


async def _checkpoint(info: Info, checkpoint_id: int | None) -> Any:
    from ..checkpoints.types import Checkpoint

    if checkpoint_id is None:
        return None
    found = await info.context.loaders.checkpoint_by_id.load(checkpoint_id)
    return Checkpoint.from_domain(found) if found else None


@strawberry.type(description="A mounted checkpoint and the boundary the server computed for it.")
class Mount:
    base_sequence: int = strawberry.field(
        description="Turns with a sequence number above this one are in the window."
    )
    checkpoint_id: strawberry.Private[int]

    @strawberry.field(description="The mounted checkpoint.")
    async def checkpoint(self, info: Info) -> CheckpointRef | None:
        return await _checkpoint(info, self.checkpoint_id)


async def _session(info: Info, session_id: int) -> Session | None:
    found = await info.context.loaders.session_by_id.load(session_id)
    return Session.from_domain(found) if found else None


@strawberry.type(
    description="Where a conversation branch left the session it was branched from: it "
    "holds copies of that session's turns 1..afterSequence, then turns of its own."
)
class BranchOrigin:
    after_sequence: int = strawberry.field(
        description="The last turn of the origin the branch holds a copy of."
    )
    session_id: strawberry.Private[int]

    @strawberry.field(
        description="The session it was branched from (null: deleted since, or not yours to read)."
    )
    async def session(self, info: Info) -> Session | None:
        return await _session(info, self.session_id)


@strawberry.type(
    description="The sessions of a conversation's family that are alternatives at one "
    "position: the same turns before it, a turn of each one's own there (an edited "
    'message, a regenerated reply), oldest first (shown as "index+1 / count").'
)
class Alternatives:
    sequence_number: int = strawberry.field(description="The position (a sequence number).")
    index: int = strawberry.field(
        description="Which of them this session shows there (from 0): itself, or the "
        "session whose turn it holds a copy of."
    )
    session_ids: strawberry.Private[tuple[int, ...]]

    @strawberry.field(description="How many alternatives there are.")
    def count(self) -> int:
        return len(self.session_ids)

    @strawberry.field(description="The alternatives, oldest first.")
    async def sessions(self, info: Info) -> list[Session]:
        found = await info.context.loaders.session_by_id.load_many(list(self.session_ids))
        return [Session.from_domain(s) for s in found if s is not None]


@strawberry.type(
    name="TurnConnection",
    description="A page of a session's turns: `edges` (each with its cursor) or `nodes` "
    "(the same turns, without a cursor each; `pageInfo` has the page's cursors).",
)
class TurnConnection(relay.Connection[Turn]):
    nodes: list[Turn] = strawberry.field(
        description="The turns of the page, in order: `edges { node }` without the edges, "
        "cheaper when reading many turns."
    )


@strawberry.type(description="A conversation: an append-only stream of turns.")
class Session(relay.Node):
    id: relay.NodeID[int]
    title: str = strawberry.field(
        description="The title (set by the user or after the first reply)."
    )
    branch_name: str = strawberry.field(
        description="The branch of the space's lineage this session saves checkpoints on."
    )
    active_provider: str = strawberry.field(description="The provider of the session's model.")
    active_model: str = strawberry.field(description="The session's model, without provider.")
    memory_scope: MemoryScope = strawberry.field(description="How many checkpoints the model sees.")
    visibility: SessionVisibility = strawberry.field(
        description="Who may read it: its author only (PRIVATE, the default) or also the "
        "members of its space (SPACE). Only its author writes to it."
    )
    last_sequence_number: int = strawberry.field(
        description="The sequence number of the newest turn (0 when there is none)."
    )
    created_at: datetime = strawberry.field(description="When the session was created.")
    updated_at: datetime = strawberry.field(description="When the session last changed.")
    pinned_at: datetime | None = strawberry.field(
        description="When it was pinned (null: it is not)."
    )
    archived_at: datetime | None = strawberry.field(
        description="When it was archived (null: it is not)."
    )
    domain_session: strawberry.Private[domain.Session]

    @classmethod
    def from_domain(cls, session: domain.Session) -> Session:
        return cls(
            id=session.id,
            title=session.title,
            branch_name=session.branch_name,
            active_provider=session.active_provider,
            active_model=session.active_model,
            memory_scope=MemoryScope[session.memory_scope.value],
            visibility=SessionVisibility[session.visibility.value],
            last_sequence_number=session.last_sequence_number,
            created_at=session.created_at,
            updated_at=session.updated_at,
            pinned_at=session.pinned_at,
            archived_at=session.archived_at,
            domain_session=session,
        )

    @classmethod
    async def resolve_nodes(
        cls, *, info: Info, node_ids: Iterable[str], required: bool = False
    ) -> list[Any]:
        found = await info.context.loaders.session_by_id.load_many([int(i) for i in node_ids])
        return [cls.from_domain(s) if s else None for s in found]

    @strawberry.field(description="Pinned: listed first, the most recently pinned first.")
    def pinned(self) -> bool:
        return self.pinned_at is not None

    @strawberry.field(
        description="Archived: left out of `sessions` unless asked for; still searched "
        "and exported."
    )
    def archived(self) -> bool:
        return self.archived_at is not None

    @strawberry.field(description="Its tags, in the order they were given.")
    async def tags(self, info: Info) -> list[str]:
        return await info.context.loaders.tags_by_session_id.load(self.id)

    @strawberry.field(description="The user name of its author (who alone writes to it).")
    async def author_name(self, info: Info) -> str:
        name = await info.context.loaders.user_name_by_id.load(self.domain_session.owner_id)
        assert name is not None  # users are disabled, never deleted
        return name

    @strawberry.field(description='The model as "provider/model", as `providers` lists it.')
    def model(self) -> str:
        return f"{self.active_provider}/{self.active_model}"

    @strawberry.field(description="The space the session is attached to (none: FRESH mode).")
    async def space(self, info: Info) -> SpaceRef | None:
        from ..spaces.types import Space

        space_id = self.domain_session.space_id
        if space_id is None:
            return None
        found = await info.context.loaders.space_by_id.load(space_id)
        return Space.from_domain(found) if found else None

    @strawberry.field(
        description="The checkpoint that was the head when the session joined its space."
    )
    async def seeded_from(self, info: Info) -> CheckpointRef | None:
        return await _checkpoint(info, self.domain_session.seeded_from_id)

    @strawberry.field(description="The checkpoint this session was forked from.")
    async def forked_from(self, info: Info) -> CheckpointRef | None:
        return await _checkpoint(info, self.domain_session.forked_from_id)

    @strawberry.field(
        description="The session's own instructions and parameters (null fields: not set "
        "on the session)."
    )
    def settings(self) -> ChatSettings:
        return ChatSettings.from_domain(self.domain_session.settings)

    @strawberry.field(
        description="What the next message is sent with: the session's own settings, else "
        "its space's defaults, field by field (maxOutputTokens is sent at most as the "
        "model's output limit)."
    )
    async def effective_settings(self, info: Info) -> ChatSettings:
        own, defaults = await _own_and_defaults(info, self.domain_session)
        return ChatSettings.from_domain(chat_settings.effective(own, defaults))

    @strawberry.field(
        description="The settings fields (GraphQL names: instructions, temperature, topP, "
        "maxOutputTokens, stop) whose effective value comes from the space's defaults."
    )
    async def inherited_settings(self, info: Info) -> list[str]:
        own, defaults = await _own_and_defaults(info, self.domain_session)
        return list(chat_settings.inherited(own, defaults))

    @strawberry.field(
        description="The first session of this conversation's family of branches (its own "
        "id when it is not a branch): sessions with the same familyId are branches of one "
        "conversation."
    )
    def family_id(self) -> strawberry.ID:
        return strawberry.ID(ids.encode("Session", self.domain_session.family_root_id))

    @strawberry.field(
        description="How many sessions of this conversation's family (its familyId) you "
        "may read, this one included: 1 when it has no branch you may read."
    )
    async def branch_count(self, info: Info) -> int:
        return await info.context.loaders.family_size_by_root_id.load(
            self.domain_session.family_root_id
        )

    @strawberry.field(
        description="Where this conversation branch left the session it was branched from "
        "(forkSession with atTurnId, regenerate, editAndResend); null for any other session."
    )
    def branched_from(self) -> BranchOrigin | None:
        point = self.domain_session.branched_from
        if point is None:
            return None
        return BranchOrigin(after_sequence=point.after_sequence, session_id=point.session_id)

    @strawberry.field(
        description="The positions where this session has alternatives among its family's "
        "sessions you may read (more than one), in order; with `sequenceNumber`, that "
        "position only (one alternative or more; none when the session has no turn there)."
    )
    async def alternatives(
        self,
        info: Info,
        sequence_number: Annotated[
            int | None, strawberry.argument(description="Only this position.")
        ] = None,
    ) -> list[Alternatives]:
        found = await branching.alternatives(
            info.context.actor, self.domain_session, sequence_number
        )
        return [
            Alternatives(sequence_number=a.position, index=a.index, session_ids=a.sessions)
            for a in found
        ]

    @strawberry.field(description="The mounted checkpoint and its boundary, if any.")
    def mount(self) -> Mount | None:
        mount = self.domain_session.mount
        if mount is None:
            return None
        return Mount(base_sequence=mount.base_sequence, checkpoint_id=mount.checkpoint_id)

    @strawberry.field(
        description="The turns, in sequence order. Use `last`/`before` to read from the end. "
        "Without `first` or `last`, the first 100. A page stops early (more to read: "
        "`hasNextPage`/`hasPreviousPage`) once it holds 16 MiB of content; it always "
        "holds at least one turn."
    )
    async def turns(
        self,
        info: Info,
        first: Annotated[
            int | None,
            strawberry.argument(
                description=f"How many from the start side (at most {MAX_TURN_PAGE_SIZE:,} "
                "by default, SMRITI_MAX_TURN_PAGE_SIZE)."
            ),
        ] = None,
        after: Annotated[
            str | None, strawberry.argument(description="Turns after this cursor.")
        ] = None,
        last: Annotated[
            int | None,
            strawberry.argument(
                description=f"How many from the end side (at most {MAX_TURN_PAGE_SIZE:,} "
                "by default, SMRITI_MAX_TURN_PAGE_SIZE)."
            ),
        ] = None,
        before: Annotated[
            str | None, strawberry.argument(description="Turns before this cursor.")
        ] = None,
    ) -> TurnConnection:
        settings = info.context.services.settings
        if first is None and last is None:
            # Without first/last a page is the ordinary size, as the query
            # cost counts an unpaged list (api/graphql/core/cost.py).
            first = settings.max_page_size
        scope = turns_of(self.id)
        request = page_request(
            scope=scope,
            first=first,
            after=after,
            last=last,
            before=before,
            cap=settings.max_turn_page_size,
        )
        page = await reading.session_turns(info.context.actor, self.domain_session, request)
        found = connection(page, Turn.from_domain, lambda t: t.sequence_number, scope=scope)
        return TurnConnection(
            edges=found.edges,
            page_info=found.page_info,
            nodes=[edge.node for edge in found.edges],
        )


async def _own_and_defaults(
    info: Info, session: domain.Session
) -> tuple[domain.ChatSettings, domain.ChatSettings | None]:
    if session.space_id is None:
        return session.settings, None
    space = await info.context.loaders.space_by_id.load(session.space_id)
    return session.settings, space.settings if space is not None else None
