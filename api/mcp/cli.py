"""`smriti mcp` and the commands for scripts and agents: `smriti spaces`,
`state`, `search`, `checkpoint show|list|create`, `fork`, `merge`.

Each command is one MCP tool called by name (two for `merge`: the --from
branch's head, then the merge), so the command line and an agent can never
disagree: same arguments checked in one place, same result (--json prints
the tool's structured result exactly), same errors. Where the tool runs:

- locally, against the database (--database or SMRITI_DATABASE_URL), as the
  local user or, once there are accounts, the one --user names, with all
  their rights (as `smriti export` acts for them);
- with --url (or SMRITI_URL), on that running server over its /mcp with the
  SDK's client, as the API token in SMRITI_TOKEN (never printed).

`smriti mcp` serves the tools over stdio: the local ones, or with --url the
remote server's, forwarded. Exit codes (api/exits.py): 0 done, 2 usage, 3 the
database or the server cannot be reached, 4 not found, 6 refused (a token
missing, wrong or not allowed), 7 a merge's unresolved conflicts.

Nothing here imports the SDK at import time (`smriti --help` stays quick).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .. import console, exits
from ..domain.accounts import Actor
from ..errors import ConfigError, ErrorCode, NotFound, SmritiError

if TYPE_CHECKING:
    import mcp_types as types

COMMANDS = ("spaces", "state", "search", "checkpoint", "fork", "merge")
URL_VARIABLE = "SMRITI_URL"
TOKEN_VARIABLE = "SMRITI_TOKEN"
FIELDS = ("decisions", "tasks", "openQuestions", "entities")

# A tool error's code, as the exit status a script branches on.
STATUS = {
    ErrorCode.NOT_FOUND.value: exits.NOT_FOUND,
    ErrorCode.FORBIDDEN.value: exits.REFUSED,
    ErrorCode.UNAUTHENTICATED.value: exits.REFUSED,
    ErrorCode.CONFLICT.value: exits.CONFLICT,
}

Call = Callable[[str, dict[str, Any]], Awaitable["types.CallToolResult"]]


class Usage(Exception):
    """The command line asks for something it cannot (exit 2)."""


# --- the parsers ---------------------------------------------------------------

WHERE = f"""where it runs:
  locally, on --database (default: $SMRITI_DATABASE_URL or the SQLite file `serve`
  uses), as the local user or, once there are accounts, --user NAME; or with --url
  (default: ${URL_VARIABLE}) on a running server, as the API token in ${TOKEN_VARIABLE}.
  The same tool answers either way (`smriti mcp` serves it to agents).
"""


def add_commands(commands: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """The parsers of `smriti mcp` and of the commands for scripts and agents."""

    def command(name: str, help_text: str, tool: str, prints: str, **kw: Any) -> Any:
        parser = commands.add_parser(
            name,
            help=f"{help_text}.",
            description=_wrapped(f"{help_text}. It calls the MCP tool {tool}, as an agent would."),
            epilog=f"--json prints {prints}.\n\n{WHERE}",
            formatter_class=formatter,
            **kw,
        )
        return parser

    mcp = commands.add_parser(
        "mcp",
        help="Serve the MCP tools to an agent over stdio (the local database's, or with "
        "--url a server's).",
        description=_wrapped(
            "Serve Smriti's MCP tools, resources and prompt to an agent over stdio (Model "
            "Context Protocol): the local database's, or with --url a running server's, each "
            "request forwarded as the API token in SMRITI_TOKEN."
        ),
        epilog=WHERE,
        formatter_class=formatter,
    )
    _where(mcp, json=False)

    spaces = command(
        "spaces",
        "List the spaces you can read",
        "list_spaces",
        '{"spaces": [{"id", "name", "description", "updatedAt"}], "hasMore"}',
    )
    _first(spaces, 50)
    _where(spaces)

    state = command(
        "state",
        "Where a space stands: a continuation brief for a prompt",
        "space_state",
        '{"brief", "tokens", "headId", "branches": [{"name", "headId"}], "changedIds"}',
    )
    state.add_argument("space", type=_number, metavar="SPACE", help="The space's number.")
    state.add_argument("--branch", help='The branch (default: "main").')
    state.add_argument(
        "--since",
        metavar="CHECKPOINT",
        help="What changed since this checkpoint (its number) or time (ISO 8601).",
    )
    _where(state)

    search = command(
        "search",
        "Full-text search over what you can read, best match first",
        "search",
        '{"hits": [{"kind", "id", "snippet"}], "hasMore"}',
    )
    search.add_argument(
        "query", help='Words (all required), "a phrase" in quotes, word* for a prefix.'
    )
    search.add_argument("--space", type=_number, help="Only this space (its number).")
    search.add_argument(
        "--kind",
        action="append",
        choices=["turn", "checkpoint", "session", "space"],
        help="Only this kind of object (repeat for several; default: all).",
    )
    _first(search, 10)
    _where(search)

    checkpoint = commands.add_parser(
        "checkpoint", help="Checkpoints: show one, list a branch's, create one."
    )
    which = checkpoint.add_subparsers(dest="checkpoint_command", required=True)
    show = which.add_parser(
        "show",
        help="One checkpoint in full, by number or by a space's hash prefix.",
        description="One checkpoint in full. It calls the MCP tool show_checkpoint.",
        epilog=f'--json prints {{"checkpoint": {CHECKPOINT_FIELDS}}}.\n\n{WHERE}',
        formatter_class=formatter,
    )
    show.add_argument("id", nargs="?", type=_number, metavar="ID", help="Its number.")
    show.add_argument("--space", type=_number, help="With --hash: the space's number.")
    show.add_argument("--hash", metavar="PREFIX", help="Its hash, or a unique prefix (4+ hex).")
    _where(show)
    listing = which.add_parser(
        "list",
        help="A branch's checkpoints, its head first.",
        description=_wrapped(
            "A branch's checkpoints, its head first, back through its parents (it calls the "
            "MCP tool list_checkpoints)."
        ),
        epilog=f'--json prints {{"branch", "checkpoints": [{CHECKPOINT_FIELDS}]}}.\n\n{WHERE}',
        formatter_class=formatter,
    )
    listing.add_argument("--space", type=_number, required=True, help="The space's number.")
    listing.add_argument("--branch", help='The branch (default: "main").')
    _first(listing, 20)
    _where(listing)
    create = which.add_parser(
        "create",
        help="Save a checkpoint into a session (from Markdown or from fields).",
        description=_wrapped(
            "Save where the work stands as a checkpoint on a session's branch (it calls the "
            "MCP tool save_checkpoint): from Markdown with the usual headings, or from --title "
            "and the other fields. Lists are the whole lists as they now stand."
        ),
        epilog='--json prints {"saved": true, "checkpoint": '
        f"{CHECKPOINT_FIELDS}}}, or with --dry-run\n"
        '  {"saved": false, "content": the checkpoint as it would be saved, "carried": the\n'
        "  items the branch head carries}.\n\n" + WHERE,
        formatter_class=formatter,
    )
    create.add_argument("--session", type=_number, required=True, help="The session's number.")
    create.add_argument(
        "--markdown", metavar="FILE", help="The checkpoint as Markdown (- for standard input)."
    )
    create.add_argument("--title", help="A short title (at most 200 characters).")
    create.add_argument("--objective", help="What the work is for.")
    create.add_argument("--summary", help="Where it stands.")
    create.add_argument("--decision", action="append", help="A decision (repeat for each).")
    create.add_argument("--task", action="append", help="An open task (repeat for each).")
    create.add_argument("--question", action="append", help="An open question (repeat for each).")
    create.add_argument("--entity", action="append", help="An entity (repeat for each).")
    create.add_argument(
        "--dry-run", action="store_true", help="Check it and show it; save nothing."
    )
    _where(create)

    fork = command(
        "fork",
        "Continue from a checkpoint: a new session on a new branch",
        "fork",
        '{"sessionId", "spaceId", "branchName", "title"}',
    )
    fork.add_argument("checkpoint", type=_number, metavar="CHECKPOINT", help="Its number.")
    fork.add_argument("--branch", metavar="NAME", help="The new branch (default: named for you).")
    fork.add_argument("--title", help="The new session's title.")
    _where(fork)

    merge = command(
        "merge",
        "Merge a branch's head into another branch (or preview it with --dry-run)",
        "merge (preview_merge with --dry-run)",
        '{"fastForward", "checkpoint": {…}}; with --dry-run preview_merge\'s\n'
        '  {"into", "oursId", "theirsId", "ancestorId", "fastForward", "upToDate",\n'
        '   "conflictCount", "lists": {field: {"items", "conflicts"}}, "suggestion"}',
    )
    merge.add_argument("--space", type=_number, required=True, help="The space's number.")
    merge.add_argument(
        "--from", dest="source", required=True, metavar="BRANCH", help="The branch merged."
    )
    merge.add_argument(
        "--into", default="main", metavar="BRANCH", help='The branch merged into (default: "main").'
    )
    merge.add_argument(
        "--title", help="The merge checkpoint's title (default: the preview's suggestion)."
    )
    merge.add_argument("--objective", help="Its objective (default: the merged one).")
    merge.add_argument("--summary", help="Its summary (default: the merged one).")
    merge.add_argument(
        "--resolve",
        action="append",
        metavar="FIELD:keep|drop|into|from:ITEM",
        type=_resolution,
        help=f"Resolve a conflict over ITEM of FIELD ({', '.join(FIELDS)}): keep or drop "
        "it, or for one edited on both sides take the --into or the --from text. Repeat for "
        "each; an unresolved conflict refuses the merge (exit 7).",
    )
    merge.add_argument(
        "--dry-run", action="store_true", help="Preview the merge (preview_merge); write nothing."
    )
    _where(merge)


CHECKPOINT_FIELDS = (
    '\n  {"id", "hash", "spaceId", "parentId", "mergeParentId", "branchName", "title",\n'
    '  "objective", "summary", "decisions", "tasks", "openQuestions", "entities",\n'
    '  "authorAgent", "createdAt"}'
)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, width=80)


def _where(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    if json:
        parser.add_argument(
            "--json", action="store_true", help="Print the tool's structured result (below)."
        )
    parser.add_argument(
        "--database",
        help="Database URL (default: $SMRITI_DATABASE_URL or the SQLite file `serve` uses); "
        "it must exist.",
    )
    parser.add_argument(
        "--user", help="Whose data, once the database has accounts (default: the local user)."
    )
    parser.add_argument(
        "--url",
        help=f"A running server instead (default: ${URL_VARIABLE}), e.g. http://127.0.0.1:8000; "
        f"the API token is read from ${TOKEN_VARIABLE}.",
    )


def _first(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--first", type=_number, help=f"At most this many, 1 to 100 (default: {default})."
    )


def _number(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a number (1, 2, …), not {text[:40]!r}")
    return int(text)


# --resolve's choices, as the merge tool's resolution says them.
CHOICES: dict[str, dict[str, Any]] = {
    "keep": {"keep": True},
    "drop": {"keep": False},
    "into": {"take": "INTO"},
    "from": {"take": "FROM"},
}


def _resolution(text: str) -> dict[str, Any]:
    parts = text.split(":", 2)
    if len(parts) != 3 or parts[0] not in FIELDS or parts[1] not in CHOICES:
        raise argparse.ArgumentTypeError(
            f"FIELD:keep|drop|into|from:ITEM with FIELD one of {', '.join(FIELDS)}, "
            f"not {text[:60]!r}"
        )
    return {"field": parts[0], "item": parts[2], **CHOICES[parts[1]]}


# --- running a command -----------------------------------------------------------


def _given(**arguments: Any) -> dict[str, Any]:
    """The tool's arguments: those the command line gave (the tool has the defaults)."""
    return {name: value for name, value in arguments.items() if value is not None}


async def _spaces(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    return await call("list_spaces", _given(first=args.first))


async def _state(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    given: str | None = args.since
    since: int | str | None = int(given) if given and given.isdecimal() else given
    return await call("space_state", _given(spaceId=args.space, branch=args.branch, since=since))


async def _search(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    return await call(
        "search",
        _given(query=args.query, spaceId=args.space, kinds=args.kind, first=args.first),
    )


async def _show(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    return await call(
        "show_checkpoint", _given(checkpointId=args.id, spaceId=args.space, hash=args.hash)
    )


async def _list(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    return await call(
        "list_checkpoints", _given(spaceId=args.space, branch=args.branch, first=args.first)
    )


def _markdown(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise Usage(f"Cannot read --markdown {path[:100]}: {exc.__class__.__name__}.") from None


def _checked(args: argparse.Namespace) -> None:
    """What argparse cannot say, said before anything is opened or called:
    either a checkpoint's number or --space and --hash; --markdown or the
    fields (the Markdown read now, into ``args.fields``)."""
    if args.command != "checkpoint":
        return
    if args.checkpoint_command == "show":
        by_hash = args.space is not None or args.hash is not None
        if (args.id is not None) == by_hash or (by_hash and None in (args.space, args.hash)):
            raise Usage("Give a checkpoint's number, or --space and --hash.")
    if args.checkpoint_command == "create":
        args.fields = _fields(args)


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    fields = _given(
        title=args.title,
        objective=args.objective,
        summary=args.summary,
        decisions=args.decision,
        tasks=args.task,
        openQuestions=args.question,
        entities=args.entity,
    )
    if args.markdown is not None:
        if fields:
            raise Usage("Give --markdown or the fields (--title, …), not both.")
        return {"markdown": _markdown(args.markdown)}
    if "title" not in fields:
        raise Usage("Give --markdown FILE, or --title and the other fields.")
    return fields


async def _create(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    dry_run = {"dryRun": True} if args.dry_run else {}
    return await call("save_checkpoint", {"sessionId": args.session, **args.fields, **dry_run})


async def _fork(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    return await call(
        "fork", _given(checkpointId=args.checkpoint, branch=args.branch, title=args.title)
    )


async def _merge(call: Call, args: argparse.Namespace) -> types.CallToolResult:
    # The --from branch's head, as list_checkpoints names it (NOT_FOUND otherwise).
    head = await call(
        "list_checkpoints", {"spaceId": args.space, "branch": args.source, "first": 1}
    )
    if head.is_error:
        return head
    target = {
        "spaceId": args.space,
        "into": args.into,
        "fromId": (head.structured_content or {})["checkpoints"][0]["id"],
    }
    title = args.title
    if args.dry_run or title is None:
        preview = await call("preview_merge", target)
        if args.dry_run or preview.is_error:
            return preview
        title = (preview.structured_content or {})["suggestion"]["title"]
    return await call(
        "merge",
        _given(
            **target,
            title=title,
            objective=args.objective,
            summary=args.summary,
            resolutions=args.resolve,
        ),
    )


RUNS: dict[str, Callable[[Call, argparse.Namespace], Awaitable[types.CallToolResult]]] = {
    "spaces": _spaces,
    "state": _state,
    "search": _search,
    "show": _show,
    "list": _list,
    "create": _create,
    "fork": _fork,
    "merge": _merge,
}


def _url(args: argparse.Namespace) -> str | None:
    """The server the command runs on, if any: --url, else $SMRITI_URL unless
    --database or --user says to run locally."""
    local = args.database is not None or args.user is not None
    if args.url is not None:
        if local:
            raise Usage("Give --url, or --database and --user: not both.")
        return str(args.url)
    return None if local else (os.environ.get(URL_VARIABLE) or None)


def _token() -> str | None:
    return os.environ.get(TOKEN_VARIABLE) or None


def run_command(args: argparse.Namespace) -> int:
    """`smriti spaces`, `state`, `search`, `checkpoint …`, `fork`, `merge`."""
    run = RUNS[args.checkpoint_command if args.command == "checkpoint" else args.command]

    def work() -> types.CallToolResult:
        _checked(args)
        return asyncio.run(_called(args, run))

    result = _guarded(work)
    if isinstance(result, int):
        return result
    text = "\n".join(part.text for part in result.content if part.type == "text")
    if result.is_error:
        from .server import error_of  # loaded already: the call needed the SDK

        error = error_of(result) or {}
        message = error.get("message") or text
        return console.fail(STATUS.get(str(error.get("code")), exits.USAGE), message)
    if args.json:
        console.print_json(result.structured_content)
    else:
        print(text)
    return exits.OK


def run(args: argparse.Namespace) -> int:
    """`smriti mcp`: serve the local tools, or a server's, over stdio."""

    async def serve() -> None:
        url = _url(args)
        if url is not None:
            from .remote import forward_stdio

            await forward_stdio(url, _token())
            return
        from .server import serve_stdio

        async with _local(args) as (services, caller):
            await serve_stdio(caller, services)

    status = _guarded(lambda: asyncio.run(serve()))
    return exits.OK if status is None else status


def _guarded(work: Callable[[], Any]) -> Any:
    """``work()``, or the exit status of what stopped it, said on stderr."""
    from ..services.operator import StartupError

    try:
        return work()
    except Usage as exc:
        return console.fail(exits.USAGE, str(exc))
    except StartupError as exc:
        return console.fail(exits.DATABASE, str(exc))
    except NotFound as exc:
        return console.fail(exits.NOT_FOUND, exc.message)
    except (ConfigError, SmritiError) as exc:
        return console.fail(exits.USAGE, exc.message)
    except Exception as exc:
        from .remote import Refused, Unreachable

        if isinstance(exc, Refused):
            return console.fail(exits.REFUSED, str(exc))
        if isinstance(exc, Unreachable):
            return console.fail(exits.DATABASE, str(exc))
        raise


async def _called(
    args: argparse.Namespace,
    run: Callable[[Call, argparse.Namespace], Awaitable[types.CallToolResult]],
) -> types.CallToolResult:
    url = _url(args)
    if url is not None:
        from .remote import call, connected

        async with connected(url, _token()) as session:

            async def remotely(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                return await call(session, name, arguments)

            return await run(remotely, args)
    from .server import call_tool_as

    async with _local(args) as (services, caller):
        actor = await caller(None)
        assert actor is not None

        async def locally(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            return await call_tool_as(services, actor, name, arguments)

        return await run(locally, args)


@asynccontextmanager
async def _local(
    args: argparse.Namespace,
) -> AsyncIterator[tuple[Any, Callable[[Any], Awaitable[Actor | None]]]]:
    """The local database, open, and who acts on it: the local user, or once
    there are accounts the one --user names (asked again at each call, so an
    account disabled meanwhile stops acting)."""
    from ..runtime import Runtime
    from ..services import operator

    runtime = Runtime.from_environment(database_url=args.database)
    user: str | None = args.user
    # The providers (a fork's default model, and send_message's model calls)
    # are read here, before the database is opened, as they always were.
    services = runtime.services
    async with runtime.database.opened(create=False):
        first = await runtime.acting_as(user)  # NotFound before anything is answered
        if user is None:

            async def caller(_ctx: Any) -> Actor | None:
                return first

        else:

            async def caller(_ctx: Any) -> Actor | None:
                try:
                    return await operator.actor_named(user)
                except NotFound:
                    return None

        try:
            yield services, caller
        finally:
            # A reply being saved, a session's title: finished before the database closes.
            await services.drain()
