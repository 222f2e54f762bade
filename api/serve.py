"""`smriti serve`: the one command that builds the web app.

Its runtime (api/runtime.py) is built first, from the flags and the
environment, and the database checked and migrated once, before anything
listens. One process builds its app from that runtime; with `--workers N`
each worker builds its own from an import string (api/workers.py), so the
parent never imports the app at all (its modules take seconds on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from . import console, exits
from . import workers as processes
from .errors import ConfigError
from .runtime import Runtime
from .services.operator import StartupError


def run(args: argparse.Namespace) -> int:
    try:
        runtime = Runtime.from_environment(
            database_url=args.database,
            providers_file=args.providers,
            host=args.host,
            auth=args.auth,
            forwarded_allow_ips=args.forwarded_allow_ips,
        )
    except ConfigError as exc:
        return console.fail(exits.USAGE, exc.message)
    settings = runtime.settings
    workers = args.workers or settings.workers or processes.default_workers(settings.database_url)
    try:
        if workers == 1:
            from .app import build_app

            app: Any = build_app(runtime, migrate=False, freeze_heap=True)
        else:
            # Workers build their own app; the parent only checks what would stop them.
            app = None
            runtime.registry  # noqa: B018 (reads providers.yaml: ConfigError if malformed)
    except ConfigError as exc:
        return console.fail(exits.USAGE, exc.message)
    where = runtime.database.describe()
    try:
        # Once, here, before any worker starts: no worker migrates again.
        applied = asyncio.run(runtime.database.prepare())
    except StartupError as exc:
        console.fail(exits.DATABASE, str(exc))
        # A driver thread stuck on the database would keep a normal exit waiting.
        sys.stderr.flush()
        os._exit(exits.DATABASE)
    if not settings.bound_to_loopback and not asyncio.run(runtime.database.has_accounts()):
        return console.fail(
            exits.USAGE,
            f"Serving on {args.host} needs an account: create the first with "
            "`smriti users add NAME --admin` (same --database), then start again.",
        )
    if applied:
        console.notice(f"Applied the migrations {', '.join(applied)} to {where}.")

    def announce(port: int) -> None:
        host = f"[{args.host}]" if ":" in args.host and not args.host.startswith("[") else args.host
        console.notice(
            f"Smriti on http://{host}:{port}/ (GraphiQL at /graphql), database {where}, "
            f"{workers} worker{'s' if workers > 1 else ''}."
        )

    options: dict[str, Any] = {
        "log_level": args.log_level,
        # How long a request still running at a stop may go on before it is
        # cancelled (a stream then saves what it has, marked interrupted:
        # Services.drain waits for that). Short, so SIGTERM ends a worker
        # within 2 s (Docker's default gives 10 before SIGKILL).
        "timeout_graceful_shutdown": processes.GRACE_SECONDS,
        # Named, not "auto": without the library, auto serves no websocket at all
        # ("Unsupported upgrade request") where this fails at start-up.
        "ws": "websockets-sansio",
        # uvicorn believes these headers from 127.0.0.1 unless told otherwise:
        # then any local client could name its own address and scheme.
        "proxy_headers": bool(settings.forwarded_allow_ips),
        "forwarded_allow_ips": ",".join(settings.forwarded_allow_ips) or None,
    }
    if app is not None:
        return processes.run_one(app, args.host, args.port, announce, **options)
    # Workers build their app from an import string and inherit the
    # environment: the flags travel in it, every other setting is read there.
    Runtime.hand_to_workers(
        database_url=settings.database_url,
        providers_file=str(settings.providers_file) if settings.providers_file else None,
        host=args.host,
        auth=args.auth,
    )
    return processes.run(workers, args.host, args.port, announce, **options)
