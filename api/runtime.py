"""The composition root: what every entry point is built from, built once.

A process starts from one ``Runtime``: `smriti serve` and each of its worker
processes (whose app serves /graphql, /mcp and /auth from it), and every
other command (`import`, `export`, `verify`, `users`, `tokens`, `mcp` and the
agent commands). It holds the settings, the provider registry, the services
over them, the database, and for a server the authenticator; nothing else
constructs them, so a command and the server cannot be put together
differently.

Each part is made at its first use: a command that only reads the database
never reads providers.yaml (a malformed one does not stop `smriti users list`),
and only a server loads the authenticator (and Starlette with it). LiteLLM is
not imported here either: the registry's loader imports it at its first use,
or the app's preload does, in the background.
"""

from __future__ import annotations

import contextlib
import json
import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .database_url import describe
from .domain.accounts import Actor
from .errors import InputError
from .providers import (
    LiteLLMTransport,
    OfflineTransport,
    ProviderRegistry,
    default_config,
    load_config,
)
from .services import operator
from .services.base import Services
from .settings import Settings

if TYPE_CHECKING:
    from .http.auth import Authenticator

# How `smriti serve` hands its flags to worker processes, which build their app
# from an import string: JSON of Settings.from_environment's keyword arguments.
SERVE_FLAGS_VARIABLE = "SMRITI_SERVE_FLAGS"


def provider_registry(settings: Settings) -> ProviderRegistry:
    """The providers the settings name (ConfigError if the file is malformed)."""
    config = load_config(settings.providers_file) if settings.providers_file else default_config()
    return ProviderRegistry(
        config,
        transport=LiteLLMTransport(
            timeout=settings.provider_timeout_seconds,
            max_tokens=settings.answer_reserve_tokens,
        ),
        mounts={"offline": OfflineTransport(stream_delay=settings.offline_stream_delay_ms / 1000)},
    )


class Database:
    """The one database a process uses, by its canonical URL."""

    def __init__(self, url: str) -> None:
        self.url = url

    def describe(self) -> str:
        """Where it is, for a person (never the password)."""
        return describe(self.url)

    async def prepare(self) -> list[str]:
        """Check it and apply its migrations, once, before a server's workers
        start (StartupError in one sentence otherwise); the migrations applied."""
        return await operator.prepare(self.url)

    async def migrate(self) -> list[str]:
        return await operator.migrate(self.url)

    def registered(self, app: Any) -> contextlib.AbstractAsyncContextManager[Any]:
        """Its connections for an app's lifespan, opened and closed with it."""
        return operator.register(app, self.url)

    def opened(self, *, create: bool) -> contextlib.AbstractAsyncContextManager[None]:
        """Migrated and connected for a command (``create``: a missing SQLite
        file is made; otherwise StartupError, see ``operator.opened``)."""
        return operator.opened(self.url, create=create)

    async def has_accounts(self) -> bool:
        """Whether anyone must sign in (it is made if missing, as `serve` would)."""
        async with self.opened(create=True):
            return await operator.any_account()


class Runtime:
    """Settings, providers, services, database and authenticator, each built once."""

    def __init__(self, settings: Settings, *, registry: ProviderRegistry | None = None) -> None:
        self.settings = settings
        self.database = Database(settings.database_url)
        if registry is not None:
            self.registry = registry

    @classmethod
    def from_environment(cls, **flags: Any) -> Runtime:
        """From the command line's flags, then the environment (ConfigError if malformed)."""
        return cls(Settings.from_environment(**flags))

    @classmethod
    def of_worker(cls) -> Runtime:
        """A `smriti serve` worker's: its environment, as the parent read it,
        plus the flags the parent handed on (``hand_to_workers``)."""
        return cls.from_environment(**json.loads(os.environ.get(SERVE_FLAGS_VARIABLE, "{}")))

    @staticmethod
    def hand_to_workers(**flags: Any) -> None:
        """Pass `smriti serve`'s flags to the worker processes it is about to
        start: they inherit the environment, and every other setting is read there."""
        os.environ[SERVE_FLAGS_VARIABLE] = json.dumps(flags)

    @cached_property
    def registry(self) -> ProviderRegistry:
        return provider_registry(self.settings)

    @cached_property
    def services(self) -> Services:
        return Services(settings=self.settings, registry=self.registry)

    @cached_property
    def authenticator(self) -> Authenticator:
        """Who is asking a server (api/http/auth.py); one per process, since it
        remembers whether the database has accounts and who the local user is."""
        from .http.auth import Authenticator

        return Authenticator(self.settings, self.services.connections)

    async def acting_as(self, user: str | None) -> Actor:
        """Who a command acts as, with all their rights: the local user, or once
        the database has accounts the one ``user`` names (required then:
        InputError; NotFound for a name no account has). The database is open."""
        if user is None:
            if await operator.any_account():
                raise InputError("This database has accounts: say whose data with --user NAME.")
            return await operator.acting_locally()
        return await operator.actor_named(user)
