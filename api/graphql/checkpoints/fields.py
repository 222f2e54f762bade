"""GraphQL fields made from the checkpoint's list fields (CONTENT_LIST_FIELDS).

Each type that has a field per list field (the checkpoint, its draft, the
carried state, the create input, a comparison, a merge preview) declares the
rest of its fields by hand and gets these inserted by ``list_fields``, at the
place the schema has always shown them: a list field added to the registry
appears in every one of them, and the exported schema of today's fields stays
word for word what it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...domain.types import CONTENT_LIST_FIELDS, ContentField

T = TypeVar("T")

# One field to insert: its Python attribute, its annotation, its strawberry.field.
Made = tuple[str, Any, Any]


def list_fields(*, after: str, make: Callable[[ContentField], Made]) -> Callable[[T], T]:
    """A class decorator, put under ``@strawberry.type`` (or ``input``):
    inserts ``make(f)`` for every list field ``f``, in registry order, right
    after the attribute ``after`` (the order the schema prints)."""

    def insert(cls: T) -> T:
        annotations: dict[str, Any] = {}
        declared: dict[str, Any] = dict(vars(cls).get("__annotations__", {}))
        if after not in declared:
            raise TypeError(f"{cls!r} declares no {after!r} to put the list fields after")
        for name, annotation in declared.items():
            annotations[name] = annotation
            if name == after:
                for f in CONTENT_LIST_FIELDS:
                    attr, made_annotation, value = make(f)
                    annotations[attr] = made_annotation
                    setattr(cls, attr, value)
        setattr(cls, "__annotations__", annotations)  # noqa: B010 - a class's own, replaced
        return cls

    return insert


def last_list_attr() -> str:
    """The attribute the items fields follow (the last list field's)."""
    return CONTENT_LIST_FIELDS[-1].attr


_NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def list_field_count() -> str:
    """How many list fields there are, as a description says it ("four")."""
    count = len(CONTENT_LIST_FIELDS)
    return _NUMBERS[count - 1] if count <= len(_NUMBERS) else str(count)
