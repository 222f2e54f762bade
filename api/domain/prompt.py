"""Prompt layout — how a context plan becomes the messages a provider receives.

DESIGN §2 "Prompt layout" is rendered here and nowhere else: ``sendMessage``
sends these messages, ``contextPreview`` shows them, and the token estimate
reserves room for the same checkpoint block through ``render_checkpoint_block``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from api.domain.types import ChatMessage, Checkpoint, ContextMode, Role

if TYPE_CHECKING:  # the context rules render through this module
    from api.domain.context import ContextPlan

PREAMBLE = "You are continuing a conversation."

# Turn roles a provider sees; SYSTEM turns are deliberately absent (rule 5).
_CHAT_ROLES = {Role.USER: "user", Role.ASSISTANT: "assistant"}


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

    One system message with the checkpoint chain (unless the plan is FRESH or
    has no checkpoints), one message per window turn in order, then the new
    message as the last user message.
    """
    messages: list[ChatMessage] = []
    block = None if plan.mode is ContextMode.FRESH else render_checkpoint_block(plan.checkpoints)
    if block is not None:
        messages.append(ChatMessage("system", block))
    for turn in plan.turns:
        role = _CHAT_ROLES.get(turn.role)
        # The plan never holds SYSTEM turns; skipping here keeps a hand-built
        # plan from smuggling one into a provider call.
        if role is not None:
            messages.append(ChatMessage(role, turn.content))
    messages.append(ChatMessage("user", new_message))
    return messages


def _render_checkpoint(number: int, checkpoint: Checkpoint) -> str:
    content = checkpoint.content
    lines = [f"Checkpoint [{number}] \u2014 {content.title} ({checkpoint.short_hash})"]
    if content.objective.strip():
        lines.append(f"Objective: {content.objective.strip()}")
    if content.summary.strip():
        lines += ["Summary:", content.summary.strip()]
    for heading, items in (
        ("Key Decisions:", content.decisions),
        ("Open Tasks:", content.tasks),
        ("Open Questions:", content.open_questions),
    ):
        if items:
            lines.append(heading)
            lines += [f"- {item}" for item in items]
    return "\n".join(lines)
