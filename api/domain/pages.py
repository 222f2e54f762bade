"""Keyset pages: the shape every list of the store returns (plain data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    has_next: bool
    has_previous: bool


@dataclass(frozen=True, slots=True)
class PageRequest:
    """``first``/``after`` reads forward; ``last``/``before`` reads backward.

    ``after`` and ``before`` are keys (ids or sequence numbers), exclusive.
    """

    first: int | None = None
    after: int | None = None
    last: int | None = None
    before: int | None = None
