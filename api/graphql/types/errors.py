"""Expected failures as data: one error type per mutation, one shape for all."""

from __future__ import annotations

from typing import Any

import strawberry

from api.errors import SmritiError
from api.graphql.types.enums import ErrorCode


@strawberry.interface(description="A reason a mutation did not (fully) succeed.")
class MutationError:
    code: ErrorCode = strawberry.field(description="What kind of failure this is.")
    message: str = strawberry.field(description="A sentence for a person to read.")
    field: str | None = strawberry.field(
        description="The input field at fault (dotted path), when one is."
    )


def error_type(name: str, mutation: str) -> Any:
    """A concrete error type named ``name`` for the mutation ``mutation``."""
    cls = type(name, (MutationError,), {"__module__": __name__})
    return strawberry.type(cls, description=f"A reason `{mutation}` did not succeed.")


def to_error(error_cls: Any, exc: SmritiError) -> Any:
    return error_cls(code=ErrorCode[exc.code.value], message=exc.message, field=exc.field)
