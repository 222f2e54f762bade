"""Who is in a space, and who wrote a turn or a checkpoint."""

from __future__ import annotations

from datetime import datetime

import strawberry

from ...domain import types as domain
from ..context import Info
from ..core.enums import SpaceRole


@strawberry.type(description="A member of a space and their role.")
class SpaceMember:
    user_name: str = strawberry.field(description="The member's user name.")
    role: SpaceRole = strawberry.field(description="What they may do in the space.")
    added_at: datetime = strawberry.field(
        description="When they became a member (the creator: when the space was created)."
    )

    @classmethod
    def from_domain(cls, member: domain.Member) -> SpaceMember:
        return cls(
            user_name=member.user_name,
            role=SpaceRole[member.role.value],
            added_at=member.created_at,
        )


@strawberry.type(description="Who wrote a turn or saved a checkpoint.")
class Author:
    name: str = strawberry.field(description="The user's name (`local` without accounts).")
    via_token: str | None = strawberry.field(
        description="The name of the API token it was written with (a script or an agent); "
        "null when written from a browser or without accounts."
    )


async def author(info: Info, user_id: int, token: str | None) -> Author | None:
    name = await info.context.loaders.user_name_by_id.load(user_id)
    return Author(name=name, via_token=token) if name is not None else None
