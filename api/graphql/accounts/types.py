"""Who is signed in, and their API tokens (never a token's secret after creation)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from ...domain import accounts as domain
from ..core import ids


@strawberry.type(description="An API token, as it can be shown again: never its secret.")
class ApiToken:
    id: strawberry.ID = strawberry.field(description="Its id (for revokeApiToken).")
    name: str = strawberry.field(description="What it is for, as its creator named it.")
    prefix: str = strawberry.field(
        description="Its first characters (`smr_` and six more), to recognise it by."
    )
    read_only: bool = strawberry.field(description="It can read, never change anything.")
    created_at: datetime = strawberry.field(description="When it was created.")
    last_used_at: datetime | None = strawberry.field(
        description="When it was last used (to the minute); null if never."
    )
    expires_at: datetime | None = strawberry.field(
        description="When it stops working; null: never."
    )
    revoked_at: datetime | None = strawberry.field(
        description="When it was revoked; null while it works."
    )

    @classmethod
    def from_domain(cls, token: domain.ApiToken) -> ApiToken:
        return cls(
            id=strawberry.ID(ids.encode("ApiToken", token.id)),
            name=token.name,
            prefix=token.prefix,
            read_only=token.read_only,
            created_at=token.created_at,
            last_used_at=token.last_used_at,
            expires_at=token.expires_at,
            revoked_at=token.revoked_at,
        )
