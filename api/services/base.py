"""What every service needs: settings, the provider registry, background work."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from api.providers import ProviderRegistry
from api.settings import Settings
from api.store import writes

log = logging.getLogger("smriti")
T = TypeVar("T")


@dataclass
class Services:
    settings: Settings
    registry: ProviderRegistry
    _background: set[asyncio.Task[Any]] = field(default_factory=set)
    _replies: int = 0
    _no_replies: asyncio.Event = field(default_factory=asyncio.Event)

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

    def keep(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run ``work`` in a task of its own and return the task.

        Awaited through ``asyncio.shield``, the work finishes even when the
        caller is cancelled (a client that goes away mid-write), and ``drain``
        waits for it at shutdown. A failure is logged here as well, since a
        cancelled caller never sees it.
        """
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)
        return task

    @contextlib.contextmanager
    def replying(self) -> Iterator[None]:
        """Mark a reply as in flight until it has handed its save to ``keep``.

        A stream cancelled at shutdown closes its provider stream before it
        saves what it received; meanwhile nothing of it is in ``_background``
        yet, so ``drain`` alone would let the database close under it.
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


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("task %s failed", task.get_name(), exc_info=error)
