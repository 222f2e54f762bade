"""Prompt layout — how a context plan becomes the messages a provider receives.

docs/architecture.md#the-prompt-layout is rendered here and nowhere else: ``sendMessage``
sends these messages, ``contextPreview`` shows them, and the token estimate
reserves room for the same system message through ``render_system``.

The system message holds the session's instructions (its own or its space's,
``api.domain.chat_settings``) and then the checkpoint block::

    system:    <the instructions>

               You are continuing a conversation.

               Checkpoint [1] — …

In FRESH mode, or with no checkpoint to recall, the instructions alone are
the system message; with no instructions it is the checkpoint block alone, as
before; with neither there is none. Instructions never reach a checkpoint
draft or a session title: those have system prompts of their own.

Consecutive messages of one role are sent as one message, their texts in
order, joined by a blank line (``MERGE_SEPARATOR``). It happens when a call
failed: the user's turn is kept (nothing the user wrote is dropped) but no
answer was written, so the next message follows it directly — after a few
failures, several user messages in a row (and a Retry that answers an
earlier question after a later one was answered puts two answers in a row).
Providers differ on such a run
(LiteLLM's Anthropic adapter merges it into one message of several parts,
the OpenAI and Ollama formats pass it on for each model to read as it will),
so Smriti merges it itself, the same for every provider, the offline one
included, and ``contextPreview`` says which turns each message holds
(``message_sources``). A continuation (continueReply) is joined to the reply
before it with no separator: it goes on mid-sentence, and the two are one
answer as the model wrote it. Leaving the unanswered turns out instead would drop
what the user wrote, and their next message often only makes sense with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from .types import CONTENT_LIST_FIELDS, ChatMessage, Checkpoint, ContextMode, Role

if TYPE_CHECKING:  # the context rules render through this module
    from .context import ContextPlan

PREAMBLE = "You are continuing a conversation."

# Turn roles a provider sees; SYSTEM turns are deliberately absent (rule 5).
_CHAT_ROLES = {Role.USER: "user", Role.ASSISTANT: "assistant"}
# Between the texts of consecutive messages of one role, sent as one.
MERGE_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class MessageSource:
    """What one rendered message holds: the window turns it carries (their
    sequence numbers, in order) and whether it ends with the new message.
    The checkpoint block holds neither."""

    role: str
    sequence_numbers: tuple[int, ...] = ()
    new_message: bool = False

    @property
    def merged(self) -> bool:
        """True when the message joins several turns (the new message counting as one)."""
        return len(self.sequence_numbers) + int(self.new_message) > 1


@dataclass(frozen=True, slots=True)
class _Piece:
    role: str
    content: str
    sequence_number: int | None  # None: the checkpoint block or the new message
    new_message: bool = False
    continues: bool = False  # a continuation: joined to the piece before it as it is


def render_system(instructions: str | None, checkpoints: Sequence[Checkpoint]) -> str | None:
    """The system message: the user's instructions, then the checkpoint block.

    Either may be absent; None when both are (no system message). The
    instructions come first because they say who the model is and how to
    answer, the block says what was concluded so far; they are separated by a
    blank line, as the block's sections are.
    """
    parts = [p for p in (instructions, render_checkpoint_block(checkpoints)) if p]
    return "\n\n".join(parts) if parts else None


def render_checkpoint_block(checkpoints: Sequence[Checkpoint]) -> str | None:
    """The system message content for ``checkpoints`` (oldest first), or None.

    None means "no system message": there is nothing to recall.
    """
    if not checkpoints:
        return None
    blocks = [_render_checkpoint(n, c) for n, c in enumerate(checkpoints, start=1)]
    return "\n\n".join([PREAMBLE, *blocks])


def render_messages(plan: ContextPlan, new_message: str) -> list[ChatMessage]:
    """Render ``plan`` and the user's ``new_message`` as chat messages.

    One system message with the instructions and the checkpoint chain
    (``render_system``; none when the plan has neither), the window turns in
    order, then the new message as the last user message; consecutive turns
    of one role (and a user turn left unanswered before the new message)
    become one message, their texts
    joined by ``MERGE_SEPARATOR`` (an empty text adds nothing; a continuation
    follows the reply it continues directly), so no two messages in a row have
    the same role.
    """
    return [ChatMessage(role, _joined(run)) for role, run in _runs(_pieces(plan, new_message))]


def _joined(run: list[_Piece]) -> str:
    text = ""
    for piece in run:
        if piece.content:
            text += (
                piece.content if piece.continues or not text else MERGE_SEPARATOR + piece.content
            )
    return text


def message_sources(plan: ContextPlan) -> list[MessageSource]:
    """What each message ``render_messages(plan, …)`` returns holds, in the same order."""
    return [
        MessageSource(
            role,
            tuple(p.sequence_number for p in run if p.sequence_number is not None),
            any(p.new_message for p in run),
        )
        for role, run in _runs(_pieces(plan, ""))
    ]


def _pieces(plan: ContextPlan, new_message: str) -> list[_Piece]:
    """One piece per message before merging: block, window turns, new message."""
    pieces: list[_Piece] = []
    chain = () if plan.mode is ContextMode.FRESH else plan.checkpoints
    block = render_system(plan.instructions, chain)
    if block is not None:
        pieces.append(_Piece("system", block, None))
    for turn in plan.turns:
        role = _CHAT_ROLES.get(turn.role)
        # The plan never holds SYSTEM turns; skipping here keeps a hand-built
        # plan from smuggling one into a provider call.
        if role is not None:
            continues = turn.continues_sequence is not None
            pieces.append(_Piece(role, turn.content, turn.sequence_number, continues=continues))
    pieces.append(_Piece("user", new_message, None, new_message=True))
    return pieces


def _runs(pieces: list[_Piece]) -> list[tuple[str, list[_Piece]]]:
    """``pieces`` grouped into runs of one role, in order."""
    return [(role, list(run)) for role, run in groupby(pieces, key=lambda p: p.role)]


def _render_checkpoint(number: int, checkpoint: Checkpoint) -> str:
    content = checkpoint.content
    lines = [f"Checkpoint [{number}] \u2014 {content.title} ({checkpoint.short_hash})"]
    if content.objective.strip():
        lines.append(f"Objective: {content.objective.strip()}")
    if content.summary.strip():
        lines += ["Summary:", content.summary.strip()]
    for f in CONTENT_LIST_FIELDS:
        heading, items = f.prompt_heading, getattr(content, f.attr)
        if heading is not None and items:
            lines.append(heading)
            lines += [f"- {item}" for item in items]
    return "\n".join(lines)
