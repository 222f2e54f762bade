"""Keyset pagination over a Tortoise queryset."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tortoise.models import Model
from tortoise.queryset import QuerySet

from ..domain.pages import Page, PageRequest

T = TypeVar("T")
M = TypeVar("M", bound=Model)


async def keyset_page(
    query: QuerySet[M], key: str, request: PageRequest, convert: Callable[[M], T]
) -> Page[T]:
    """One page, ordered by ``key`` ascending, read one row past the limit to
    know whether there is more."""
    filters: dict[str, Any] = {}
    if request.after is not None:
        filters[f"{key}__gt"] = request.after
    if request.before is not None:
        filters[f"{key}__lt"] = request.before
    query = query.filter(**filters)
    if request.last is not None and request.first is None:
        found = list(await query.order_by(f"-{key}").limit(request.last + 1))
        more = len(found) > request.last
        found = found[: request.last]
        found.reverse()
        return Page(
            tuple(convert(r) for r in found), has_next=request.before is not None, has_previous=more
        )
    limit = request.first if request.first is not None else 100
    found = list(await query.order_by(key).limit(limit + 1))
    more = len(found) > limit
    return Page(
        tuple(convert(r) for r in found[:limit]),
        has_next=more,
        has_previous=request.after is not None,
    )
