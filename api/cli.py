"""`smriti serve`, `smriti export-schema`, and the lineage tools: `verify`, `export`, `import`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from api import __version__

EXIT_DATABASE = 3  # the database cannot be opened or written


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smriti", description="Smriti: think with language models."
    )
    parser.add_argument("--version", action="version", version=f"smriti {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="Run the API, the web UI and GraphiQL.")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--database", help="Database URL (default: $SMRITI_DATABASE_URL or a SQLite file)."
    )
    serve.add_argument(
        "--providers", help="providers.yaml (default: $SMRITI_PROVIDERS_FILE or the bundled one)."
    )
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--workers",
        type=_at_least_one,
        help="Server processes (default: $SMRITI_WORKERS, else one per core on "
        "PostgreSQL and 1 on SQLite).",
    )
    serve.add_argument(
        "--auth",
        choices=["auto", "accounts"],
        help="accounts: everyone signs in. auto (default; $SMRITI_AUTH): accounts as soon "
        "as one exists; a server bound beyond loopback needs one.",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="Believe X-Forwarded-For and X-Forwarded-Proto only from these proxies: "
        'comma-separated addresses or networks, or "*" (default: '
        "$SMRITI_FORWARDED_ALLOW_IPS, else none).",
    )
    commands.add_parser("export-schema", help="Print the GraphQL schema (SDL).")
    verify = commands.add_parser(
        "verify", help="Recompute every checkpoint hash and parent link; exit 1 if one fails."
    )
    verify.add_argument("--space", help="One space (its number or global id; default: all).")
    _database_option(verify)
    _user_option(verify)
    export = commands.add_parser("export", help="Write spaces or sessions as a document.")
    which = export.add_mutually_exclusive_group()
    which.add_argument("--space", help="One space (its number or global id).")
    which.add_argument("--session", help="One session (its number or global id).")
    which.add_argument("--all", action="store_true", help="Every space and session (default).")
    export.add_argument(
        "--format",
        choices=["json", "markdown", "ipynb"],
        default="json",
        help="json: lossless, for `smriti import`; markdown: a session or a space's "
        "lineage; ipynb: a session as a Jupyter notebook.",
    )
    export.add_argument("--output", help="Write to this file (default: standard output).")
    _database_option(export)
    _user_option(export)
    load = commands.add_parser(
        "import",
        help="Recreate an exported JSON document (hashes verified; never twice), "
        "or a ChatGPT export's conversations.json.",
    )
    load.add_argument("file", help="The JSON document (- for standard input).")
    _database_option(load)
    _user_option(load)
    from api.accounts_cli import add_commands

    add_commands(commands, _database_option)
    return parser


def _at_least_one(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {count}")
    return count


def _database_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--database", help="Database URL (default: $SMRITI_DATABASE_URL or a SQLite file)."
    )


def _user_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--user", help="Whose data, once the database has accounts (default: the local user)."
    )


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = _parser().parse_args(argv)
    if args.command == "export-schema":
        from api.graphql.schema import export_schema

        sys.stdout.write(export_schema())
        return 0
    if args.command in ("users", "tokens"):
        from api import accounts_cli

        return accounts_cli.run(args)
    if args.command in ("verify", "export", "import"):
        from api import lineage_cli

        return lineage_cli.run(args)

    import uvicorn

    from api import workers as processes
    from api.errors import ConfigError
    from api.services import operator
    from api.settings import Settings

    try:
        settings = Settings.from_environment(
            database_url=args.database,
            providers_file=args.providers,
            host=args.host,
            auth=args.auth,
            forwarded_allow_ips=args.forwarded_allow_ips,
        )
    except ConfigError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return 2
    workers = args.workers or settings.workers or processes.default_workers(settings.database_url)
    from api.app import SERVE_FLAGS_VARIABLE, create_app, provider_registry

    try:
        # Workers build their own app; the parent only checks what would stop them.
        app = create_app(settings, migrate=False) if workers == 1 else None
        if app is None:
            provider_registry(settings)
    except ConfigError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return 2
    where = operator.describe(settings.database_url)
    try:
        # Once, here, before any worker starts: no worker migrates again.
        applied = asyncio.run(operator.prepare(settings.database_url))
    except operator.StartupError as exc:
        print(f"smriti: {exc}", file=sys.stderr)
        # A driver thread stuck on the database would keep a normal exit waiting.
        sys.stderr.flush()
        os._exit(EXIT_DATABASE)
    if not settings.bound_to_loopback:
        from api.accounts_cli import has_accounts

        if not asyncio.run(has_accounts(settings.database_url)):
            print(
                f"smriti: serving on {args.host} needs an account; create the first with "
                "`smriti users add NAME --admin` (same --database), then start again.",
                file=sys.stderr,
            )
            return 2
    if applied:
        print(f"Applied the migrations {', '.join(applied)} to {where}", file=sys.stderr)
    print(
        f"Smriti on http://{args.host}:{args.port}/ (GraphiQL at /graphql), database {where}, "
        f"{workers} worker{'s' if workers > 1 else ''}",
        file=sys.stderr,
    )
    options: dict[str, Any] = {
        "log_level": args.log_level,
        # Per worker: each finishes its replies' saves (Services.drain) in this time.
        "timeout_graceful_shutdown": 5,
        # Named, not "auto": without the library, auto serves no websocket at all
        # ("Unsupported upgrade request") where this fails at start-up.
        "ws": "websockets-sansio",
        # uvicorn believes these headers from 127.0.0.1 unless told otherwise:
        # then any local client could name its own address and scheme.
        "proxy_headers": bool(settings.forwarded_allow_ips),
        "forwarded_allow_ips": ",".join(settings.forwarded_allow_ips) or None,
    }
    if app is not None:
        uvicorn.run(app, host=args.host, port=args.port, **options)
        return 0
    # Workers build their app from an import string and inherit the
    # environment: the flags travel in it, every other setting is read there.
    os.environ[SERVE_FLAGS_VARIABLE] = json.dumps(
        {
            "database_url": settings.database_url,
            "providers_file": str(settings.providers_file) if settings.providers_file else None,
            "host": args.host,
            "auth": args.auth,
        }
    )
    return processes.run(workers, args.host, args.port, **options)


if __name__ == "__main__":
    raise SystemExit(main())
