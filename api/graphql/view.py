"""The GraphQL endpoint: Strawberry's ASGI view with Smriti's context and rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.websocket_origin import normalize_allowed_origins
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL

from api import graphiql
from api.errors import ConfigError
from api.graphql.context import Context
from api.graphql.schema import build_schema
from api.services.base import Services
from api.store import spaces

# Subscriptions over a websocket at /graphql, or as Server-Sent Events from a
# POST to /graphql with `Accept: text/event-stream` (graphql-sse, distinct
# connections mode). The legacy graphql-ws protocol is not offered.
SUBSCRIPTION_PROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_SSE_PROTOCOL)


class SmritiGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with Smriti's per-request context."""

    def __init__(
        self, services: Services, *, vendor_dir: Path = graphiql.VENDOR_DIR, **kwargs: Any
    ) -> None:
        super().__init__(build_schema(services.settings), **kwargs)
        self.services = services
        self.owner_id: int | None = None
        # Decided once: the assets are fetched at install time, not while serving.
        self.local_ide_html = graphiql.local_page(super().graphql_ide_html, vendor_dir)

    @property
    def graphql_ide_html(self) -> str:
        """Strawberry's GraphiQL page; on local asset copies when all are fetched."""
        return graphiql.with_notebook_link(self.local_ide_html or super().graphql_ide_html)

    def is_request_allowed(self, request: BaseRequestProtocol) -> bool:
        # A GET needs no CORS preflight, so any page can make one (an EventSource
        # does): a stream, which can send a message, must be a POST.
        if request.method == "GET" and "text/event-stream" in request.headers.get("accept", ""):
            return False
        return super().is_request_allowed(request)

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        if self.owner_id is None:
            self.owner_id = await spaces.local_user_id()
        return Context(services=self.services, owner_id=self.owner_id)


def graphql_view(services: Services, *, vendor_dir: Path = graphiql.VENDOR_DIR) -> SmritiGraphQL:
    """The /graphql endpoint (HTTP, websocket, SSE) for ``services``."""
    allowed = services.settings.allowed_origins
    try:
        normalize_allowed_origins(allowed)
    except ValueError as exc:
        raise ConfigError(f"SMRITI_ALLOWED_ORIGINS: {exc}") from None
    # A websocket from a browser page is accepted from the same origin (Origin
    # host == Host) and from allowed_origins; one without Origin is no browser's.
    return SmritiGraphQL(
        services,
        vendor_dir=vendor_dir,
        subscription_protocols=SUBSCRIPTION_PROTOCOLS,
        allowed_origins=allowed,
    )
