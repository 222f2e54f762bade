"""The application, assembled from plain lists in one place, from a Runtime."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# Before anything can import LiteLLM: it must never reach for the network.
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from . import __version__, graphiql, heap
from .bundled import WEBUI_DIR
from .graphql.view import graphql_view
from .http import checkpoint_fields
from .http.auth import Authenticate, auth_routes
from .http.headers import SecurityHeaders
from .http.hosts import trusted_hosts
from .mcp.http import McpEndpoint
from .providers import ProviderRegistry
from .runtime import Runtime
from .settings import Settings

log = logging.getLogger(__name__)


def create_app(
    settings: Settings,
    *,
    registry: ProviderRegistry | None = None,
    graphiql_vendor_dir: Path = graphiql.VENDOR_DIR,
    migrate: bool = True,
    freeze_heap: bool = False,
) -> Starlette:
    """The app of a Runtime built from ``settings`` (and ``registry``, else the
    one the settings name): for tests and benchmarks, which start from settings."""
    return build_app(
        Runtime(settings, registry=registry),
        graphiql_vendor_dir=graphiql_vendor_dir,
        migrate=migrate,
        freeze_heap=freeze_heap,
    )


def build_app(
    runtime: Runtime,
    *,
    graphiql_vendor_dir: Path = graphiql.VENDOR_DIR,
    migrate: bool = True,
    freeze_heap: bool = False,
) -> Starlette:
    """Build the app. A malformed providers file raises ConfigError here,
    before anything listens. ``migrate=False``: the database is already up to
    date (`smriti serve` migrates once, before its workers start).
    ``freeze_heap``: once started (the providers' libraries loaded, when they
    are preloaded), keep what is alive out of later full collections
    (``api.heap``); for a server process, not for an app built in a test."""
    settings = runtime.settings
    registry = runtime.registry
    services = runtime.services
    auth = runtime.authenticator
    graphql = graphql_view(services, auth, vendor_dir=graphiql_vendor_dir)
    mcp = McpEndpoint(services)
    # Who is asking, found once per request in front of each endpoint that
    # needs it (api/http/auth.py); /mcp counts a bearer token only.
    caller = [Middleware(Authenticate, auth)]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if migrate:
            await runtime.database.migrate()
        async with runtime.database.registered(app):
            # LiteLLM takes seconds to import; do it now, off the event loop, so the
            # server answers at once and the first message does not pay for it
            # (unless the operator would rather keep the memory until it is used).
            settle = heap.settle if freeze_heap else None
            app.state.warm_up = (
                warm_up(registry, then=settle) if settings.preload_providers else None
            )
            if settle is not None and app.state.warm_up is None:
                settle()
            # Open websockets and streams end with their credentials, even one
            # revoked by another worker or process: stopped before the database closes.
            async with services.connections.watching(), mcp.running():
                yield
            await services.drain()
            registry.reachability_checks.close()

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__})

    routes: list[Any] = [
        Route("/graphql", graphql, methods=["GET", "POST"], middleware=caller),
        WebSocketRoute("/graphql", graphql, middleware=caller),
        Route(
            "/mcp",
            mcp,
            methods=["GET", "POST", "DELETE"],
            middleware=[Middleware(Authenticate, auth, cookies=False)],
        ),
        Route("/healthz", health),
        Route(checkpoint_fields.URL, checkpoint_fields.checkpoint_fields),
        *auth_routes(auth),
    ]
    if graphql.local_ide_html:
        routes.append(Mount(graphiql.VENDOR_URL, StaticFiles(directory=graphiql_vendor_dir)))
    routes.append(Mount("/", StaticFiles(directory=WEBUI_DIR, html=True), name="webui"))
    middleware = [*trusted_hosts(settings), Middleware(SecurityHeaders)]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        # 413 from Content-Length alone, or once the bytes read pass the limit.
        max_body_size=settings.body_limit,
    )
    app.state.services = services
    return app


def warm_up(
    registry: ProviderRegistry, *, then: Callable[[], None] | None = None
) -> threading.Thread:
    """Load the providers' libraries in a daemon thread that nobody waits for;
    ``then`` runs there afterwards, whether they loaded or not.

    An import cannot be interrupted, and it took 15 to 18 s on a busy machine:
    a stop (SIGTERM, `docker stop`) that waited for it outlived Docker's 10 s.
    It writes nothing, so abandoning it when the process ends loses nothing;
    a model call that comes first waits for the import itself (the loader).
    """

    def run() -> None:
        try:
            registry.warm_up()
        except Exception:  # a failed preload must never take the server down
            log.exception("loading the providers' libraries at start failed")
        if then is not None:
            then()

    thread = threading.Thread(target=run, name="warm-up-providers", daemon=True)
    thread.start()
    return thread


def serve_app() -> Starlette:
    """The app factory each `smriti serve` worker process calls.

    Settings are read from the environment the worker inherited, as the
    parent read them, plus the parent's flags; the parent has already checked
    the database and applied its migrations, so no worker migrates again.
    """
    return build_app(Runtime.of_worker(), migrate=False, freeze_heap=True)
