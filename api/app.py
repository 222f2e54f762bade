"""The application, assembled from plain lists in one place."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# Before anything can import LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.websocket_origin import normalize_allowed_origins
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL

from api import graphiql
from api.errors import ConfigError
from api.graphql.context import Context
from api.graphql.schema import build_schema
from api.providers import LiteLLMTransport, ProviderRegistry, default_config, load_config
from api.services.base import Services
from api.settings import REPOSITORY_ROOT, Settings
from api.store import database, spaces

WEBUI_DIR = REPOSITORY_ROOT / "webui"
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
        return self.local_ide_html or super().graphql_ide_html

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


def create_app(
    settings: Settings,
    *,
    registry: ProviderRegistry | None = None,
    graphiql_vendor_dir: Path = graphiql.VENDOR_DIR,
) -> Starlette:
    """Build the app. A malformed providers file raises ConfigError here,
    before anything listens."""
    if registry is None:
        config = (
            load_config(settings.providers_file) if settings.providers_file else default_config()
        )
        registry = ProviderRegistry(
            config, transport=LiteLLMTransport(timeout=settings.provider_timeout_seconds)
        )
    services = Services(settings=settings, registry=registry)
    try:
        normalize_allowed_origins(settings.allowed_origins)
    except ValueError as exc:
        raise ConfigError(f"SMRITI_ALLOWED_ORIGINS: {exc}") from None
    # A websocket from a browser page is accepted from the same origin (Origin
    # host == Host) and from allowed_origins; one without Origin is no browser's.
    graphql = SmritiGraphQL(
        services,
        vendor_dir=graphiql_vendor_dir,
        subscription_protocols=SUBSCRIPTION_PROTOCOLS,
        allowed_origins=settings.allowed_origins,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await database.migrate(settings.database_url)
        async with database.register(app, settings.database_url):
            # LiteLLM takes seconds to import; do it now, off the event loop, so the
            # server answers at once and the first message does not pay for it.
            services.spawn(asyncio.to_thread(registry.warm_up), "warm-up-providers")
            yield
            await services.drain()

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    routes: list[Any] = [
        Route("/graphql", graphql, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", graphql),
        Route("/healthz", health),
    ]
    if graphql.local_ide_html:
        routes.append(Mount(graphiql.VENDOR_URL, StaticFiles(directory=graphiql_vendor_dir)))
    if Path(WEBUI_DIR).is_dir():
        routes.append(Mount("/", StaticFiles(directory=WEBUI_DIR, html=True), name="webui"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.services = services
    return app
