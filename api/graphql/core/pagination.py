"""Relay connections over the store's keyset pages.

A cursor names the list it came from as well as the position: a turn's
position is its sequence number, which means something else in another
session, so a cursor from one list is refused on any other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import strawberry
from strawberry import relay

from ...domain.pages import Page, PageRequest
from ...errors import InputError
from . import ids

T = TypeVar("T")
N = TypeVar("N", bound=relay.Node)

CURSOR_PREFIX = "cursor"
# Longer than any cursor we hand out ("cursor:turns/Session:<19 digits>:<19 digits>").
MAX_CURSOR_CHARS = 120

# The lists whose keys are global ids: the same position in any of them.
SPACES = "spaces"
SESSIONS = "sessions"
CHECKPOINTS = "checkpoints"

# The `first` and `after` arguments of the lists capped at 100 (every list but turns).
PageSize = Annotated[int | None, strawberry.argument(description="How many (at most 100).")]
PageCursor = Annotated[
    str | None, strawberry.argument(description="A cursor from a previous page.")
]


def turns_of(session_id: int) -> str:
    """The list name of one session's turns (keyed by sequence number)."""
    return f"turns/{ids.encode('Session', session_id)}"


def cursor(scope: str, key: int) -> str:
    return ids.prefixed(f"{CURSOR_PREFIX}:{scope}:")(str(key))


class LazyEdge(relay.Edge[N]):
    """An edge whose cursor is encoded when it is read: most pages are read
    for their nodes and the page's ``endCursor`` only."""

    def __init__(self, node: N, key: int, encode: Callable[[str], str]) -> None:
        self.node = node
        self._key = key
        self._encode = encode

    @property
    def cursor(self) -> str:  # type: ignore[override]
        return self._encode(str(self._key))


def page_request(
    *,
    scope: str,
    first: int | None,
    after: str | None,
    last: int | None = None,
    before: str | None = None,
    cap: int,
) -> PageRequest:
    """Check the arguments (lists are capped) and decode the cursors of list ``scope``."""
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= cap:
            raise InputError(f"{name} must be between 0 and {cap}.", field=name)
    if first is None and last is None:
        first = cap
    return PageRequest(
        first=first,
        after=_decode(after, scope, "after"),
        last=last,
        before=_decode(before, scope, "before"),
    )


def connection(
    page: Page[T], convert: Callable[[T], N], key: Callable[[T], int], *, scope: str
) -> relay.Connection[N]:
    encode = ids.prefixed(f"{CURSOR_PREFIX}:{scope}:")
    edges: list[relay.Edge[N]] = [LazyEdge(convert(item), key(item), encode) for item in page.items]
    return relay.Connection(
        edges=edges,
        page_info=relay.PageInfo(
            has_next_page=page.has_next,
            has_previous_page=page.has_previous,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
    )


def _decode(value: str | None, scope: str, field: str) -> int | None:
    if value is None:
        return None
    parsed = ids.parse(value, max_chars=MAX_CURSOR_CHARS)
    if parsed is not None and parsed[0] == CURSOR_PREFIX:
        found_scope, _, text = parsed[1].rpartition(":")
        key = ids.parse_key(text) if found_scope else None
        if key is not None and found_scope != scope:
            raise InputError(f"{field} is a cursor from another list.", field=field)
        if key is not None:
            return key
    raise InputError(f"{field} is not a cursor from this API.", field=field)
