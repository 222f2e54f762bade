"""Expected failures as data: one error type per mutation, one shape for all."""

from __future__ import annotations

from typing import Any

import strawberry

from api.errors import ProviderError, SmritiError
from api.graphql.types.enums import ErrorCode


@strawberry.interface(description="A reason a mutation did not (fully) succeed.")
class MutationError:
    code: ErrorCode = strawberry.field(description="What kind of failure this is.")
    message: str = strawberry.field(description="A sentence for a person to read.")
    field: str | None = strawberry.field(
        description="The input field at fault (dotted path), when one is."
    )


def error_type(name: str, mutation: str, *, calls_a_model: bool = False) -> Any:
    """A concrete error type named ``name`` for the mutation ``mutation``.

    ``calls_a_model``: the mutation's failures include a provider's, so the
    type also says how long the provider asked to wait (``retryAfterSeconds``).
    """
    namespace: dict[str, Any] = {"__module__": __name__}
    if calls_a_model:
        namespace["__annotations__"] = {"retry_after_seconds": "float | None"}
        namespace["retry_after_seconds"] = strawberry.field(
            default=None,
            description="Seconds the provider asked to wait before trying again "
            "(its Retry-After), when it said; null otherwise.",
        )
    cls = type(name, (MutationError,), namespace)
    return strawberry.type(cls, description=f"A reason `{mutation}` did not succeed.")


def to_error(error_cls: Any, exc: SmritiError) -> Any:
    extra = {}
    if isinstance(exc, ProviderError) and "retry_after_seconds" in error_cls.__annotations__:
        extra["retry_after_seconds"] = exc.retry_after
    return error_cls(code=ErrorCode[exc.code.value], message=exc.message, field=exc.field, **extra)
