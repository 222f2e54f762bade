"""What is open on this worker (websockets, streams) and the credential each rests on.

Rights are checked when used (docs/architecture.md#errors-and-rights): a websocket asks again
who it acts
for at every operation (``api/graphql/view.py``). What is already running
must end when its credential does, and the credential can end anywhere: a
token revoked on another worker, a user disabled by ``smriti users disable``
in another process. The database is the truth, so each worker keeps only a
registry of what it has open and

- ends at once what rests on a credential it ended itself (a sign-out, a
  revocation: ``end_resting_on``, ``recheck``);
- while anything is open, asks the database every ``interval`` seconds which
  of those credentials still hold, one query per kind (tokens, browser
  sessions), and ends what rests on the others. Nothing is asked while
  nothing is open.

Ending a websocket stops its operations as a client's ``complete`` would and
closes it with 4401; ending a stream stops it the same way. Either way a
reply being streamed is saved as it stands, marked interrupted
(``api.services.streaming``), before the client is told.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ..domain.accounts import Credential
from ..errors import Unauthenticated
from ..store import accounts as store

T = TypeVar("T")
log = logging.getLogger("smriti")

# How often (seconds) a worker asks the database about the credentials of
# what it has open: how late a revocation made elsewhere ends it, at most.
RECHECK_SECONDS = 1.0

ENDED = (
    "Your credentials no longer hold (the token was revoked or has expired, the browser "
    "signed out, or the user was disabled): the stream stopped, and the reply so far is "
    "saved, marked interrupted."
)


@dataclass(eq=False)
class Opened:
    """One open websocket or running stream; ``end`` stops it (called once)."""

    credential: Credential
    end: Callable[[], Awaitable[None]]
    ended: bool = False


@dataclass
class Connections:
    """The registry of one worker (one event loop: no lock)."""

    idle: timedelta  # a browser session idle longer than this has ended
    interval: float = RECHECK_SECONDS
    _open: set[Opened] = field(default_factory=set)
    _busy: asyncio.Event = field(default_factory=asyncio.Event)

    def __len__(self) -> int:
        return len(self._open)

    def open(self, credential: Credential, end: Callable[[], Awaitable[None]]) -> Opened:
        """Register something open; ``end`` stops it when ``credential`` ends."""
        opened = Opened(credential, end)
        self._open.add(opened)
        self._busy.set()
        return opened

    def close(self, opened: Opened) -> None:
        """It has ended on its own (the client left, the stream finished)."""
        self._open.discard(opened)
        if not self._open:
            self._busy.clear()

    async def end(self, opened: Opened) -> None:
        """Stop it, once, and wait until it has stopped (its reply saved)."""
        if opened.ended:
            return
        opened.ended = True
        self.close(opened)
        await opened.end()

    async def end_resting_on(self, credential: Credential) -> None:
        """End at once everything on this worker that rests on ``credential``."""
        await self._end_all([o for o in self._open if o.credential == credential])

    async def recheck(self) -> None:
        """Ask the database which credentials still hold (one query per kind)
        and end what rests on the others."""
        opened = list(self._open)
        if not opened:
            return
        now = datetime.now(UTC)
        hashes = {
            kind: {o.credential.hash for o in opened if o.credential.kind == kind}
            for kind in ("token", "cookie")
        }
        live = {
            "token": await store.live_token_hashes(hashes["token"], now)
            if hashes["token"]
            else set(),
            "cookie": await store.live_session_hashes(hashes["cookie"], now, self.idle)
            if hashes["cookie"]
            else set(),
        }
        await self._end_all([o for o in opened if o.credential.hash not in live[o.credential.kind]])

    async def _end_all(self, opened: list[Opened]) -> None:
        results = await asyncio.gather(*(self.end(o) for o in opened), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                log.error("ending a connection failed", exc_info=result)

    async def watch(self) -> None:
        """Recheck every ``interval`` seconds while anything is open; forever."""
        while True:
            await self._busy.wait()
            await asyncio.sleep(self.interval)
            try:
                await self.recheck()
            except Exception:  # the database away for a moment: try again next time
                log.exception("rechecking the credentials of open connections failed")

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """``watch`` for as long as the block runs (the app's lifespan)."""
        task = asyncio.create_task(self.watch(), name="recheck-credentials")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def until_ended(
        self, events: AsyncGenerator[T, None], credential: Credential
    ) -> AsyncGenerator[T, None]:
        """``events`` until they end or ``credential`` does; then Unauthenticated.

        ``events`` runs in a task of its own, so that ending it cancels exactly
        its work (as a client's stop does: the reply so far is saved, marked
        interrupted) and never the transport that sends what it yields.
        Closing this generator stops ``events`` the same way.
        """
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        async def pump() -> None:
            try:
                async with contextlib.aclosing(events):
                    async for event in events:
                        queue.put_nowait(("event", event))
            except asyncio.CancelledError:
                queue.put_nowait(("ended", None))
                raise
            except Exception as exc:
                queue.put_nowait(("raised", exc))
            else:
                queue.put_nowait(("done", None))

        task = asyncio.create_task(pump(), name="stream")

        async def stop() -> None:
            if not task.done() and not task.cancelling():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        opened = self.open(credential, stop)
        try:
            while True:
                kind, value = await queue.get()
                if kind == "event":
                    yield value
                elif kind == "raised":
                    raise value
                elif kind == "done":
                    return
                else:
                    raise Unauthenticated(ENDED)
        finally:
            self.close(opened)
            await stop()
