"""Cut-off replies: which can be continued, how a continuation reaches the model, how
an export says why a reply ended."""

from __future__ import annotations

from dataclasses import replace

import pytest

from api.domain import documents
from api.domain.context import ContextPlan
from api.domain.continuation import can_continue, check_continuable, check_in_window
from api.domain.prompt import render_messages
from api.domain.types import ChatMessage, ContextMode, FinishReason, Role, Turn
from api.errors import ErrorCode, InputError
from tests.domain.builders import session, turn

CUT_OFF = (FinishReason.LENGTH, FinishReason.INTERRUPTED, FinishReason.LOST_CONNECTION)


def reply(
    sequence: int = 2, reason: FinishReason | None = FinishReason.LENGTH, **fields: object
) -> Turn:
    """A reply to turn ``sequence - 1`` that ended for ``reason``."""
    values: dict[str, object] = {
        "finish_reason": reason,
        "interrupted": reason.cut_off if reason else False,
        "reply_to_sequence": sequence - 1,
        **fields,
    }
    return replace(turn(sequence, content="Kyoto was"), **values)  # type: ignore[arg-type]


def test_exactly_the_reasons_that_cut_a_reply_off_leave_it_continuable() -> None:
    assert {r for r in FinishReason if r.cut_off} == set(CUT_OFF)
    assert [can_continue(reply(reason=r)) for r in FinishReason] == [
        r in CUT_OFF for r in FinishReason
    ]
    # Saved before reasons were recorded: as it was marked.
    assert can_continue(replace(reply(reason=None), interrupted=True))
    assert not can_continue(reply(reason=None))
    assert not can_continue(replace(turn(1), interrupted=True))  # a user turn


@pytest.mark.parametrize(
    ("cut", "last", "continued", "message"),
    [
        (replace(turn(1), role=Role.USER), 1, False, "Only a model's reply can be continued."),
        (
            reply(reason=FinishReason.STOP),
            2,
            False,
            "This reply was not cut off: only a reply stopped by the token limit, "
            "interrupted, or cut off by a lost connection can be continued.",
        ),
        (
            reply(reply_to_sequence=None),
            2,
            False,
            "This reply answers no message of the session: it cannot be continued.",
        ),
        (
            reply(),
            3,
            False,
            "Only the last turn of a session can be continued: the session has gone on since.",
        ),
    ],
)
def test_what_cannot_be_continued_says_why(
    cut: Turn, last: int, continued: bool, message: str
) -> None:
    with pytest.raises(InputError) as refused:
        check_continuable(cut, session(last=last), continued=continued)
    assert (refused.value.code, refused.value.message, refused.value.field) == (
        ErrorCode.INVALID,
        message,
        "turnId",
    )


def test_a_reply_continued_already_passes_wherever_it_is() -> None:
    # A retry gets its continuation back, though the session went on.
    check_continuable(reply(), session(last=3), continued=True)
    check_continuable(reply(), session(last=2), continued=False)


def test_the_window_must_end_with_the_reply() -> None:
    cut = reply()
    seen = ContextPlan(ContextMode.FRESH, None, (), (turn(1), cut), boundary=0, token_estimate=0)
    check_in_window(seen, cut)
    for window in ((), (turn(1),)):
        with pytest.raises(InputError):
            check_in_window(replace(seen, turns=window), cut)


def test_a_continuation_is_joined_to_the_reply_it_continues_in_the_prompt() -> None:
    rest = replace(turn(4, content=" for a thousand years."), continues_sequence=2)
    window = (
        turn(1, content="Kyoto?"),
        reply(),
        replace(turn(3, content=" the capital"), role=Role.ASSISTANT, continues_sequence=2),
        rest,
    )
    plan = ContextPlan(ContextMode.FRESH, None, (), window, boundary=0, token_estimate=0)

    assert render_messages(plan, "And Nara?") == [
        ChatMessage("user", "Kyoto?"),
        ChatMessage("assistant", "Kyoto was the capital for a thousand years."),
        ChatMessage("user", "And Nara?"),
    ]


@pytest.mark.parametrize(
    ("reason", "word", "interrupted", "note"),
    [
        (FinishReason.STOP, None, False, ""),
        (FinishReason.LENGTH, None, True, " · stopped: token limit"),
        (FinishReason.CONTENT_FILTER, None, False, " · stopped: content filter"),
        (FinishReason.TOOL_CALLS, None, False, " · stopped: tool call"),
        (FinishReason.INTERRUPTED, None, True, " · interrupted"),
        (FinishReason.LOST_CONNECTION, None, True, " · stopped: connection lost"),
        (FinishReason.OTHER, "quota_paused", False, " · stopped: quota_paused"),
        (FinishReason.OTHER, None, False, " · stopped: unknown"),
        (None, None, True, " · interrupted"),
        (None, None, False, ""),
    ],
)
def test_markdown_says_why_a_reply_ended(
    reason: FinishReason | None, word: str | None, interrupted: bool, note: str
) -> None:
    ended = replace(
        turn(2, content="Kyoto"),
        finish_reason=reason,
        provider_finish_reason=word,
        interrupted=interrupted,
    )
    assert documents.turn_markdown(ended).splitlines()[0] == (
        f"### 2. Model (offline/echo) · 1 May 2024, 12:00 UTC{note}"
    )
