"""sessions and session.

What cannot be found is null, never a top-level error (core.field_errors.MissingIsNull)."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry import relay

from ...services import reading
from ..context import Info
from ..core import ids
from ..core.pagination import SESSIONS, PageCursor, PageSize, connection, page_request
from .filters import (
    ArchivedFilter,
    BranchesFilter,
    PinnedFilter,
    SessionBranches,
    TagFilter,
    session_filters,
)
from .types import Session


@strawberry.type
class SessionQuery:
    @strawberry.field(
        description="Your sessions, pinned first (the most recently pinned first), then "
        "oldest first: all, or those in no space; with `spaceId`, that space's sessions you "
        "may read (yours and those shared with it). Archived sessions only when asked for."
    )
    async def sessions(
        self,
        info: Info,
        first: PageSize = None,
        after: PageCursor = None,
        space_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only this space's sessions.")
        ] = None,
        unattached: Annotated[
            bool, strawberry.argument(description="Only sessions in no space.")
        ] = False,
        archived: ArchivedFilter = False,
        pinned: PinnedFilter = None,
        tag: TagFilter = None,
        branches: BranchesFilter = SessionBranches.ALL,
    ) -> relay.Connection[Session]:
        cap = info.context.services.settings.max_page_size
        request = page_request(scope=SESSIONS, first=first, after=after, cap=cap)
        # A malformed space id names no space, like an unknown one: no sessions
        # (key 0 is never a row's id).
        space = None if space_id is None else (ids.key_or_none(space_id, "Space") or 0)
        page = await reading.sessions_page(
            info.context.actor,
            space,
            request,
            only_unattached=unattached,
            filters=session_filters(archived, pinned, tag, branches),
        )
        return connection(page, Session.from_domain, lambda s: s.id, scope=SESSIONS)

    @strawberry.field(description="A session by id.")
    async def session(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The session's id.")],
    ) -> Session | None:
        reading.ask(info.context.actor, "session")
        key = ids.key_or_none(id, "Session")
        found = await info.context.loaders.session_by_id.load(key) if key is not None else None
        return Session.from_domain(found) if found else None
