"""`smriti mcp`: the tools over stdio, for an agent on this machine.

It talks to the local database (--database or SMRITI_DATABASE_URL), as the
local user or, once there are accounts, the one --user names, with all
their rights (as `smriti export` acts for them). Exit codes
(api/exits.py): 0 the client closed, 2 usage, 3 database, 4 no such user.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from .. import console, exits
from ..domain.accounts import Actor
from ..errors import InputError, NotFound, SmritiError
from ..settings import Settings


def run(args: argparse.Namespace) -> int:
    from ..services.operator import StartupError

    try:
        settings = Settings.from_environment(database_url=args.database)
        asyncio.run(_serve(settings, args.user))
    except StartupError as exc:
        return console.fail(exits.DATABASE, str(exc))
    except NotFound as exc:
        return console.fail(exits.NOT_FOUND, exc.message)
    except SmritiError as exc:
        return console.fail(exits.USAGE, exc.message)
    return exits.OK


async def _serve(settings: Settings, user: str | None) -> None:
    from ..app import provider_registry
    from ..services import operator
    from ..services.base import Services
    from .server import serve_stdio

    # The providers: a fork's default model, and send_message's model calls.
    services = Services(settings=settings, registry=provider_registry(settings))
    async with operator.opened(settings.database_url, create=False):
        if user is None:
            if await operator.any_account():
                raise InputError("This database has accounts: say whose data with --user NAME.")
            local = await operator.acting_locally()

            async def caller(_ctx: Any) -> Actor | None:
                return local

        else:
            await operator.actor_named(user)  # NotFound before the client is answered

            async def caller(_ctx: Any) -> Actor | None:
                try:
                    return await operator.actor_named(user)
                except NotFound:
                    return None

        try:
            await serve_stdio(caller, services)
        finally:
            # A reply being saved, a session's title: finished before the database closes.
            await services.drain()
