"""Every write runs to its end, whoever stops waiting for it.

A request is cancelled when its client goes away, and the cancellation lands
wherever the request is waiting. Inside a write that is harmful twice over:
a half-entered transaction on SQLite keeps the single connection's lock, so
every later query waits forever (issue 7, finding 1); and a reply cut off
mid-stream must still be saved (docs/architecture.md#a-reply-cut-off-is-saved). So each store
function
that writes is decorated with ``@finished``: its body runs in a task of its
own, awaited through ``asyncio.shield``. Cancelling the caller then cancels
only the waiting; the write commits (or rolls back) and releases its
connection as if nobody had left. ``drain`` lets shutdown wait for the
writes still running before the database closes (finding 2).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from ..errors import SmritiError

P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger("smriti")
_running: set[asyncio.Task[Any]] = set()


def finished(write: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Run ``write`` to completion even if the caller is cancelled."""

    @functools.wraps(write)
    async def shielded(*args: P.args, **kwargs: P.kwargs) -> T:
        task = start(write(*args, **kwargs), write.__qualname__)
        return await asyncio.shield(task)

    return shielded


def start(work: Awaitable[T], name: str) -> asyncio.Task[T]:
    """``work`` in a task that ``drain`` waits for; its failure is logged if
    nobody is left to receive it."""

    async def run() -> T:
        return await work

    task = asyncio.create_task(run(), name=name)
    _running.add(task)
    task.add_done_callback(_forget)
    return task


async def drain() -> None:
    """Wait for every write still running (shutdown, before the database closes)."""
    while _running:
        await asyncio.gather(*list(_running), return_exceptions=True)


class Refused(Exception):
    """An expected refusal from a write (the caller turns it into data)."""


def _forget(task: asyncio.Task[Any]) -> None:
    _running.discard(task)
    # A caller that was cancelled never sees the write's error: retrieve it
    # here (no "exception was never retrieved") and log what is a real failure.
    if task.cancelled():
        return
    error = task.exception()
    if error is not None and not isinstance(error, SmritiError | Refused):
        log.error("write %s failed", task.get_name(), exc_info=error)
