"""The per-request context: who is asking, the services, the loaders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strawberry.types import Info as StrawberryInfo

from api.domain.accounts import Actor
from api.domain.types import Authorship
from api.errors import Forbidden
from api.graphql.loaders import Loaders, make_loaders
from api.services.base import Services


@dataclass
class Context:
    services: Services
    owner_id: int
    # A GET has a smaller query budget (api/graphql/cost.py): any page can send one.
    via_get: bool = False
    # Who is asking; None only on a websocket before its connection_init is read.
    actor: Actor | None = None
    # A websocket's connection_init payload (Strawberry sets it).
    connection_params: Any = None
    loaders: Loaders = field(init=False)

    def __post_init__(self) -> None:
        self.loaders = make_loaders(self.owner_id)

    def act_as(self, actor: Actor) -> None:
        """The caller, once a websocket's connection_init has said who it is."""
        self.actor = actor
        self.owner_id = actor.user_id
        self.loaders = make_loaders(actor.user_id)

    @property
    def authorship(self) -> Authorship:
        """Who writes what this request writes: the caller and their token's name."""
        assert self.actor is not None  # the view settles it before anything runs
        return Authorship(self.actor.user_id, self.actor.token_name)

    @property
    def is_admin(self) -> bool:
        return self.actor is not None and self.actor.is_admin

    def check_writable(self) -> None:
        """Forbidden for a read-only token."""
        if self.actor is not None and self.actor.read_only:
            raise Forbidden("This API token is read-only: it cannot change anything.")


Info = StrawberryInfo[Context, Any]
