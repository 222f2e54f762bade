"""The Turn node: one message of a session, never changed once written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry import relay

from ...domain import types as domain
from ...rendering import render_markdown_cached
from ...services import reading
from ..context import Info
from ..core.chat_settings import ChatSettings
from ..core.common import Usage
from ..core.enums import FinishReason, Role
from ..members.types import Author, author

if TYPE_CHECKING:
    from ..sessions.types import Session

SessionRef = Annotated["Session", strawberry.lazy("..sessions.types")]

# Longer texts take long enough to render (~0.25 ms per KB of prose, ~3 per KB of
# highlighted code; tests/rendering/bench_markdown.py) to be rendered off the event loop.
RENDER_INLINE_LIMIT = 4 * 1024


@strawberry.type(description="One message of a session. Turns are append-only.")
class Turn(relay.Node):
    id: relay.NodeID[int]
    role: Role = strawberry.field(description="Who wrote it.")
    content: str = strawberry.field(description="The text, exactly as written or received.")
    provider: str | None = strawberry.field(
        description="The provider that answered (or was asked)."
    )
    model: str | None = strawberry.field(description="The model, without provider.")
    sequence_number: int = strawberry.field(
        description="1, 2, 3, … per session, assigned by the server."
    )
    created_at: datetime = strawberry.field(description="When the turn was written.")
    usage: Usage = strawberry.field(description="Token counts and cost, when known.")
    interrupted: bool = strawberry.field(
        description="True when the reply is incomplete, cut off before the model finished: "
        "by the token limit (finishReason LENGTH), stopped (INTERRUPTED) or its stream "
        "broken off (LOST_CONNECTION) — exactly the replies continueReply continues. For a "
        "reply saved before Smriti recorded finishReason (null), as recorded then: a "
        "stream that was stopped or broke off."
    )
    finish_reason: FinishReason | None = strawberry.field(
        description="Why a reply ended; null for a user turn, and for a reply saved before "
        "Smriti recorded it."
    )
    provider_finish_reason: str | None = strawberry.field(
        description="With finishReason OTHER: the provider's own word for why it ended, as "
        "it sent it (at most 100 characters); null otherwise."
    )
    reply_to_sequence: int | None = strawberry.field(
        description="For a reply: the sequence number of the user turn it answers (a "
        "continuation answers the same one)."
    )
    continues_sequence: int | None = strawberry.field(
        description="For a continuation (continueReply): the sequence number of the "
        "cut-off reply it goes on from; the two read as one answer. Null otherwise."
    )
    settings: ChatSettings | None = strawberry.field(
        description="For a reply: the instructions and parameters it was asked with (the "
        "session's effective settings then); null when none were set, and for replies "
        "written before they were recorded."
    )
    session_id: strawberry.Private[int]
    author_id: strawberry.Private[int | None]
    author_token: strawberry.Private[str | None]

    @classmethod
    def from_domain(cls, turn: domain.Turn) -> Turn:
        return cls(
            id=turn.id,
            role=Role[turn.role.value],
            content=turn.content,
            provider=turn.provider,
            model=turn.model,
            sequence_number=turn.sequence_number,
            created_at=turn.created_at,
            usage=Usage.from_domain(turn.usage),
            interrupted=turn.interrupted,
            finish_reason=(FinishReason[turn.finish_reason.value] if turn.finish_reason else None),
            provider_finish_reason=turn.provider_finish_reason,
            reply_to_sequence=turn.reply_to_sequence,
            continues_sequence=turn.continues_sequence,
            settings=ChatSettings.from_domain(turn.settings) if turn.settings else None,
            session_id=turn.session_id,
            author_id=turn.author_id,
            author_token=turn.author_token,
        )

    @classmethod
    async def resolve_nodes(
        cls, *, info: Info, node_ids: Iterable[str], required: bool = False
    ) -> list[Any]:
        keys = [int(i) for i in node_ids]
        found = await reading.turns_by_id(info.context.actor, keys)
        return [cls.from_domain(t) if (t := found.get(k)) else None for k in keys]

    @strawberry.field(
        description="The content as Markdown rendered to HTML that is safe to insert in a "
        "page: CommonMark with tables and strikethrough; raw HTML is shown as text; links "
        "only to http(s), mailto or relative addresses, opening in a new tab; images "
        "become links and are never loaded; fenced code is highlighted with CSS classes "
        "`hl-*` (see webui/highlight.css). Text longer than 65,536 characters is not "
        'parsed: it comes back escaped in a `<pre class="unrendered">`.'
    )
    async def content_html(self) -> str:
        if len(self.content) <= RENDER_INLINE_LIMIT:
            return render_markdown_cached(self.content)
        return await asyncio.to_thread(render_markdown_cached, self.content)

    @strawberry.field(
        description="Who wrote it: the user who sent the message (a reply is recorded as "
        "theirs too) and the API token's name when it came with one."
    )
    async def author(self, info: Info) -> Author | None:
        user_id = self.author_id
        if user_id is None:  # written before authorship was recorded: the session's owner
            session = await info.context.loaders.session_by_id.load(self.session_id)
            if session is None:
                return None
            user_id = session.owner_id
        return await author(info, user_id, self.author_token)

    @strawberry.field(
        description="The exchange the turn belongs to, counted 1, 2, 3, … per session as "
        "Jupyter numbers cells (`In [2]` / `Out [2]`), where sequenceNumber counts every "
        "turn: for a user turn, how many user turns the session has up to and including "
        "it; for a reply (and its continuations), its question's; for a turn with no "
        "question (a note, or a reply imported without one), the latest question's "
        "before it. Null when no user turn comes before it."
    )
    async def exchange_number(self, info: Info) -> int | None:
        anchor = self.reply_to_sequence or self.sequence_number
        found = await info.context.loaders.exchange_by_anchor.load((self.session_id, anchor))
        return found or None

    @strawberry.field(description="The session the turn belongs to.")
    async def session(self, info: Info) -> SessionRef:
        from ..sessions.types import Session

        found = await info.context.loaders.session_by_id.load(self.session_id)
        assert found is not None  # a turn cannot outlive its session
        return Session.from_domain(found)
