"""The `smriti` command: its parser, and which module runs each command.

Every command starts from api/runtime.py; none imports the web app
(api/app.py) except `smriti serve` (api/serve.py), the one that builds it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from . import __version__, console, exits

# uvicorn's levels, in its order; checked here so a typo stops `serve` before
# anything runs (uvicorn itself fails only once the migrations have run).
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


class _Parser(argparse.ArgumentParser):
    """argparse, its usage errors said in Smriti's one message style."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(console.fail(exits.USAGE, message))


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="smriti",
        description="Smriti: think with language models.",
        epilog=exits.HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"smriti {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _serve_command(commands)
    commands.add_parser("export-schema", help="Print the GraphQL schema (SDL).")
    verify = commands.add_parser(
        "verify",
        help="Recompute every checkpoint hash and parent link; exit 1 if one fails.",
        epilog=VERIFY_JSON,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("--space", help="One space (its number or global id; default: all).")
    _json_option(verify)
    _database_option(verify)
    _user_option(verify)
    from .mcp.cli import add_commands as add_agent_commands

    add_agent_commands(commands, argparse.RawDescriptionHelpFormatter)
    export = commands.add_parser(
        "export",
        help="Write spaces or sessions as a document.",
        epilog=EXPORT_JSON,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    _json_option(export)
    _database_option(export)
    _user_option(export)
    load = commands.add_parser(
        "import",
        help="Recreate an exported JSON document (hashes verified; never twice), "
        "or import a ChatGPT or a Claude export's conversations.json or an Open WebUI "
        "chat export (each conversation's current line; other branches are counted).",
        epilog=IMPORT_JSON,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    load.add_argument("file", help="The JSON document (- for standard input).")
    _json_option(load)
    _database_option(load, creates=True)
    _user_option(load)
    from .accounts_cli import add_commands

    add_commands(commands, _database_option)
    return parser


VERIFY_JSON = """--json prints {"ok": true if every space verified, "spaces": [...]}, a space as
  {"id": global id, "number", "ok", "checked": checkpoints checked, "broken": null or
   {"checkpoint": {"id", "number", "hash", "title"}, "reason", "expectedHash": or null}}."""
EXPORT_JSON = """--json: the json and ipynb formats are JSON already; markdown is printed as
  {"format": "markdown", "document": the text}. With --output, stdout gets
  {"output": the file's absolute path, "format", "bytes": its size}."""
IMPORT_JSON = """--json prints {"format": "smriti", "chatgpt", "claude" or "openwebui",
  "spaces": [...], "sessions": [...]}, each as {"id": global id, "number", "name" (a
  space) or "title" (a session), "imported": false if it was already here}; a session
  also has "branches": how many conversation branches of it this import created (the
  other lines of another app's conversation).
Another app's export is read a conversation at a time and each conversation written
  in a transaction of its own: stopped half-way, run it again to import the rest.
  Progress goes to stderr (one line rewritten in place on a terminal)."""


def _serve_command(commands: Any) -> None:
    from .settings import ENVIRONMENT

    width = max(len(name) for name, _ in ENVIRONMENT)
    serve = commands.add_parser(
        "serve",
        help="Run the API, the web UI and GraphiQL.",
        epilog="environment (a flag wins over its variable):\n"
        + "\n".join(f"  {name:<{width}}  {meaning}" for name, meaning in ENVIRONMENT)
        + "\n  and the API key variables providers.yaml names (api_key_env).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="The address to listen on (default: 127.0.0.1, this machine only; any other "
        "needs an account, see --auth).",
    )
    serve.add_argument(
        "--port",
        type=_port,
        default=8000,
        help="The port to listen on, 0 to 65535 (default: 8000; 0: a free one, printed at start).",
    )
    serve.add_argument(
        "--database",
        help="Database URL, or a SQLite file's path (default: $SMRITI_DATABASE_URL or a "
        "SQLite file); created if missing.",
    )
    serve.add_argument(
        "--providers", help="providers.yaml (default: $SMRITI_PROVIDERS_FILE or the bundled one)."
    )
    serve.add_argument(
        "--log-level",
        type=_log_level,
        default="info",
        metavar="LEVEL",
        help=f"How much the server logs: {', '.join(LOG_LEVELS)} (default: info).",
    )
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


def _at_least_one(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {count}")
    return count


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a whole number, not {text[:20]!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {port}")
    return port


def _log_level(text: str) -> str:
    if text.lower() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"one of {', '.join(LOG_LEVELS)}, not {text[:20]!r}")
    return text.lower()


def _database_option(command: argparse.ArgumentParser, *, creates: bool = False) -> None:
    """--database; a command that only reads refuses a SQLite file that does not exist."""
    what = "created if missing" if creates else "it must exist"
    command.add_argument(
        "--database",
        help=f"Database URL (default: $SMRITI_DATABASE_URL or the SQLite file `serve` "
        f"uses); {what}.",
    )


def _user_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--user", help="Whose data, once the database has accounts (default: the local user)."
    )


def _json_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="Print JSON (its fields: below).")


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = _parser().parse_args(argv)
    if args.command == "export-schema":
        from .graphql.schema import export_schema

        sys.stdout.write(export_schema())
        return exits.OK
    if args.command in ("users", "tokens"):
        from . import accounts_cli

        return accounts_cli.run(args)
    if args.command == "mcp":
        from .mcp import cli as mcp_cli

        return mcp_cli.run(args)
    from .mcp.cli import COMMANDS

    if args.command in COMMANDS:
        from .mcp import cli as mcp_cli

        return mcp_cli.run_command(args)
    if args.command in ("verify", "export", "import"):
        from . import lineage_cli

        return lineage_cli.run(args)
    # The one command that builds the web app: imported for it alone.
    from . import serve

    return serve.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
