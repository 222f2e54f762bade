"""`smriti users …` and `smriti tokens …`: accounts from the command line.

Exit codes (api/exits.py): 0 ok, 2 usage (or a refusal, said on stderr),
3 the database cannot be opened (or, except for `users add`, does not exist),
4 no such user or token. Every command takes --json (its help names the fields).

A password is read with getpass (asked twice) on a terminal, else as one line
of standard input; it is never echoed, printed or logged. A token is printed
once, on standard output, and only its hash is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import console, exits
from .errors import SmritiError

if TYPE_CHECKING:
    from .runtime import Runtime

ACCOUNT_FIELDS = '{"name", "admin", "disabled", "createdAt": ISO 8601}'
TOKEN_FIELDS = (
    '{"id": the number `tokens revoke` takes, "name", "prefix": its first characters, '
    '"readOnly", "createdAt", "lastUsedAt", "expiresAt", "revokedAt": ISO 8601 or null}'
)


def _json_option(command: argparse.ArgumentParser, prints: str) -> None:
    command.add_argument("--json", action="store_true", help=f"Print JSON: {prints}.")


def add_commands(commands: Any, database_option: Callable[..., None]) -> None:
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
    _json_option(
        add,
        ACCOUNT_FIELDS[:-1] + ', "adopted": true if it took over the data made without accounts}',
    )
    database_option(add, creates=True)
    listing = user_commands.add_parser("list", help="The accounts.")
    _json_option(listing, f"a list of {ACCOUNT_FIELDS}, oldest first")
    database_option(listing)
    disable = user_commands.add_parser(
        "disable", help="Disable an account: its tokens and sessions stop working."
    )
    disable.add_argument("name")
    _json_option(disable, f"the account, {ACCOUNT_FIELDS}")
    database_option(disable)
    enable = user_commands.add_parser("enable", help="Enable a disabled account again.")
    enable.add_argument("name")
    _json_option(enable, f"the account, {ACCOUNT_FIELDS}")
    database_option(enable)
    delete = user_commands.add_parser(
        "delete",
        help="Delete an account with its own spaces, sessions and tokens (refused while a "
        "space it created has other members: disable it instead).",
    )
    delete.add_argument("name")
    _json_option(delete, f"the account deleted, {ACCOUNT_FIELDS}")
    database_option(delete)
    passwd = user_commands.add_parser("passwd", help="Set a new password (signs browsers out).")
    passwd.add_argument("name")
    passwd.add_argument(
        "--password-stdin", action="store_true", help="Read the password as one line of stdin."
    )
    _json_option(passwd, f"the account, {ACCOUNT_FIELDS}")
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
    _json_option(
        lockouts,
        'a list of {"name", "address", "failures", "lastFailedAt": ISO 8601}; with --clear, '
        '{"cleared": how many name/address pairs}',
    )
    database_option(lockouts)
    tokens = commands.add_parser("tokens", help="API tokens for scripts and agents.")
    token_commands = tokens.add_subparsers(dest="tokens_command", required=True)
    create = token_commands.add_parser("create", help="Create a token; printed once on stdout.")
    create.add_argument("--user", required=True, help="The account it acts as.")
    create.add_argument("--name", required=True, help="What it is for.")
    create.add_argument("--read-only", action="store_true", help="It may read, never write.")
    create.add_argument("--expires", help="Lifetime in days, e.g. 30d (default: never).")
    _json_option(create, TOKEN_FIELDS[:-1] + ', "user", "token": the secret, shown this once}')
    database_option(create)
    token_list = token_commands.add_parser(
        "list", help="A user's tokens, newest first (never their secrets)."
    )
    token_list.add_argument("--user", required=True, help="Whose tokens.")
    _json_option(token_list, f"a list of {TOKEN_FIELDS}")
    database_option(token_list)
    revoke = token_commands.add_parser("revoke", help="Revoke a token: it stops working at once.")
    revoke.add_argument("id", help="The token's id, as `smriti tokens list` shows it.")
    _json_option(revoke, f"the token, {TOKEN_FIELDS}")
    database_option(revoke)


def run(args: argparse.Namespace) -> int:
    from .errors import NotFound
    from .runtime import Runtime
    from .services.operator import StartupError

    try:
        runtime = Runtime.from_environment(database_url=args.database)
        if args.command == "tokens":
            if args.tokens_command == "create":
                days = _days(args.expires)
                return asyncio.run(_create_token(runtime, args, days))
            return asyncio.run(_tokens(runtime, args))
        password = None
        if args.users_command in ("add", "passwd"):
            password = _read_password(args.password_stdin)
        return asyncio.run(_users(runtime, args, password))
    except StartupError as exc:
        return console.fail(exits.DATABASE, str(exc))
    except NotFound as exc:
        return console.fail(exits.NOT_FOUND, exc.message)
    except SmritiError as exc:
        return console.fail(exits.USAGE, exc.message)


def _days(value: str | None) -> int | None:
    if value is None:
        return None
    match = re.fullmatch(r"(\d+)d?", value.strip())
    if match is None:
        from .errors import InputError

        raise InputError(f"--expires is a number of days like 30d, not {value[:20]!r}.")
    return int(match.group(1))


def _read_password(from_stdin: bool) -> str:
    from .errors import InputError

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


async def _users(runtime: Runtime, args: argparse.Namespace, password: str | None) -> int:
    from .services import accounts, operator

    # The first account may be made on a new database (then `smriti serve`);
    # every other command needs the accounts already there.
    async with runtime.database.opened(create=args.users_command == "add"):
        if args.users_command == "add":
            assert password is not None
            account, adopted = await accounts.add_user(args.name, password, is_admin=args.admin)
            role = "admin" if account.is_admin else "user"
            console.notice(f"Added {role} {account.name}.")
            if adopted:
                console.notice(
                    f"The account {account.name} now owns the spaces and sessions made "
                    "without accounts; the server asks everyone to sign in from now on."
                )
            if args.json:
                console.print_json({**_account_json(account), "adopted": adopted})
        elif args.users_command == "list" and args.json:
            console.print_json([_account_json(a) for a in await accounts.accounts_list()])
        elif args.users_command == "list":
            for account in await accounts.accounts_list():
                flags = [
                    f
                    for f, on in (("admin", account.is_admin), ("disabled", account.disabled))
                    if on
                ]
                print(f"{account.name}\t{','.join(flags) or '-'}\t{account.created_at:%Y-%m-%d}")
        elif args.users_command == "lockouts":
            await _lockouts(runtime, args)
        elif args.users_command in ("disable", "enable"):
            changed = await accounts.set_user_disabled(args.name, args.users_command == "disable")
            console.notice(f"{args.users_command.capitalize()}d {changed.name}.")
            _print_account(changed, args.json)
        elif args.users_command == "delete":
            deleted = await accounts.delete_user(args.name)
            console.notice(f"Deleted {deleted.name} and their own spaces and sessions.")
            _print_account(deleted, args.json)
        else:
            assert password is not None
            await operator.set_password(args.name, password)
            changed = await operator.account(args.name)
            console.notice(f"New password set for {changed.name}.")
            _print_account(changed, args.json)
    return exits.OK


def _print_account(account: Any, as_json: bool) -> None:
    if as_json:
        console.print_json(_account_json(account))


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


async def _tokens(runtime: Runtime, args: argparse.Namespace) -> int:
    from .errors import InputError, NotFound
    from .services import accounts

    async with runtime.database.opened(create=False):
        if args.tokens_command == "list":
            _, tokens = await accounts.tokens_of(args.user)
            if args.json:
                console.print_json([_token_json(t) for t in tokens])
                return exits.OK
            for t in tokens:
                state = (
                    "revoked" if t.revoked_at else ("read-only" if t.read_only else "read-write")
                )
                used = f"{t.last_used_at:%Y-%m-%d}" if t.last_used_at else "never used"
                print(f"{t.id}\t{t.prefix}…\t{t.name}\t{state}\t{used}")
            return exits.OK
        if not args.id.isdigit():
            raise InputError(
                f"A token's id is a number, as `smriti tokens list` shows, not {args.id[:20]!r}."
            )
        try:
            token = await accounts.revoke_token(int(args.id), user_id=None)
        except NotFound:
            raise NotFound(f"No API token with id {args.id}.") from None
        console.notice(f"Revoked token {token.id} ({token.prefix}…, {token.name}).")
        if args.json:
            console.print_json(_token_json(token))
    return exits.OK


async def _lockouts(runtime: Runtime, args: argparse.Namespace) -> None:
    import ipaddress

    from .services import accounts

    if args.clear is not None:
        try:
            ipaddress.ip_address(args.clear)
            cleared = await accounts.clear_sign_in_failures(address=args.clear)
        except ValueError:
            cleared = await accounts.clear_sign_in_failures(name=args.clear)
        if args.json:
            console.print_json({"cleared": cleared})
        console.notice(f"Cleared the failed sign-ins of {cleared} name/address pairs.")
        return
    failures = await accounts.sign_in_failures(runtime.settings.sign_in_limits)
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
        console.print_json(rows)
        return
    for f in failures:
        print(f"{f.name}\t{f.address}\t{f.failures}\t{f.last_failed_at:%Y-%m-%d %H:%M:%S}")


async def _create_token(runtime: Runtime, args: argparse.Namespace, days: int | None) -> int:
    from .services import accounts, operator

    async with runtime.database.opened(create=False):
        account = await operator.account(args.user)
        if account.disabled:
            from .errors import InputError

            raise InputError(f"The account {account.name} is disabled.")
        token, secret = await accounts.create_token(
            account.id, name=args.name, read_only=args.read_only, expires_in_days=days
        )
    if args.json:
        console.print_json({**_token_json(token), "user": account.name, "token": secret})
    else:
        print(secret)
    scope = "read-only" if token.read_only else "read-write"
    console.notice(f"Token {token.prefix}… ({scope}) for {account.name}: shown once.")
    return exits.OK
