"""providers: the configured providers, the models the caller may use, the defaults."""

from __future__ import annotations

import strawberry

from ...services import model_access
from ..context import Info
from .types import Provider, ProviderReachability, Providers


@strawberry.type
class ProviderQuery:
    @strawberry.field(
        description="The configured providers, the models you may use and the defaults."
    )
    async def providers(self, info: Info) -> Providers:
        view = await model_access.providers(info.context.actor, info.context.services.registry)
        return Providers(
            providers=[
                Provider(
                    name=p.name,
                    available=p.available,
                    reason=p.reason,
                    models=[f"{p.name}/{m}" for m in p.models],
                    reachability=ProviderReachability[p.reachability.name],
                )
                for p in view.providers
            ],
            chat_default=view.chat_default,
            background=view.background,
            admins_only=view.admins_only,
        )
