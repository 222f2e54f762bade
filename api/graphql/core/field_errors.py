"""The one mutation mechanism: a resolver runs its use case, a failure is data.

A mutation's resolver decodes its input, calls one use case of
``api.services`` with ``info.context.actor`` and builds its payload; it
writes no try block. ``TypedErrors``, put on every field of the Mutation
type when the schema is built (so a new mutation has it without anyone
remembering to), turns an expected failure (``SmritiError``) raised anywhere
in the resolver into the payload: its other fields null (``false``, ``0`` or
``[]`` where the schema says non-null) and one error of the mutation's own
error type. The same extension on the Query fields that may be null
(``MissingIsNull``) answers what the actor cannot find with null, as every
query does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from strawberry.extensions import FieldExtension
from strawberry.types.base import StrawberryList, StrawberryOptional
from strawberry.types.field import StrawberryField

from ...errors import NotFound, SmritiError
from .errors import to_error


class TypedErrors(FieldExtension):
    def apply(self, field: StrawberryField) -> None:
        payload: Any = field.type
        definition = payload.__strawberry_definition__
        nulls: dict[str, object] = {}
        error_cls: Any = None
        for member in definition.fields:
            if member.python_name == "errors":
                assert isinstance(member.type, StrawberryList), field.name
                error_cls = member.type.of_type
            elif member.type in (bool, int):
                # mergeCheckpoints' fastForward, importSpace's created: as on any failure.
                nulls[member.python_name] = False if member.type is bool else 0
            elif isinstance(member.type, StrawberryList):
                nulls[member.python_name] = []  # e.g. importSpace's spaces
            else:
                # Every other field of a payload is null when the mutation fails.
                assert isinstance(member.type, StrawberryOptional), (field.name, member.name)
                nulls[member.python_name] = None
        assert error_cls is not None, f"{field.name}: a payload without errors"
        self.payload = payload
        self.nulls = nulls
        self.error_cls = error_cls

    def resolve(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("every mutation is async")  # pragma: no cover

    async def resolve_async(
        self, next_: Callable[..., Awaitable[Any]], source: Any, info: Any, **kwargs: Any
    ) -> Any:
        try:
            return await next_(source, info, **kwargs)
        except SmritiError as exc:
            return self.payload(**self.nulls, errors=[to_error(self.error_cls, exc)])


class MissingIsNull(FieldExtension):
    """A query field that may be null answers NotFound with null: what cannot
    be found (unknown, malformed, or another user's) is never an error."""

    def resolve(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        try:
            return next_(source, info, **kwargs)
        except NotFound:
            return None

    async def resolve_async(
        self, next_: Callable[..., Awaitable[Any]], source: Any, info: Any, **kwargs: Any
    ) -> Any:
        try:
            return await next_(source, info, **kwargs)
        except NotFound:
            return None


def _extend(
    root: type, kind: type[FieldExtension], wanted: Callable[[StrawberryField], bool]
) -> None:
    """Put ``kind`` on the fields of ``root`` that ``wanted`` (once: build_schema
    runs more than once)."""
    for field in root.__strawberry_definition__.fields:  # type: ignore[attr-defined]
        if wanted(field) and not any(isinstance(e, kind) for e in field.extensions):
            field.extensions.append(kind())


def typed_errors(mutation_type: type) -> None:
    """Every mutation turns its expected failures into its payload's errors."""
    _extend(mutation_type, TypedErrors, lambda field: True)


def missing_is_null(query_type: type) -> None:
    """Every query that may be null answers NotFound with null."""
    _extend(query_type, MissingIsNull, lambda field: isinstance(field.type, StrawberryOptional))
