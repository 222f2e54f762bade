"""The command-line lineage tools: `smriti verify`, `smriti export`, `smriti import`.

Exit codes (api/exits.py): 0 ok, 1 a checkpoint does not verify (verify, or
import of a tampered document), 2 usage, 3 database (verify and export refuse
a SQLite file that does not exist; import creates it), 4 no such space,
session or user.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

from . import console, exits
from .domain.accounts import Actor
from .domain.verification import Verification
from .errors import ErrorCode, InputError, NotFound, SmritiError
from .runtime import Runtime


def run(args: argparse.Namespace) -> int:
    from .services.operator import StartupError

    try:
        runtime = Runtime.from_environment(database_url=args.database)
        if args.command == "verify":
            return asyncio.run(_verify(runtime, args))
        if args.command == "export":
            return asyncio.run(_export(runtime, args))
        return asyncio.run(_import(runtime, args))
    except StartupError as exc:
        return console.fail(exits.DATABASE, str(exc))
    except NotFound as exc:
        return console.fail(exits.NOT_FOUND, exc.message)
    except SmritiError as exc:
        status = exits.VERIFICATION_FAILED if exc.code is ErrorCode.TAMPERED else exits.USAGE
        if exc.field and args.command == "import":
            # Where in the document, inside the sentence: "… (at spaces[0].name)."
            return console.fail(status, f"{exc.message.rstrip('.')} (at {exc.field})")
        return console.fail(status, exc.message)


def _key(value: str, type_name: str) -> int:
    """The key of a space or session given by number or global id (InputError otherwise)."""
    from .graphql.core import ids

    key = int(value) if value.isdigit() else ids.key_or_none(value, type_name)
    if key is None:
        raise InputError(
            f"A {type_name.lower()} is given by its number or global id, not {value[:40]!r}."
        )
    return key


def _global_id(type_name: str, key: int) -> str:
    from .graphql.core import ids

    return ids.encode(type_name, key)


async def _export(runtime: Runtime, args: argparse.Namespace) -> int:
    async with runtime.database.opened(create=False):
        owner = await runtime.acting_as(args.user)
        if args.output:
            path = Path(args.output).absolute()
            await _write_file(path, _document(owner, args))
            if args.json:
                console.print_json(
                    {"output": str(path), "format": args.format, "bytes": path.stat().st_size}
                )
        elif args.json and args.format == "markdown":
            text = "".join([chunk async for chunk in _document(owner, args)])
            console.print_json({"format": "markdown", "document": text})
        else:
            async for chunk in _document(owner, args):
                sys.stdout.write(chunk)
    return exits.OK


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
    """The document, in chunks as it is read (a JSON export a space at a time); what
    was asked for and is not there is named as the command line named it, as verify
    does ("No space 99.")."""
    try:
        async for chunk in _chunks(owner, args):
            yield chunk
    except NotFound:
        if args.space is not None:
            raise NotFound(f"No space {_key(args.space, 'Space')}.") from None
        if args.session is not None:
            raise NotFound(f"No session {_key(args.session, 'Session')}.") from None
        raise


async def _chunks(owner: Actor, args: argparse.Namespace) -> AsyncIterator[str]:
    from .services import transfer as service

    if args.format == "json":
        if args.space is not None:
            chunks = service.json_chunks(owner, space_id=_key(args.space, "Space"))
        elif args.session is not None:
            chunks = service.json_chunks(owner, session_id=_key(args.session, "Session"))
        else:
            chunks = service.json_chunks(owner)
        async for chunk in chunks:
            yield chunk
        return
    yield await _readable(owner, args)


async def _readable(owner: Actor, args: argparse.Namespace) -> str:
    """A Markdown or notebook document: one session's or one lineage's, whole."""
    from .services import transfer as service

    if args.session is not None:
        session = _key(args.session, "Session")
        if args.format == "markdown":
            return (await service.session_markdown(owner, session)).text
        return (await service.session_notebook(owner, session)).text
    if args.space is not None and args.format == "markdown":
        return (await service.lineage_markdown(owner, _key(args.space, "Space"))).text
    wanted = "--session" if args.format == "ipynb" else "--space or --session"
    raise InputError(f"--format {args.format} writes one document: give {wanted}.")


async def _import(runtime: Runtime, args: argparse.Namespace) -> int:
    from .import_progress import Printer
    from .services.import_stream import import_file

    file = args.file
    registry = runtime.registry
    progress = Printer(sys.stderr, in_place=sys.stderr.isatty())
    with _opened(file) as document:
        # Importing adds data: a new database may be made for it.
        async with runtime.database.opened(create=True):
            owner = await runtime.acting_as(args.user)
            try:
                imported = await import_file(owner, document, registry, progress)
            except UnicodeDecodeError as exc:  # a document read whole, not UTF-8
                raise _unreadable(file, exc) from None
            finally:
                progress.end()
    branches = dict(zip((s.id for s, _ in imported.sessions), imported.branches, strict=True))
    if args.json:
        console.print_json(
            {
                "format": imported.source,
                "spaces": [
                    {
                        "id": _global_id("Space", space.id),
                        "number": space.id,
                        "name": space.name,
                        "imported": created,
                    }
                    for space, created in imported.spaces
                ],
                "sessions": [
                    {
                        "id": _global_id("Session", session.id),
                        "number": session.id,
                        "title": session.title,
                        "imported": created,
                        "branches": branches[session.id],
                    }
                    for session, created in imported.sessions
                ],
            }
        )
        return exits.OK
    for space, created in imported.spaces:
        state = "imported" if created else "already here, not imported again"
        print(f'space {space.id} "{space.name}": {state}')
    for session, created in imported.sessions:
        state = "imported" if created else "already here, not imported again"
        print(f'session {session.id} "{session.title}": {state}')
        if branches[session.id]:
            count = branches[session.id]
            print(
                f"  with {count} branch{'es' if count != 1 else ''} "
                "(edited messages or regenerated replies) as alternatives"
            )
    return exits.OK


@contextlib.contextmanager
def _opened(file: str) -> Iterator[IO[bytes]]:
    """The document to import, as a binary file that can seek (the import reads
    a list of conversations twice): standard input is copied to a temporary
    file first, a chunk at a time."""
    with contextlib.ExitStack() as stack:
        try:
            if file == "-":
                opened: IO[bytes] = stack.enter_context(tempfile.TemporaryFile())
                shutil.copyfileobj(sys.stdin.buffer, opened)
                opened.seek(0)
            else:
                opened = stack.enter_context(Path(file).open("rb"))
        except OSError as exc:
            raise _unreadable(file, exc) from None
        yield opened


def _unreadable(file: str, exc: OSError | UnicodeDecodeError) -> InputError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return InputError(f"Cannot read {file}: {reason}.")


async def _verify(runtime: Runtime, args: argparse.Namespace) -> int:
    from .services import transfer as service

    async with runtime.database.opened(create=False):
        owner = await runtime.acting_as(args.user)
        if args.space is None:
            targets = await service.space_ids(owner)
        else:
            targets = [_key(args.space, "Space")]
        results: list[tuple[int, Verification]] = []
        for space_id in targets:
            try:
                result = await service.verify(owner, space_id)
            except NotFound:
                raise NotFound(f"No space {space_id}.") from None
            results.append((space_id, result))
            if not args.json:
                print(_describe(space_id, result))
    if args.json:
        console.print_json(
            {
                "ok": all(result.ok for _, result in results),
                "spaces": [_verification_json(i, result) for i, result in results],
            }
        )
    ok = all(result.ok for _, result in results)
    return exits.OK if ok else exits.VERIFICATION_FAILED


def _verification_json(space_id: int, result: Verification) -> dict[str, Any]:
    broken = None
    if result.broken is not None:
        found = result.broken.checkpoint
        broken = {
            "checkpoint": {
                "id": _global_id("Checkpoint", found.id),
                "number": found.id,
                "hash": found.hash,
                "title": found.content.title,
            },
            "reason": result.broken.reason.value,
            "expectedHash": result.broken.expected_hash,
        }
    return {
        "id": _global_id("Space", space_id),
        "number": space_id,
        "ok": result.ok,
        "checked": result.checked,
        "broken": broken,
    }


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
