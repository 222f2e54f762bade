"""The per-request context: who is asking, the services, the loaders."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from strawberry.types import Info as StrawberryInfo

from ..domain.accounts import Actor, Credential
from ..errors import Unauthenticated
from ..services.base import Services
from .loaders import Loaders, make_loaders

T = TypeVar("T")


class Context:
    """One per request (per connection for a websocket).

    ``actor`` is who is asking; resolvers pass it first to every use case of
    ``api.services``. A websocket has none until its connection_init has said
    who it is (``act_as``); nothing runs before that. ``credential`` is what
    the actor rests on (a token, a browser session; None without accounts):
    a websocket asks it again at each operation.
    """

    def __init__(
        self,
        services: Services,
        actor: Actor | None,
        *,
        credential: Credential | None = None,
        over_websocket: bool = False,
    ) -> None:
        self.services = services
        # A websocket's connection_init payload (Strawberry sets it).
        self.connection_params: Any = None
        self.credential = credential
        self.over_websocket = over_websocket
        self._actor = actor
        self._loaders: Loaders | None = make_loaders(actor) if actor is not None else None

    @property
    def actor(self) -> Actor:
        if self._actor is None:
            raise Unauthenticated("Say who you are first (connection_init).")
        return self._actor

    @property
    def has_actor(self) -> bool:
        """Whether the caller is known (a websocket: not before its connection_init)."""
        return self._actor is not None

    @property
    def loaders(self) -> Loaders:
        if self._loaders is None:
            self._loaders = make_loaders(self.actor)
        return self._loaders

    def act_as(self, actor: Actor, credential: Credential) -> None:
        """The caller, once a websocket's connection_init has said who it is,
        and as its credential stands at each of its operations."""
        self._actor = actor
        self.credential = credential
        self._loaders = make_loaders(actor)

    def fresh_loaders(self) -> None:
        """Forget what this request's loaders have read (after a change they
        would otherwise show as it was)."""
        self._loaders = make_loaders(self.actor)

    def credentials_changed(self) -> None:
        """A token was revoked, a user disabled or deleted: what this worker has
        open on them ends now (the other workers' within a second). Not awaited:
        this very request may run on a socket it ends, and it answers first."""
        connections = self.services.connections
        self.services.spawn(connections.recheck(), "end-what-rests-on-ended-credentials")

    def until_ended(self, events: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
        """A stream that stops when the caller's credential ends (revoked,
        signed out, user disabled). Over a websocket the socket itself is
        ended that way (api/graphql/view.py); without accounts nothing ends."""
        if self.credential is None or self.over_websocket:
            return events
        return self.services.connections.until_ended(events, self.credential)


Info = StrawberryInfo[Context, Any]
