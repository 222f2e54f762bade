"""`smriti import`'s progress on stderr (stdout is for the result).

On a terminal one line is rewritten in place; otherwise (a log, a pipe) a
plain line at most every ``every`` seconds and one when the last conversation
is imported, so a script reading it sees whole lines and a log is not flooded. Each sentence
says the messages and conversations done of those the file holds, the rate in
messages a second and the time left at that rate:

    Importing: 1,200 of 200,000 messages, 12 of 2,000 conversations, 4,310 messages/s, 46 s left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from .services.import_stream import ImportProgress


def describe(state: ImportProgress) -> str:
    """One progress sentence (no clock: the state says how long it has run)."""
    if state.reading:
        return (
            f"Reading: {_count(state.conversations, 'conversation')}, "
            f"{_count(state.messages, 'message')} so far ({_seconds(state.seconds)})."
        )
    rate = state.messages_done / state.seconds if state.seconds > 0 else 0.0
    left = (state.messages - state.messages_done) / rate if rate > 0 else None
    return (
        f"Importing: {state.messages_done:,} of {state.messages:,} messages, "
        f"{state.conversations_done:,} of {state.conversations:,} conversations, "
        f"{rate:,.0f} messages/s, "
        + (f"{_seconds(left)} left." if left is not None else "time left unknown yet.")
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _seconds(value: float) -> str:
    whole = round(value)
    if whole < 60:
        return f"{whole} s"
    minutes, seconds = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Printer:
    """Shows each ``ImportProgress`` it is called with on ``stream``."""

    def __init__(
        self,
        stream: TextIO,
        *,
        in_place: bool,
        every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.in_place = in_place
        self.every = every
        self.clock = clock
        self.shown_at: float | None = None
        self.open_line = False  # a line rewritten in place, not ended yet

    def __call__(self, state: ImportProgress) -> None:
        last = (
            state.conversations_done == state.conversations
            if not state.reading
            else False  # the reading pass's end is said by the first importing state
        )
        now = self.clock()
        due = self.shown_at is None or now - self.shown_at >= self.every
        if self.in_place:
            # A terminal redraws cheaply, but not for every conversation of thousands.
            if due or last:
                self.stream.write("\r" + describe(state) + "\x1b[K")
                self.open_line = True
                self.shown_at = now
            if last:
                self.end()
        elif due or last:
            self.stream.write(describe(state) + "\n")
            self.shown_at = now
        self.stream.flush()

    def end(self) -> None:
        """End a line left open in place (at the end, or before another message)."""
        if self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False
