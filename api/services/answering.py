"""One provider call per user turn sent with an idempotency key, on any worker.

The same key sent again while the first request still waits for the provider
(a client that timed out and tried again; graphql-sse sending its POST again
after a connection broke) used to ask the provider a second time: two calls
paid for, the second reply thrown away (``turns.append`` keeps one reply per
turn). Now the request that asks holds a claim on the turn
(``api.store.claims``, a row every worker and server sees); the others wait
for its reply, or for the error its try ended with, and answer with that.

    take    Answered(reply), Answered(error: what the try they waited on
            ended with), or Held: this request asks the provider
    Held    the claim, pushed on every RENEW_SECONDS until ``end`` (in a
            ``finally``, after the reply is saved), which leaves the error
            given to ``failed``, if any, for the waiters

A claim lapses CLAIM_SECONDS after its last push, so one whose process died
is taken over by the next request with the key, which then asks the
provider itself. A turn sent without a key is never sent twice: it needs no
claim, and its Held does nothing.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from ..domain.types import Turn
from ..errors import ProviderError
from ..store import claims, turns
from .base import log

CLAIM_SECONDS = 30.0
RENEW_SECONDS = 10.0
# How often a waiting request looks again (one indexed read).
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class Answered:
    """Another request answered the turn: its reply, or the error its try ended with."""

    reply: Turn | None
    error: ProviderError | None = None


class Held:
    """This request asks the provider for the turn's reply (see the module docstring)."""

    def __init__(self, turn: Turn, holder: str | None) -> None:
        self.turn = turn
        self.holder = holder
        self.failure: ProviderError | None = None
        self._pushing: asyncio.Task[None] | None = None
        if holder is not None:
            self._pushing = asyncio.create_task(self._push_on(holder), name="reply-claim")

    def failed(self, error: ProviderError) -> None:
        """The try ended with ``error``: the requests waiting on it answer with it too."""
        self.failure = error

    async def end(self) -> None:
        """End the claim, once the reply (if any) is saved."""
        if self.holder is None or self._pushing is None:
            return
        self._pushing.cancel()
        self._pushing = None
        # Shielded (``@finished``): a cancelled request still ends its claim,
        # so the next request with the key need not wait for it to lapse.
        await claims.release(self.turn.id, self.holder, self.failure)

    async def _push_on(self, holder: str) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                if not await claims.renew(self.turn.id, holder, until=_until()):
                    return
            except Exception:  # the claim then lapses: a waiter asks again, nothing breaks
                log.exception("could not push on the claim on turn %s", self.turn.id)
                return


def new_claim() -> tuple[str, int]:
    """A holder and the end of its claim, for a turn written with its claim
    (``turns.append(claim=...)``: one statement and, on PostgreSQL, one commit
    fewer than ``take`` after the write)."""
    return uuid.uuid4().hex, _until()


async def take(turn: Turn, *, repeated: bool, claimed: str | None = None) -> Answered | Held:
    """Claim the answering of ``turn``, or wait for whoever holds the claim.

    ``repeated``: the turn was found by its key (written by an earlier
    request), not written by this one; someone may be answering it.
    ``claimed``: the holder of the claim written with the turn (``new_claim``).
    """
    if turn.idempotency_key is None:
        return Held(turn, None)
    if claimed is not None and not repeated:
        return Held(turn, claimed)
    holder = uuid.uuid4().hex
    watched: str | None = None  # the holder whose try this request waited on
    # A turn this request has just written has no claim and no reply yet: it
    # tries to take the claim at once. (Should another request with the key
    # answer it in between, ``turns.append`` still keeps that reply the only one.)
    fresh = not repeated
    while True:
        if not fresh:
            claim = await claims.read(turn.id)
            if claim is not None and claim.expires_at > _now():
                watched = claim.holder
                await asyncio.sleep(POLL_SECONDS)
                continue
            reply = await turns.reply_to(turn.session_id, turn.sequence_number)
            if reply is not None:
                return Answered(reply)
            if claim is not None and claim.failure is not None and claim.holder == watched:
                return Answered(None, claim.failure)
        now = _now()
        if await claims.take(turn.id, holder, now=now, until=now + _ms(CLAIM_SECONDS)):
            if fresh:
                return Held(turn, holder)
            return await _unless_answered(turn, holder)
        fresh = False


async def _unless_answered(turn: Turn, holder: str) -> Answered | Held:
    """The claim is ``holder``'s; but the reply may have been saved between
    the look and the take (a claim ends after its save)."""
    try:
        reply = await turns.reply_to(turn.session_id, turn.sequence_number)
    except BaseException:
        await claims.release(turn.id, holder)  # nobody would push it on, or end it
        raise
    if reply is None:
        return Held(turn, holder)
    await claims.release(turn.id, holder)
    return Answered(reply)


def _now() -> int:
    return int(time.time() * 1000)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _until() -> int:
    return _now() + _ms(CLAIM_SECONDS)
