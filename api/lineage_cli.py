"""The command-line lineage tools behind `smriti verify` (and export/import)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from api.domain.verification import Verification
from api.errors import NotFound
from api.settings import Settings

EXIT_BROKEN = 1  # a checkpoint does not verify
EXIT_USAGE = 2  # a bad argument (no such space, unreadable file)


def database_url(args: argparse.Namespace) -> str:
    return Settings.from_environment(database_url=args.database).database_url


def space_key(value: str) -> int | None:
    """A space given as its number or its global id."""
    from api.graphql import ids

    if value.isdigit():
        return int(value)
    return ids.key_or_none(value, "Space")


def run_verify(args: argparse.Namespace) -> int:
    return asyncio.run(_verify(database_url(args), args.space))


async def _verify(db_url: str, space: str | None) -> int:
    from api.services import transfer as service
    from api.store import spaces, transfer

    async with transfer.opened(db_url):
        owner = await spaces.local_user_id()
        if space is None:
            targets = await transfer.space_ids(owner)
        else:
            key = space_key(space)
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
