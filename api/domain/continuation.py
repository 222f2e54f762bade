"""Continuing a reply that was cut off (continueReply): which replies can be, and
what the model is asked.

A reply can be continued when it was cut off — by the token limit (LENGTH),
stopped before its end (INTERRUPTED) or its stream broken off
(LOST_CONNECTION); for a reply saved before reasons were recorded, when it is
marked interrupted — and it is the session's last turn: a continuation is
appended after it (turns are append-only), so the two stay side by side for
the model and for whoever reads the session.

The model receives the context the next message would have (the same rules,
docs/architecture.md#the-prompt-layout) with the cut-off reply as its last message — the window
ends with
it — followed by one short user message, ``CONTINUE_INSTRUCTION``. The
instruction is there for every provider, not only those that need it: OpenAI
and the servers that copy its API treat a trailing assistant message as a
finished turn (some refuse it outright), Anthropic reads one as a prefill but
refuses it when it ends in whitespace — a cut-off reply often does — so one
prompt that every provider accepts, the same one contextPreview could show,
is worth the few tokens. The continuation is saved as a new assistant turn
whose ``continues_sequence`` is the cut-off reply's number; the prompt joins
a reply and its continuations back into one assistant message
(``api.domain.prompt``).
"""

from __future__ import annotations

from ..errors import ErrorCode, InputError
from .context import ContextPlan
from .types import Role, Session, Turn

CONTINUE_INSTRUCTION = (
    "Continue your previous reply exactly where it stopped. Do not repeat what you "
    "already wrote and do not comment on the interruption."
)


def can_continue(turn: Turn) -> bool:
    """Whether ``turn`` is a reply that was cut off before its end."""
    if turn.role is not Role.ASSISTANT:
        return False
    if turn.finish_reason is None:
        return turn.interrupted
    return turn.finish_reason.cut_off


def check_continuable(turn: Turn, session: Session, *, continued: bool) -> None:
    """InputError (INVALID, on ``turnId``) unless ``turn`` can be continued now.
    ``continued``: it has a continuation already (which a retry gets back), so
    only what it is matters, not whether it is still the session's last turn."""
    if turn.role is not Role.ASSISTANT:
        raise _refused("Only a model's reply can be continued.")
    if turn.reply_to_sequence is None:
        raise _refused("This reply answers no message of the session: it cannot be continued.")
    if continued:
        return
    if not can_continue(turn):
        raise _refused(
            "This reply was not cut off: only a reply stopped by the token limit, "
            "interrupted, or cut off by a lost connection can be continued."
        )
    if session.last_sequence_number != turn.sequence_number:
        raise _refused(
            "Only the last turn of a session can be continued: the session has gone on since."
        )


def check_in_window(plan: ContextPlan, turn: Turn) -> None:
    """InputError (INVALID) when the context would not end with ``turn``: the
    model must see the reply it is asked to continue."""
    if not plan.turns or plan.turns[-1].sequence_number != turn.sequence_number:
        raise _refused(
            "The model would not see this reply: a checkpoint saved or mounted after it "
            "starts the context later, or the reply alone is longer than the model's window."
        )


def _refused(message: str) -> InputError:
    return InputError(message, code=ErrorCode.INVALID, field="turnId")
