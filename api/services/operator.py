"""What the operator of an installation does, as nobody in particular.

Every other use case in ``api.services`` takes an ``Actor`` first and asks
``api.services.policy``. These do not: they run from the command line (or at
start-up) by whoever may open the database, before any actor exists or to
name one — opening and migrating the database, the accounts commands, and
resolving which user a data command (`smriti export --user NAME`) acts as.
Once it has an actor, such a command goes through the actor's use cases like
any request (``actor_named`` / ``acting_locally``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from ..database_url import sqlite_path
from ..domain.accounts import Account, Actor
from ..store import accounts as account_store
from ..store import database, transfer
from . import accounts as account_service

StartupError = database.StartupError


async def prepare(db_url: str) -> list[str]:
    """Create and migrate the database once, before any worker starts; the
    migrations applied."""
    return await database.prepare(db_url)


async def migrate(db_url: str) -> list[str]:
    return await database.migrate(db_url)


def register(app: Any, db_url: str) -> contextlib.AbstractAsyncContextManager[Any]:
    """The database for the app's lifespan (connections opened and closed with it)."""
    return database.register(app, db_url)


@contextlib.asynccontextmanager
async def opened(db_url: str, *, create: bool) -> AsyncIterator[None]:
    """The database, migrated and connected, for a command-line tool.

    ``create``: a SQLite file that does not exist yet is made (a command that
    adds data). Otherwise none is (StartupError): a command that only reads
    would report on an empty database it had just made from a mistyped path.
    """
    path = sqlite_path(db_url)
    if not create and path is not None and not path.exists():
        raise StartupError(
            f"No database at {path}: this command does not create one "
            "(`smriti serve`, `smriti users add` and `smriti import` do)."
        )
    async with transfer.opened(db_url):
        yield


async def any_account() -> bool:
    return await account_service.any_account()


async def accounts() -> list[Account]:
    return await account_store.accounts()


async def account(name: str) -> Account:
    """The account named ``name`` (NotFound otherwise)."""
    found, _ = await account_store.by_name(name)
    return found


async def disable(name: str) -> None:
    await account_store.disable(name)


async def set_password(name: str, password: str) -> None:
    await account_store.set_password(name, account_service.hash_password(password))


def actor_of(account: Account) -> Actor:
    """The actor a command run for ``account`` acts as: all its rights, no token."""
    return Actor(user_id=account.id, name=account.name, is_admin=account.is_admin)


async def actor_named(name: str) -> Actor:
    """The actor of the account named ``name`` (NotFound otherwise)."""
    return actor_of(await account(name))


async def acting_locally() -> Actor:
    """The local user, whom a database without accounts belongs to."""
    return await account_service.local_actor()
