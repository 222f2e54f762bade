"""Expected failures as data: one error type per mutation, one shape for all.

Each mutation's error type is a class of its own beside its payload (e.g.
``CreateSpaceError(MutationError)``); one whose failures include a
provider's adds ``retry_after_seconds = retry_after_field()``.
"""

from __future__ import annotations

from typing import Any

import strawberry

from ...errors import ProviderError, SmritiError
from .enums import ErrorCode


@strawberry.interface(description="A reason a mutation did not (fully) succeed.")
class MutationError:
    code: ErrorCode = strawberry.field(description="What kind of failure this is.")
    message: str = strawberry.field(description="A sentence for a person to read.")
    field: str | None = strawberry.field(
        description="The input field at fault (dotted path), when one is."
    )


def retry_after_field() -> Any:
    """``retryAfterSeconds``, for the error type of a mutation that calls a model."""
    return strawberry.field(
        default=None,
        description="Seconds the provider asked to wait before trying again "
        "(its Retry-After), when it said; null otherwise.",
    )


def to_error(error_cls: Any, exc: SmritiError) -> Any:
    extra = {}
    if isinstance(exc, ProviderError) and "retry_after_seconds" in error_cls.__annotations__:
        extra["retry_after_seconds"] = exc.retry_after
    return error_cls(code=ErrorCode[exc.code.value], message=exc.message, field=exc.field, **extra)
