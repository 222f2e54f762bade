"""Shutting the app down right after a stream is cancelled keeps its partial reply.

At the end of its graceful-shutdown timeout uvicorn cancels the requests still
running and, without waiting for them, runs the app's lifespan shutdown. A
stream cancelled there first closes its provider stream (which takes a moment)
and only then saves what it received; the lifespan must wait for that save
before the database closes (issue 7, finding 2).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from api.app import create_app
from api.domain.types import ChatMessage, MemoryScope
from api.providers import ModelRef, ProviderRegistry, StreamChunk, load_config
from api.providers.types import Completion
from api.services import accounts, chat, streaming
from api.settings import Settings
from api.store import sessions, spaces, turns


class SlowToClose:
    """Sends two pieces, then holds; closing it takes 0.2 s, like a real connection."""

    async def complete(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> Completion:
        raise AssertionError("not used")

    async def stream(
        self, messages: Sequence[ChatMessage], ref: ModelRef, *, api_key: str | None
    ) -> AsyncIterator[StreamChunk]:
        try:
            yield StreamChunk("Part")
            yield StreamChunk(" one")
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.2)

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        return len(text.split())

    def context_window(self, ref: ModelRef) -> int:
        return 100_000

    def output_limit(self, ref: ModelRef) -> int:
        return 4_096


async def test_shutdown_waits_for_a_cancelled_stream_to_save_its_partial_reply(
    settings: Settings,
) -> None:
    assert settings.providers_file is not None
    registry = ProviderRegistry(load_config(settings.providers_file), transport=SlowToClose())
    app = create_app(settings, registry=registry)
    received: list[Any] = []
    two_pieces = asyncio.Event()

    async with app.router.lifespan_context(app):
        owner = await spaces.local_user_id()
        session = await sessions.create(
            owner,
            title="t",
            space_id=None,
            memory_scope=MemoryScope.LATEST_1,
            provider="lab",
            model="my-model",
        )

        async def consume() -> None:
            actor = await accounts.local_actor()
            message = chat.Message(session.id, "Long one?")
            stream = streaming.stream_message(app.state.services, actor, message)
            async with aclosing(stream) as events:
                async for event in events:
                    received.append(event)
                    # Both pieces in, as one Delta or two (waiting together, they are joined).
                    text = "".join(e.text for e in received if isinstance(e, streaming.Delta))
                    if text == "Part one":
                        two_pieces.set()

        request = asyncio.create_task(consume())
        # A stream that fails before its pieces ends the wait too (and the test with
        # its error), instead of hanging the suite.
        pieces = asyncio.create_task(two_pieces.wait())
        await asyncio.wait({request, pieces}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        assert two_pieces.is_set(), request.exception() if request.done() else "no pieces in 30 s"
        pieces.cancel()
        # What uvicorn does: cancel the request, then shut the app down at once.
        request.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await request

    async with create_app(settings).router.lifespan_context(app):
        stored = await turns.in_range(session.id, 1, 10)
    assert [(t.sequence_number, t.role.value, t.content, t.interrupted) for t in stored] == [
        (1, "USER", "Long one?", False),
        (2, "ASSISTANT", "Part one", True),
    ]
