"""The per-request context: who is asking, the services, the loaders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strawberry.types import Info as StrawberryInfo

from api.graphql.loaders import Loaders, make_loaders
from api.services.base import Services


@dataclass
class Context:
    services: Services
    owner_id: int
    # A GET has a smaller query budget (api/graphql/cost.py): any page can send one.
    via_get: bool = False
    loaders: Loaders = field(init=False)

    def __post_init__(self) -> None:
        self.loaders = make_loaders(self.owner_id)


Info = StrawberryInfo[Context, Any]
