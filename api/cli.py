"""`smriti serve` and `smriti export-schema`."""

from __future__ import annotations

import argparse
import os
import sys

from api import __version__


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
    commands.add_parser("export-schema", help="Print the GraphQL schema (SDL).")
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = _parser().parse_args(argv)
    if args.command == "export-schema":
        from api.graphql.schema import export_schema

        sys.stdout.write(export_schema())
        return 0

    import uvicorn

    from api.app import create_app
    from api.errors import ConfigError
    from api.settings import Settings

    settings = Settings.from_environment(
        database_url=args.database, providers_file=args.providers, host=args.host
    )
    try:
        app = create_app(settings)
    except ConfigError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return 2
    print(
        f"Smriti on http://{args.host}:{args.port}/ (GraphiQL at /graphql), "
        f"database {_redact(settings.database_url)}",
        file=sys.stderr,
    )
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, timeout_graceful_shutdown=5
    )
    return 0


def _redact(url: str) -> str:
    """Never print a database password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc, query=""))
    return urlunsplit(parts._replace(query=""))


if __name__ == "__main__":
    raise SystemExit(main())
