"""spaces and space.

What cannot be found is null, never a top-level error (core.field_errors.MissingIsNull)."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry import relay

from ...services import reading
from ..context import Info
from ..core import ids
from ..core.pagination import SPACES, PageCursor, PageSize, connection, page_request
from .types import Space


@strawberry.type
class SpaceQuery:
    @strawberry.field(description="The spaces you are a member of, oldest first.")
    async def spaces(
        self,
        info: Info,
        first: PageSize = None,
        after: PageCursor = None,
    ) -> relay.Connection[Space]:
        cap = info.context.services.settings.max_page_size
        page = await reading.spaces_page(
            info.context.actor, page_request(scope=SPACES, first=first, after=after, cap=cap)
        )
        return connection(page, Space.from_domain, lambda s: s.id, scope=SPACES)

    @strawberry.field(description="A space by id.")
    async def space(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The space's id.")],
    ) -> Space | None:
        reading.ask(info.context.actor, "space")
        key = ids.key_or_none(id, "Space")
        found = await info.context.loaders.space_by_id.load(key) if key is not None else None
        return Space.from_domain(found) if found else None
