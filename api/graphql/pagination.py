"""Relay connections over the store's keyset pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from strawberry import relay

from api.errors import InputError
from api.store.pages import Page, PageRequest

T = TypeVar("T")
N = TypeVar("N", bound=relay.Node)

CURSOR_PREFIX = "cursor"


def cursor(key: int) -> str:
    return relay.to_base64(CURSOR_PREFIX, key)


def page_request(
    *,
    first: int | None,
    after: str | None,
    last: int | None = None,
    before: str | None = None,
    cap: int,
) -> PageRequest:
    """Check the arguments (lists are capped) and decode the cursors."""
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= cap:
            raise InputError(f"{name} must be between 0 and {cap}.", field=name)
    if first is None and last is None:
        first = cap
    return PageRequest(
        first=first,
        after=_decode(after, "after"),
        last=last,
        before=_decode(before, "before"),
    )


def connection(
    page: Page[T], convert: Callable[[T], N], key: Callable[[T], int]
) -> relay.Connection[N]:
    edges = [relay.Edge(cursor=cursor(key(item)), node=convert(item)) for item in page.items]
    return relay.Connection(
        edges=edges,
        page_info=relay.PageInfo(
            has_next_page=page.has_next,
            has_previous_page=page.has_previous,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
    )


def _decode(value: str | None, field: str) -> int | None:
    if value is None:
        return None
    try:
        prefix, key = relay.from_base64(value)
        if prefix != CURSOR_PREFIX:
            raise ValueError(prefix)
        return int(key)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{field} is not a cursor from this API.", field=field) from exc
