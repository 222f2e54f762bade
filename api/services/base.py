"""What every service needs: settings, the provider registry, background work."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..providers import ProviderRegistry
from ..settings import Settings
from ..store import writes
from .connections import Connections

log = logging.getLogger("smriti")


@dataclass
class Services:
    settings: Settings
    registry: ProviderRegistry
    _background: set[asyncio.Task[Any]] = field(default_factory=set)
    _replies: int = 0
    _no_replies: asyncio.Event = field(default_factory=asyncio.Event)
    # What this worker has open, and the credentials it rests on.
    connections: Connections = field(init=False)

    def __post_init__(self) -> None:
        self.connections = Connections(idle=timedelta(seconds=self.settings.session_idle_seconds))

    def spawn(self, work: Coroutine[Any, Any, Any], name: str) -> None:
        """Run work after the response; failures are logged, never raised."""

        async def guarded() -> None:
            try:
                await work
            except Exception:  # background work must never take the server down
                log.exception("background task %s failed", name)

        task = asyncio.create_task(guarded(), name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @contextlib.contextmanager
    def replying(self) -> Iterator[None]:
        """Mark a reply as in flight until it has handed its save to ``keep``.

        A stream cancelled at shutdown closes its provider stream before it
        starts saving what it received; until then no task of it exists to
        wait for, so ``drain`` alone would let the database close under it.
        """
        self._replies += 1
        self._no_replies.clear()
        try:
            yield
        finally:
            self._replies -= 1
            if not self._replies:
                self._no_replies.set()

    async def drain(self, *, grace: float = 5.0) -> None:
        """Wait for every reply in flight to save (at most ``grace`` seconds),
        then for background work and the store's writes (shutdown, tests)."""
        if self._replies:
            # uvicorn has already cancelled the requests still running; give
            # their clean-up the time to start its save.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await self._no_replies.wait()
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        await writes.drain()
