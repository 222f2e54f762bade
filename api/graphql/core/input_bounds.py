"""Refuse absurdly long lists in a request's variables before graphql-core reads them.

Each mutation checks its own list limits and answers with its typed error,
but by then graphql-core has coerced every item and Strawberry has converted
them: a 2,000,000-item list cost seconds before the resolver could refuse it
in constant time. This bound sits far above every list a field accepts (50
items), so a list within reach of a field limit still gets that field's typed
error; only lists no field could take are refused here, as a top-level error
that names the variable path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from ...errors import ErrorCode


class InputListBound(SchemaExtension):
    def __init__(self, *, max_items: int) -> None:
        self.max_items = max_items

    def on_execute(self) -> Iterator[None]:
        too_long = longest_list_over(self.execution_context.variables or {}, self.max_items)
        if too_long is not None:
            path, length = too_long
            raise GraphQLError(
                f"{path} holds {length} items; no list input takes more than {self.max_items}.",
                extensions={"code": ErrorCode.INVALID.value, "field": path},
            )
        yield


def longest_list_over(variables: Mapping[str, Any], max_items: int) -> tuple[str, int] | None:
    """(dotted path, length) of the first list longer than ``max_items``, else None.

    Walked with a stack, not recursion, and each path kept as a link to its
    parent until one is reported: how deep the variables nest is the HTTP
    layer's business, and must cost neither a RecursionError nor quadratic time.
    """
    stack: list[tuple[_Path, Any]] = [((None, name), value) for name, value in variables.items()]
    while stack:
        path, value = stack.pop()
        if isinstance(value, list):
            if len(value) > max_items:
                return _spell(path), len(value)
            stack.extend(
                ((path, i), item) for i, item in enumerate(value) if isinstance(item, list | dict)
            )
        elif isinstance(value, dict):
            stack.extend(((path, key), item) for key, item in value.items())
    return None


# (parent, key): a path built without copying its prefix at every level.
_Path = tuple[Any, "str | int"]


def _spell(path: _Path | None) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(parts)).lstrip(".")
