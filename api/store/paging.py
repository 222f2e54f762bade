"""Keyset pagination: the one reading of a ``PageRequest`` as SQL bounds on a
key, and of the rows read back as a ``Page``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..domain.pages import Page, PageRequest

T = TypeVar("T")

# A page's size when the request names none.
DEFAULT_LIMIT = 100


@dataclass(frozen=True, slots=True)
class Keyset:
    """A page request on ``key``: ``bounds`` (`` AND key > ? AND key < ?``,
    ``after``/``before`` exclusive, with their ``params``), the ``order`` to
    read in (``DESC`` for ``last``: the rows nearest ``before`` first) and
    the ``limit``. A statement reads ``limit + 1`` rows to know whether there
    is more."""

    request: PageRequest
    bounds: str
    params: list[Any]
    order: str
    limit: int

    @property
    def backward(self) -> bool:
        return self.order == "DESC"

    def page(self, kept: Sequence[T], more: bool) -> Page[T]:
        """The page of ``kept`` (at most ``limit``, in reading order); ``more``:
        rows were read past them."""
        items = list(kept)
        if self.backward:
            items.reverse()
            return Page(tuple(items), has_next=self.request.before is not None, has_previous=more)
        return Page(tuple(items), has_next=more, has_previous=self.request.after is not None)


def keyset(request: PageRequest, key: str) -> Keyset:
    bounds, params = "", []
    if request.after is not None:
        bounds += f" AND {key} > ?"
        params.append(request.after)
    if request.before is not None:
        bounds += f" AND {key} < ?"
        params.append(request.before)
    backward = request.last is not None and request.first is None
    limit = request.last if backward else request.first
    return Keyset(
        request,
        bounds,
        params,
        "DESC" if backward else "ASC",
        DEFAULT_LIMIT if limit is None else limit,
    )
