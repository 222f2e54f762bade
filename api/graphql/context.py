"""The per-request context: who is asking, the services, the loaders."""

from __future__ import annotations

from typing import Any

from strawberry.types import Info as StrawberryInfo

from api.domain.accounts import Actor
from api.errors import Unauthenticated
from api.graphql.loaders import Loaders, make_loaders
from api.services.base import Services


class Context:
    """One per request (per connection for a websocket).

    ``actor`` is who is asking; resolvers pass it first to every use case of
    ``api.services``. A websocket has none until its connection_init has said
    who it is (``act_as``); nothing runs before that.
    """

    def __init__(self, services: Services, actor: Actor | None, *, via_get: bool = False) -> None:
        self.services = services
        # A GET has a smaller query budget (api/graphql/cost.py): any page can send one.
        self.via_get = via_get
        # A websocket's connection_init payload (Strawberry sets it).
        self.connection_params: Any = None
        self._actor = actor
        self._loaders: Loaders | None = make_loaders(actor) if actor is not None else None

    @property
    def actor(self) -> Actor:
        if self._actor is None:
            raise Unauthenticated("Say who you are first (connection_init).")
        return self._actor

    @property
    def loaders(self) -> Loaders:
        if self._loaders is None:
            self._loaders = make_loaders(self.actor)
        return self._loaders

    def act_as(self, actor: Actor) -> None:
        """The caller, once a websocket's connection_init has said who it is."""
        self._actor = actor
        self._loaders = make_loaders(actor)

    def fresh_loaders(self) -> None:
        """Forget what this request's loaders have read (after a change they
        would otherwise show as it was)."""
        self._loaders = make_loaders(self.actor)


Info = StrawberryInfo[Context, Any]
