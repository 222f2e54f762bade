"""viewer: who is asking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from ...domain.accounts import Actor
from ...services import accounts
from ...services import presets as preset_service
from ..context import Info
from .types import ApiToken

if TYPE_CHECKING:
    from ..sessions.presets import Preset


@strawberry.type(description="Who is asking: the signed-in user, or the user of an API token.")
class Viewer:
    actor: strawberry.Private[Actor]
    name: str = strawberry.field(description="Their user name (`local` without accounts).")
    is_admin: bool = strawberry.field(description="Whether they administer this server.")
    read_only: bool = strawberry.field(
        description="Whether this request came with a read-only API token."
    )
    token_name: str | None = strawberry.field(
        description="The name of the API token this request came with; null for a browser."
    )

    @strawberry.field(description="Their presets (model + instructions + parameters), by name.")
    async def presets(self) -> list[Annotated[Preset, strawberry.lazy("..sessions.presets")]]:
        from ..sessions.presets import Preset as Found

        return [Found.from_domain(p) for p in await preset_service.list_presets(self.actor)]

    @strawberry.field(description="Their API tokens, newest first, revoked ones included.")
    async def api_tokens(self) -> list[ApiToken]:
        return [ApiToken.from_domain(token) for token in await accounts.api_tokens(self.actor)]


@strawberry.type
class ViewerQuery:
    @strawberry.field(description="Who is asking.")
    def viewer(self, info: Info) -> Viewer:
        actor = info.context.actor
        return Viewer(
            actor=actor,
            name=actor.name,
            is_admin=actor.is_admin,
            read_only=actor.read_only,
            token_name=actor.token_name,
        )
