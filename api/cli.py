"""`smriti serve`, `smriti export-schema`, and the lineage tools: `verify`, `export`, `import`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

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
        "--auth",
        choices=["auto", "accounts"],
        help="accounts: everyone signs in. auto (default; $SMRITI_AUTH): accounts as soon "
        "as one exists; a server bound beyond loopback needs one.",
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

    from api.app import create_app
    from api.errors import ConfigError
    from api.settings import Settings
    from api.store import database

    try:
        settings = Settings.from_environment(
            database_url=args.database,
            providers_file=args.providers,
            host=args.host,
            auth=args.auth,
        )
        app = create_app(settings)
    except ConfigError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return 2
    where = database.describe(settings.database_url)
    try:
        asyncio.run(database.prepare(settings.database_url))
    except database.StartupError as exc:
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
    print(
        f"Smriti on http://{args.host}:{args.port}/ (GraphiQL at /graphql), database {where}",
        file=sys.stderr,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        timeout_graceful_shutdown=5,
        # Named, not "auto": without the library, auto serves no websocket at all
        # ("Unsupported upgrade request") where this fails at start-up.
        ws="websockets-sansio",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
