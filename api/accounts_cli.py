"""`smriti users …` and `smriti tokens …`: accounts from the command line.

Exit codes (DESIGN.md §9): 0 ok, 2 usage (or a refusal, said on stderr),
3 the database cannot be opened, 4 no such user or token.

A password is read with getpass (asked twice) on a terminal, else as one line
of standard input; it is never echoed, printed or logged. A token is printed
once, on standard output, and only its hash is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import re
import sys
from collections.abc import Callable
from typing import Any

from api.errors import SmritiError
from api.settings import Settings

EXIT_USAGE = 2
EXIT_DATABASE = 3
EXIT_NOT_FOUND = 4


def add_commands(commands: Any, database_option: Callable[[argparse.ArgumentParser], None]) -> None:
    users = commands.add_parser(
        "users", help="Accounts: add, list, disable, enable, delete, passwd, lockouts."
    )
    user_commands = users.add_subparsers(dest="users_command", required=True)
    add = user_commands.add_parser(
        "add", help="Add an account (the first one takes over the data made without accounts)."
    )
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="It administers this server.")
    add.add_argument(
        "--password-stdin", action="store_true", help="Read the password as one line of stdin."
    )
    database_option(add)
    listing = user_commands.add_parser("list", help="The accounts.")
    listing.add_argument("--json", action="store_true", help="Print JSON.")
    database_option(listing)
    disable = user_commands.add_parser(
        "disable", help="Disable an account: its tokens and sessions stop working."
    )
    disable.add_argument("name")
    database_option(disable)
    enable = user_commands.add_parser("enable", help="Enable a disabled account again.")
    enable.add_argument("name")
    database_option(enable)
    delete = user_commands.add_parser(
        "delete",
        help="Delete an account with its own spaces, sessions and tokens (refused while a "
        "space it created has other members: disable it instead).",
    )
    delete.add_argument("name")
    database_option(delete)
    passwd = user_commands.add_parser("passwd", help="Set a new password (signs browsers out).")
    passwd.add_argument("name")
    passwd.add_argument(
        "--password-stdin", action="store_true", help="Read the password as one line of stdin."
    )
    database_option(passwd)
    lockouts = user_commands.add_parser(
        "lockouts",
        help="Failed sign-ins still counted, per name and address (every worker's).",
    )
    lockouts.add_argument(
        "--clear",
        metavar="NAME|ADDRESS",
        help="Forget the failures of this user name (from every address) or of this "
        "address (for every name).",
    )
    lockouts.add_argument("--json", action="store_true", help="Print JSON.")
    database_option(lockouts)
    tokens = commands.add_parser("tokens", help="API tokens for scripts and agents.")
    token_commands = tokens.add_subparsers(dest="tokens_command", required=True)
    create = token_commands.add_parser("create", help="Create a token; printed once on stdout.")
    create.add_argument("--user", required=True, help="The account it acts as.")
    create.add_argument("--name", required=True, help="What it is for.")
    create.add_argument("--read-only", action="store_true", help="It may read, never write.")
    create.add_argument("--expires", help="Lifetime in days, e.g. 30d (default: never).")
    database_option(create)
    token_list = token_commands.add_parser(
        "list", help="A user's tokens, newest first (never their secrets)."
    )
    token_list.add_argument("--user", required=True, help="Whose tokens.")
    token_list.add_argument("--json", action="store_true", help="Print JSON.")
    database_option(token_list)
    revoke = token_commands.add_parser("revoke", help="Revoke a token: it stops working at once.")
    revoke.add_argument("id", help="The token's id, as `smriti tokens list` shows it.")
    database_option(revoke)


def run(args: argparse.Namespace) -> int:
    from api.errors import NotFound
    from api.services.operator import StartupError

    try:
        url = Settings.from_environment(database_url=args.database).database_url
        if args.command == "tokens":
            if args.tokens_command == "create":
                days = _days(args.expires)
                return asyncio.run(_create_token(url, args, days))
            return asyncio.run(_tokens(url, args))
        password = None
        if args.users_command in ("add", "passwd"):
            password = _read_password(args.password_stdin)
        return asyncio.run(_users(url, args, password))
    except StartupError as exc:
        print(f"smriti: {exc}", file=sys.stderr)
        return EXIT_DATABASE
    except NotFound as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return EXIT_NOT_FOUND
    except SmritiError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return EXIT_USAGE


def _days(value: str | None) -> int | None:
    if value is None:
        return None
    match = re.fullmatch(r"(\d+)d?", value.strip())
    if match is None:
        from api.errors import InputError

        raise InputError(f"--expires is a number of days like 30d, not {value[:20]!r}.")
    return int(match.group(1))


def _read_password(from_stdin: bool) -> str:
    from api.errors import InputError

    if not from_stdin and sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != first:
            raise InputError("The two passwords differ; nothing was changed.")
        return first
    raw = sys.stdin.buffer.readline()
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            "The password on standard input is not UTF-8 text; nothing was changed."
        ) from None
    return line[:-1] if line.endswith("\n") else line


async def has_accounts(db_url: str) -> bool:
    from api.services import operator

    async with operator.opened(db_url):
        return await operator.any_account()


async def _users(db_url: str, args: argparse.Namespace, password: str | None) -> int:
    from api.services import accounts, operator

    async with operator.opened(db_url):
        if args.users_command == "add":
            assert password is not None
            account, adopted = await accounts.add_user(args.name, password, is_admin=args.admin)
            role = "admin" if account.is_admin else "user"
            print(f"added {role} {account.name}", file=sys.stderr)
            if adopted:
                print(
                    f"{account.name} now owns the spaces and sessions made without accounts; "
                    "the server asks everyone to sign in from now on.",
                    file=sys.stderr,
                )
        elif args.users_command == "list" and args.json:
            print(json.dumps([_account_json(a) for a in await accounts.accounts_list()], indent=2))
        elif args.users_command == "list":
            for account in await accounts.accounts_list():
                flags = [
                    f
                    for f, on in (("admin", account.is_admin), ("disabled", account.disabled))
                    if on
                ]
                print(f"{account.name}\t{','.join(flags) or '-'}\t{account.created_at:%Y-%m-%d}")
        elif args.users_command == "lockouts":
            await _lockouts(args)
        elif args.users_command in ("disable", "enable"):
            changed = await accounts.set_user_disabled(args.name, args.users_command == "disable")
            print(f"{args.users_command}d {changed.name}", file=sys.stderr)
        elif args.users_command == "delete":
            deleted = await accounts.delete_user(args.name)
            print(f"deleted {deleted.name} and their own spaces and sessions", file=sys.stderr)
        else:
            assert password is not None
            await operator.set_password(args.name, password)
            print(f"new password for {args.name}", file=sys.stderr)
    return 0


def _account_json(account: Any) -> dict[str, Any]:
    return {
        "name": account.name,
        "admin": account.is_admin,
        "disabled": account.disabled,
        "createdAt": account.created_at.isoformat(),
    }


def _token_json(token: Any) -> dict[str, Any]:
    def when(moment: Any) -> str | None:
        return moment.isoformat() if moment is not None else None

    return {
        "id": token.id,
        "name": token.name,
        "prefix": token.prefix,
        "readOnly": token.read_only,
        "createdAt": when(token.created_at),
        "lastUsedAt": when(token.last_used_at),
        "expiresAt": when(token.expires_at),
        "revokedAt": when(token.revoked_at),
    }


async def _tokens(db_url: str, args: argparse.Namespace) -> int:
    from api.errors import InputError, NotFound
    from api.services import accounts, operator

    async with operator.opened(db_url):
        if args.tokens_command == "list":
            _, tokens = await accounts.tokens_of(args.user)
            if args.json:
                print(json.dumps([_token_json(t) for t in tokens], indent=2))
                return 0
            for t in tokens:
                state = (
                    "revoked" if t.revoked_at else ("read-only" if t.read_only else "read-write")
                )
                used = f"{t.last_used_at:%Y-%m-%d}" if t.last_used_at else "never used"
                print(f"{t.id}\t{t.prefix}…\t{t.name}\t{state}\t{used}")
            return 0
        if not args.id.isdigit():
            raise InputError(
                f"A token's id is a number, as `smriti tokens list` shows, not {args.id[:20]!r}."
            )
        try:
            token = await accounts.revoke_token(int(args.id), user_id=None)
        except NotFound:
            raise NotFound(f"No API token with id {args.id}.") from None
        print(f"revoked token {token.id} ({token.prefix}…, {token.name})", file=sys.stderr)
    return 0


async def _lockouts(args: argparse.Namespace) -> None:
    import ipaddress

    from api.services import accounts

    if args.clear is not None:
        try:
            ipaddress.ip_address(args.clear)
            cleared = await accounts.clear_sign_in_failures(address=args.clear)
        except ValueError:
            cleared = await accounts.clear_sign_in_failures(name=args.clear)
        if args.json:
            print(json.dumps({"cleared": cleared}))
        print(f"cleared the failed sign-ins of {cleared} name/address pairs", file=sys.stderr)
        return
    failures = await accounts.sign_in_failures(Settings.from_environment().sign_in_limits)
    if args.json:
        rows = [
            {
                "name": f.name,
                "address": f.address,
                "failures": f.failures,
                "lastFailedAt": f.last_failed_at.isoformat(),
            }
            for f in failures
        ]
        print(json.dumps(rows, indent=2))
        return
    for f in failures:
        print(f"{f.name}\t{f.address}\t{f.failures}\t{f.last_failed_at:%Y-%m-%d %H:%M:%S}")


async def _create_token(db_url: str, args: argparse.Namespace, days: int | None) -> int:
    from api.services import accounts, operator

    async with operator.opened(db_url):
        account = await operator.account(args.user)
        if account.disabled:
            from api.errors import InputError

            raise InputError(f"{account.name} is disabled.")
        token, secret = await accounts.create_token(
            account.id, name=args.name, read_only=args.read_only, expires_in_days=days
        )
    print(secret)
    scope = "read-only" if token.read_only else "read-write"
    print(f"token {token.prefix}… ({scope}) for {account.name}: shown once", file=sys.stderr)
    return 0
