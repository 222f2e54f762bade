"""A read-only API token changes nothing: every mutation answers it with FORBIDDEN.

Applied to every field of the Mutation type when the schema is built, so a new
mutation is guarded without anyone remembering to: the payload comes back with
its other fields null and one FORBIDDEN error, before the resolver runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from strawberry.extensions import FieldExtension
from strawberry.types.base import StrawberryList, StrawberryOptional
from strawberry.types.field import StrawberryField

from api.errors import Forbidden
from api.graphql.types.errors import to_error


class ReadOnlyGuard(FieldExtension):
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
            info.context.check_writable()
        except Forbidden as exc:
            return self.payload(**self.nulls, errors=[to_error(self.error_cls, exc)])
        return await next_(source, info, **kwargs)


def guard_mutations(mutation_type: type) -> None:
    """Put the guard on every mutation (once: build_schema runs more than once)."""
    for field in mutation_type.__strawberry_definition__.fields:  # type: ignore[attr-defined]
        if not any(isinstance(extension, ReadOnlyGuard) for extension in field.extensions):
            field.extensions.append(ReadOnlyGuard())
