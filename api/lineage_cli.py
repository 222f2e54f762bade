"""The command-line lineage tools: `smriti verify`, `smriti export`, `smriti import`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from api.domain.accounts import Actor
from api.domain.verification import Verification
from api.errors import ErrorCode, InputError, NotFound, SmritiError
from api.settings import Settings

EXIT_BROKEN = 1  # a checkpoint does not verify
EXIT_USAGE = 2  # a bad argument (no such space, unreadable file)


def database_url(args: argparse.Namespace) -> str:
    return Settings.from_environment(database_url=args.database).database_url


def run(args: argparse.Namespace) -> int:
    try:
        url = database_url(args)
    except SmritiError as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return 2
    if args.command == "verify":
        return asyncio.run(_verify(url, args.space, args.user))
    if args.command == "export":
        return asyncio.run(_export(url, args))
    return asyncio.run(_import(url, args.file, args.user))


async def _owner(user: str | None) -> Actor | None:
    """Who the command acts as: the local user, or with accounts the one --user
    names (required then); None (said on stderr) when that cannot be."""
    from api.services import operator

    if user is None:
        if await operator.any_account():
            print(
                "smriti: this database has accounts: say whose data with --user NAME.",
                file=sys.stderr,
            )
            return None
        return await operator.acting_locally()
    try:
        return await operator.actor_named(user)
    except NotFound as exc:
        print(f"smriti: {exc.message}", file=sys.stderr)
        return None


def _key(value: str, type_name: str) -> int | None:
    from api.graphql.core import ids

    return int(value) if value.isdigit() else ids.key_or_none(value, type_name)


async def _export(db_url: str, args: argparse.Namespace) -> int:
    from api.services import operator

    async with operator.opened(db_url):
        owner = await _owner(args.user)
        if owner is None:
            return EXIT_USAGE
        try:
            if args.output:
                await _write_file(Path(args.output), _document(owner, args))
            else:
                async for chunk in _document(owner, args):
                    sys.stdout.write(chunk)
        except SmritiError as exc:
            print(f"smriti: {exc.message}", file=sys.stderr)
            return EXIT_USAGE
    return 0


async def _write_file(path: Path, chunks: AsyncIterator[str]) -> None:
    """Write the chunks as they come, to a file beside ``path`` that takes its
    name once whole: a failure half-way leaves no half a document behind."""
    partial = path.with_name(path.name + ".part")
    try:
        with partial.open("w", encoding="utf-8") as file:
            async for chunk in chunks:
                file.write(chunk)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


async def _document(owner: Actor, args: argparse.Namespace) -> AsyncIterator[str]:
    """The document, in chunks as it is read (a JSON export a space at a time)."""
    from api.services import transfer as service

    if args.format == "json":
        if args.space is not None:
            chunks = service.json_chunks(owner, space_id=_required(args.space, "Space"))
        elif args.session is not None:
            chunks = service.json_chunks(owner, session_id=_required(args.session, "Session"))
        else:
            chunks = service.json_chunks(owner)
        async for chunk in chunks:
            yield chunk
        return
    yield await _readable(owner, args)


async def _readable(owner: Actor, args: argparse.Namespace) -> str:
    """A Markdown or notebook document: one session's or one lineage's, whole."""
    from api.services import transfer as service

    if args.session is not None:
        session = _required(args.session, "Session")
        if args.format == "markdown":
            return await service.session_markdown(owner, session)
        return await service.session_notebook(owner, session)
    if args.space is not None and args.format == "markdown":
        return await service.lineage_markdown(owner, _required(args.space, "Space"))
    wanted = "--session" if args.format == "ipynb" else "--space or --session"
    raise InputError(f"--format {args.format} writes one document: give {wanted}.")


def _required(value: str, type_name: str) -> int:
    key = _key(value, type_name)
    if key is None:
        raise InputError(f"{value!r} is not a {type_name.lower()} id.")
    return key


async def _import(db_url: str, file: str, user: str | None) -> int:
    from api.services import operator
    from api.services import transfer as service

    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"smriti: cannot read {file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from api.app import provider_registry

    registry = provider_registry(Settings.from_environment(database_url=db_url))
    async with operator.opened(db_url):
        owner = await _owner(user)
        if owner is None:
            return EXIT_USAGE
        try:
            imported = await service.import_document(owner, text, registry)
        except SmritiError as exc:
            where = f" (at {exc.field})" if exc.field else ""
            print(f"smriti: {exc.message}{where}", file=sys.stderr)
            return EXIT_BROKEN if exc.code is ErrorCode.TAMPERED else EXIT_USAGE
    for space, created in imported.spaces:
        state = "imported" if created else "already here, not imported again"
        print(f'space {space.id} "{space.name}": {state}')
    for session, created in imported.sessions:
        state = "imported" if created else "already here, not imported again"
        print(f'session {session.id} "{session.title}": {state}')
    return 0


async def _verify(db_url: str, space: str | None, user: str | None) -> int:
    from api.services import operator
    from api.services import transfer as service

    async with operator.opened(db_url):
        owner = await _owner(user)
        if owner is None:
            return EXIT_USAGE
        if space is None:
            targets = await service.space_ids(owner)
        else:
            key = _key(space, "Space")
            if key is None:
                print(f"smriti: {space!r} is not a space id.", file=sys.stderr)
                return EXIT_USAGE
            targets = [key]
        status = 0
        for space_id in targets:
            try:
                result = await service.verify(owner, space_id)
            except NotFound:
                print(f"smriti: no space {space_id}.", file=sys.stderr)
                return EXIT_USAGE
            print(_describe(space_id, result))
            if not result.ok:
                status = EXIT_BROKEN
        return status


def _describe(space_id: int, result: Verification) -> str:
    if result.broken is None:
        return f"space {space_id}: verified, {result.checked} checkpoints"
    broken = result.broken
    found = broken.checkpoint
    return (
        f"space {space_id}: BROKEN at checkpoint {found.id} ({found.hash[:12]}, "
        f'"{found.content.title}"): {broken.reason.value}'
        + (f", its fields hash to {broken.expected_hash[:12]}" if broken.expected_hash else "")
        + f" (checked {result.checked})"
    )
