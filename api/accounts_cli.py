"""`smriti users …` and `smriti tokens create`: accounts from the command line.

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


def add_commands(commands: Any, database_option: Callable[[argparse.ArgumentParser], None]) -> None:
    users = commands.add_parser("users", help="Accounts: add, list, disable, passwd.")
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
    database_option(listing)
    disable = user_commands.add_parser(
        "disable", help="Disable an account: its tokens and sessions stop working."
    )
    disable.add_argument("name")
    database_option(disable)
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


def run(args: argparse.Namespace) -> int:
    try:
        url = Settings.from_environment(database_url=args.database).database_url
        if args.command == "tokens":
            days = _days(args.expires)
            return asyncio.run(_create_token(url, args, days))
        password = None
        if args.users_command in ("add", "passwd"):
            password = _read_password(args.password_stdin)
        return asyncio.run(_users(url, args, password))
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
    from api.services import accounts
    from api.store import transfer

    async with transfer.opened(db_url):
        return await accounts.any_account()


async def _users(db_url: str, args: argparse.Namespace, password: str | None) -> int:
    from api.services import accounts
    from api.store import accounts as store
    from api.store import transfer

    async with transfer.opened(db_url):
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
        elif args.users_command == "list":
            for account in await store.accounts():
                flags = [
                    f
                    for f, on in (("admin", account.is_admin), ("disabled", account.disabled))
                    if on
                ]
                print(f"{account.name}\t{','.join(flags) or '-'}\t{account.created_at:%Y-%m-%d}")
        elif args.users_command == "lockouts":
            await _lockouts(args)
        elif args.users_command == "disable":
            await store.disable(args.name)
            print(f"disabled {args.name}", file=sys.stderr)
        else:
            assert password is not None
            await store.set_password(args.name, accounts.hash_password(password))
            print(f"new password for {args.name}", file=sys.stderr)
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
    from api.services import accounts
    from api.store import accounts as store
    from api.store import transfer

    async with transfer.opened(db_url):
        account, _ = await store.by_name(args.user)
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
