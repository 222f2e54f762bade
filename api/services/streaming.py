"""Streaming a reply: ``sendMessage`` as a sequence of events.

The events, in order::

    UserTurnSaved   the user's turn is written first, with the context plan
    Delta …         each piece of the answer as the provider sends it
    ReplySaved      the assistant's turn, written once the answer is complete

or, instead of ``ReplySaved``, one ``Failed``. Everything ``sendMessage``
refuses is refused here the same way, before anything is written (``Failed``
with no turns): both walk the one pipeline of ``api.services.chat``
(``prepare``, ``answering``, the provider, ``save_reply``); an idempotency
key replays the original exchange, or waits for it while it is under way.

Pieces that have arrived while the consumer was busy (the worker is behind)
go out as one ``Delta``, their texts joined: the provider stream is read in a
task of its own (``_Reader``), and the consumer takes every piece waiting when
it asks for the next. A piece is never held back to wait for more: when none
is waiting, the next one goes out as soon as it arrives.

Stopping. The consumer stops the stream by closing the generator (or by
cancelling the task iterating it). Either way the provider stream is closed
first — the HTTP response to the provider is closed, so the provider stops
generating — and then the pieces received so far (those sent and those
waiting) are saved as the assistant
turn, finish reason INTERRUPTED (nothing, if no piece arrived). A provider
error mid-answer saves the partial answer the same way, LOST_CONNECTION, and
ends with ``Failed``. A complete answer is saved with the provider's reason
(LENGTH when the token limit cut it off: interrupted too).
Every write runs in a task of its own awaited through ``asyncio.shield``
(``api.store.writes``), so a cancellation that lands during the write cannot
lose it (docs/architecture.md#a-reply-cut-off-is-saved: a reply cut off mid-stream is saved, marked
interrupted).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from ..domain.accounts import Actor
from ..domain.context import ContextPlan, ResolvedContext
from ..domain.types import ChatMessage, Finish, FinishReason, Turn, Usage
from ..errors import ProviderError, SmritiError
from ..providers import ModelRef, StreamChunk
from . import answering
from .answering import Answered, Held
from .base import Services, log
from .chat import Message, Prepared, after_reply, prepare, save_reply

# Why a streamed reply that did not complete ended.
BROKEN_OFF = Finish(FinishReason.LOST_CONNECTION)  # the provider's stream failed mid-answer
STOPPED = Finish(FinishReason.INTERRUPTED)  # the consumer stopped it (user, client, shutdown)


@dataclass(frozen=True)
class UserTurnSaved:
    """The user's turn (new, or the original one for a repeated idempotency key)."""

    user_turn: Turn
    plan: ContextPlan
    messages: list[ChatMessage]
    model: str  # "provider/model"


@dataclass(frozen=True)
class Delta:
    """A piece of the answer, in order; the pieces joined are the reply."""

    text: str


@dataclass(frozen=True)
class ReplySaved:
    """The complete answer, saved."""

    assistant_turn: Turn


@dataclass(frozen=True)
class Failed:
    """The stream ends without a complete answer.

    Alone, it means the message was refused and nothing was written. After
    ``UserTurnSaved`` it is a provider failure; ``partial_reply`` is what the
    provider had sent, saved as interrupted (None if it sent nothing).
    """

    error: SmritiError
    partial_reply: Turn | None = None


StreamEvent = UserTurnSaved | Delta | ReplySaved | Failed


async def stream_message(
    services: Services, actor: Actor, message: Message
) -> AsyncGenerator[StreamEvent, None]:
    """Send a message and yield the answer as it arrives (see the module docstring).

    Close the generator (``aclose``, or ``contextlib.aclosing``) to stop it.
    """
    try:
        prepared = await prepare(
            services,
            actor,
            message,
            operation="messageStream",
            early=lambda ref, context: _Asked(services, ref, context),
        )
    except SmritiError as exc:
        yield Failed(exc)
        return
    async with aclosing(stream_prepared(services, prepared)) as events:
        async for event in events:
            yield event


async def stream_prepared(
    services: Services, prepared: Prepared
) -> AsyncGenerator[StreamEvent, None]:
    """The events of a message whose user turn is saved (``prepared``): the
    turn, then its reply streamed (or replayed, or waited for under its key).

    A turn this request has just written is claimed, and its provider asked,
    before ``UserTurnSaved`` goes out: the event's fields (the turn's HTML,
    its exchange number, its author: reads of their own) are resolved and
    sent while the provider's request is under way, instead of before it.
    ``stream_message`` starts it sooner still, as the turn's write commits
    (``prepare``'s ``early``: ``Prepared.early``). Either way its pieces are
    read only after this event, once the turn is saved: a client never sees a
    piece of a turn that was not saved, and always sees the turn first."""
    context = prepared.context
    saved = UserTurnSaved(prepared.user_turn, context.plan, context.messages, prepared.ref.name)
    early: _Asked | None = None
    taken: Answered | Held | None = None
    answer = prepared.reply
    if answer is None and not prepared.repeated:
        # Nobody can have answered a turn written a moment ago; should another
        # request with its key hold the claim already, ``take`` waits as below.
        taken = await answering.take(prepared.user_turn, repeated=False, claimed=prepared.claimed)
        if isinstance(taken, Held):
            early = (
                prepared.early
                if isinstance(prepared.early, _Asked)
                else _Asked(services, prepared.ref, prepared.context)
            )
        elif prepared.early is not None:  # answered by another request: not asked for
            await prepared.early.close()
    try:
        yield saved
    except BaseException:
        # Stopped before the reply was streamed: close the provider's request
        # and end the claim (``stream_reply`` would have done both).
        if early is not None:
            await early.close()
        if isinstance(taken, Held):
            await taken.end()
        raise
    if answer is None:
        if taken is None:
            taken = await answering.take(prepared.user_turn, repeated=prepared.repeated)
        if isinstance(taken, Answered):  # by the request that asked first, with this key
            if taken.error is not None:
                yield Failed(taken.error)
                return
            answer = taken.reply
    if answer is not None:
        for replay in replayed(answer):
            yield replay
        return
    assert isinstance(taken, Held)
    chunks = early.chunks if early is not None else None
    async with aclosing(stream_reply(services, prepared, taken, chunks)) as events:
        async for event in events:
            yield event


class _Asked:
    """The provider's stream for a message, asked for now: a task waits for
    its first chunk (LiteLLM builds the request, the provider hears of it)
    while the caller does something else; ``chunks`` then yields that chunk
    and the rest. ``close`` (if ``chunks`` was never iterated) stops it all."""

    def __init__(self, services: Services, ref: ModelRef, context: ResolvedContext) -> None:
        self._stream = services.registry.stream(
            context.messages, ref, parameters=context.settings.parameters
        )
        self._first = asyncio.create_task(self._first_chunk(), name="provider-first-chunk")
        self.chunks = self._chunks()

    async def _first_chunk(self) -> StreamChunk:
        return await anext(aiter(self._stream))

    async def _chunks(self) -> AsyncGenerator[StreamChunk, None]:
        try:
            try:
                first = await self._first
            except StopAsyncIteration:
                return
            yield first
            async for chunk in self._stream:
                yield chunk
        finally:
            await self._stop()

    async def close(self) -> None:
        """Stop the request (when ``chunks`` was never iterated)."""
        await self._stop()

    async def _stop(self) -> None:
        if not self._first.done():
            self._first.cancel()
            await asyncio.wait([self._first])
        elif not self._first.cancelled():
            self._first.exception()  # retrieved: an error here was not the caller's
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


def replayed(answer: Turn) -> list[Delta | ReplySaved]:
    """A reply saved already, as events: one piece, so a client that assembles
    pieces sees the reply too, then the reply."""
    return [Delta(answer.content), ReplySaved(answer)]


async def stream_reply(
    services: Services,
    prepared: Prepared,
    taken: Held | None = None,
    chunks: AsyncIterator[StreamChunk] | None = None,
) -> AsyncGenerator[Delta | ReplySaved | Failed, None]:
    """Ask the provider for ``prepared``'s reply and yield it as it arrives, then
    saved: ``Delta`` … then ``ReplySaved`` or ``Failed``. ``taken``: the claim
    on the user turn (``answering``), ended once the reply is saved.

    Why it ended is saved with it: the provider's reason (STOP, LENGTH, …)
    when the stream completes; LOST_CONNECTION when the provider's stream
    fails mid-answer; INTERRUPTED when the consumer stops it. ``chunks``: the
    provider's stream when it was asked for already (``stream_prepared``).
    """
    # Until its save has started, this reply holds shutdown back (see
    # ``Services.replying``): stopping the server must not lose it.
    with services.replying():
        received: list[str] = []
        usage: Usage | None = None
        ended: Finish | None = None
        failure: ProviderError | None = None
        saved = False
        try:
            try:
                if chunks is None:
                    chunks = services.registry.stream(
                        prepared.context.messages,
                        prepared.ref,
                        parameters=prepared.context.settings.parameters,
                    )
                reader = _Reader(_closable(chunks))
                try:
                    while batch := await reader.next_batch():
                        pieces: list[str] = []
                        for chunk in batch:
                            if chunk.usage is not None:
                                usage = chunk.usage
                            if chunk.finish is not None:
                                ended = chunk.finish
                            if chunk.delta:
                                pieces.append(chunk.delta)
                        if pieces:
                            text = "".join(pieces)
                            received.append(text)
                            yield Delta(text)
                finally:
                    # Done, failed or stopped (closed, cancelled): the provider
                    # stream is closed before anything is saved, and the pieces
                    # still waiting are kept with the others.
                    try:
                        await reader.stop()
                    finally:
                        received += reader.take_waiting()
            except ProviderError as exc:
                log.warning(
                    "provider stream failed for session %s: %s",
                    prepared.session.id,
                    exc.code.value,
                )
                failure = exc
                if taken is not None:
                    taken.failed(exc)
            if failure is not None and not received:
                yield Failed(failure)
                return
            saved = True
            text = "".join(received)
            if failure is not None:
                ended = BROKEN_OFF
            reply = await save_reply(
                services, prepared, text, usage, finish=ended or Finish.other(None)
            )
        finally:
            if not saved and received:
                # Stopped by the consumer (closed or cancelled) after the provider
                # stream was closed above: keep what was received.
                await save_reply(services, prepared, "".join(received), None, finish=STOPPED)
            if taken is not None:
                await taken.end()
    if failure is not None:
        yield Failed(failure, reply)
        return
    after_reply(services, prepared)
    yield ReplySaved(reply)


def _closable(chunks: AsyncIterator[StreamChunk]) -> AsyncGenerator[StreamChunk, None]:
    """``chunks`` with an ``aclose`` that closes the provider stream.

    Transports return async generators (closing one releases its HTTP
    connection); anything else is wrapped so ``aclosing`` applies to it too.
    """
    if isinstance(chunks, AsyncGenerator):
        return chunks

    async def wrapped() -> AsyncGenerator[StreamChunk, None]:
        async for chunk in chunks:
            yield chunk

    return wrapped()


class _Reader:
    """The provider's chunks, read in a task of their own as they arrive.

    ``next_batch`` returns every chunk waiting, or waits for the next one (and
    returns as soon as it is there); an empty list once the stream has ended.
    The stream's failure is raised there, after the chunks that came before it.
    ``stop`` closes the provider stream (cancelling the read under way: the
    transport releases its HTTP connection).
    """

    def __init__(self, chunks: AsyncGenerator[StreamChunk, None]) -> None:
        self.chunks = chunks
        self.waiting: deque[StreamChunk] = deque()
        self.failure: BaseException | None = None
        self.ended = False
        self.wakeup: asyncio.Future[None] | None = None
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async with aclosing(self.chunks) as chunks:
                async for chunk in chunks:
                    self.waiting.append(chunk)
                    self._wake()
        except Exception as exc:  # the consumer raises it, after the pieces before it
            self.failure = exc
        finally:
            self.ended = True
            self._wake()

    def _wake(self) -> None:
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)

    async def next_batch(self) -> list[StreamChunk]:
        while not self.waiting and not self.ended:
            self.wakeup = asyncio.get_running_loop().create_future()
            await self.wakeup
        if self.waiting:
            batch = list(self.waiting)
            self.waiting.clear()
            return batch
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        return []

    async def stop(self) -> None:
        """Close the provider stream (cancelling the read under way) and wait
        for it: the save that follows must come after."""
        if not self.task.done():
            self.task.cancel()
            await asyncio.wait({self.task})

    def take_waiting(self) -> list[str]:
        """The text of the pieces waiting, which the consumer never took."""
        texts = [chunk.delta for chunk in self.waiting if chunk.delta]
        self.waiting.clear()
        return ["".join(texts)] if texts else []
