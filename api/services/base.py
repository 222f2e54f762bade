"""What every service needs: settings, the provider registry, background work."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from api.providers import ProviderRegistry
from api.settings import Settings

log = logging.getLogger("smriti")


@dataclass
class Services:
    settings: Settings
    registry: ProviderRegistry
    _background: set[asyncio.Task[Any]] = field(default_factory=set)

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

    async def drain(self) -> None:
        """Wait for background work (shutdown, tests)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
