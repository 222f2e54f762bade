"""The shape every mutation shares: run, turn expected failures into data."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from api.errors import SmritiError
from api.graphql.types.errors import to_error

T = TypeVar("T")


async def attempt(work: Awaitable[T], error_cls: Any) -> tuple[T | None, list[Any]]:
    """(result, []) on success, (None, [error]) on an expected failure."""
    try:
        return await work, []
    except SmritiError as exc:
        return None, [to_error(error_cls, exc)]
