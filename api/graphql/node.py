"""The `node` query: any object by its global id (Relay)."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry import relay

from ..services import reading
from .chat.turns import Turn
from .checkpoints.types import Checkpoint
from .context import Info
from .core import ids
from .sessions.types import Session
from .spaces.types import Space

NODE_TYPES: dict[str, type[Space | Session | Checkpoint | Turn]] = {
    "Space": Space,
    "Session": Session,
    "Checkpoint": Checkpoint,
    "Turn": Turn,
}


@strawberry.type
class NodeQuery:
    @strawberry.field(description="Any object by its global id.")
    async def node(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="A global id.")],
    ) -> relay.Node | None:
        reading.ask(info.context.actor, "node")
        parsed = ids.parse_id(id)
        node_type = NODE_TYPES.get(parsed[0]) if parsed else None
        if parsed is None or node_type is None:
            return None
        found = await node_type.resolve_nodes(info=info, node_ids=[str(parsed[1])], required=False)
        node: relay.Node | None = found[0]
        return node
