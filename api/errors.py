"""Every expected failure in Smriti is one of these exceptions.

    SmritiError                 base: has a code, a message and optionally a field
    ├── InputError              the request is wrong; nothing was written
    │     codes: INVALID, EMPTY_CONTENT, CONTENT_TOO_LARGE, NOT_FOUND,
    │            UNKNOWN_MODEL, WRONG_SPACE, BRANCH_EXISTS, BRANCH_RESERVED,
    │            NO_SPACE, AMBIGUOUS_HASH, CONFLICT, LAST_OWNER, OUT_OF_RANGE
    │     └── Forbidden   FORBIDDEN (a read-only token writing; a member whose
    │                     role does not allow it; a model kept for admins)
    ├── Unauthenticated         UNAUTHENTICATED: no valid credentials (HTTP 401)
    ├── RateLimited             RATE_LIMITED: too many failed sign-ins
    ├── ProviderError           the model call failed; the user's turn is kept
    │     codes: PROVIDER_AUTH, PROVIDER_RATE_LIMIT, PROVIDER_TIMEOUT,
    │            PROVIDER_UNREACHABLE, CONTEXT_TOO_LONG, PROVIDER_UNAVAILABLE,
    │            PROVIDER_ERROR, MALFORMED_OUTPUT
    └── ConfigError             start-up configuration is wrong (providers.yaml)

Messages are written for the user and never contain secrets: provider
messages are rebuilt from the failure's kind, never copied from a response
that might echo a key.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.StrEnum):
    INVALID = "INVALID"
    EMPTY_CONTENT = "EMPTY_CONTENT"
    CONTENT_TOO_LARGE = "CONTENT_TOO_LARGE"
    NOT_FOUND = "NOT_FOUND"
    UNKNOWN_MODEL = "UNKNOWN_MODEL"
    WRONG_SPACE = "WRONG_SPACE"
    BRANCH_EXISTS = "BRANCH_EXISTS"
    BRANCH_RESERVED = "BRANCH_RESERVED"
    NO_SPACE = "NO_SPACE"
    AMBIGUOUS_HASH = "AMBIGUOUS_HASH"
    CONFLICT = "CONFLICT"
    LAST_OWNER = "LAST_OWNER"
    OUT_OF_RANGE = "OUT_OF_RANGE"
    PROVIDER_AUTH = "PROVIDER_AUTH"
    PROVIDER_RATE_LIMIT = "PROVIDER_RATE_LIMIT"
    PROVIDER_TIMEOUT = "PROVIDER_TIMEOUT"
    PROVIDER_UNREACHABLE = "PROVIDER_UNREACHABLE"
    CONTEXT_TOO_LONG = "CONTEXT_TOO_LONG"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    MALFORMED_OUTPUT = "MALFORMED_OUTPUT"
    TAMPERED = "TAMPERED"
    FORBIDDEN = "FORBIDDEN"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    RATE_LIMITED = "RATE_LIMITED"


class SmritiError(Exception):
    code: ErrorCode = ErrorCode.INVALID

    def __init__(self, message: str, *, code: ErrorCode | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value}: {self.message!r}, field={self.field!r})"


class InputError(SmritiError):
    """The request cannot be carried out as given; nothing was written."""


class NotFound(InputError):
    code = ErrorCode.NOT_FOUND


class ProviderError(SmritiError):
    """A model call failed. The provider's own text is never included.

    ``retry_after``: seconds the provider asked to wait before trying again
    (its ``Retry-After``), when it said.
    """

    code = ErrorCode.PROVIDER_ERROR

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        field: str | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message, code=code, field=field)
        self.retry_after = retry_after


class Forbidden(InputError):
    """The caller is known but may not do this (a read-only token writing, a
    member whose role does not allow it, a non-admin using an admins-only model).

    Only for what the caller can see: what they may not read is NotFound."""

    code = ErrorCode.FORBIDDEN


class Unauthenticated(SmritiError):
    """No valid credentials (accounts mode): HTTP 401, never a payload."""

    code = ErrorCode.UNAUTHENTICATED


class RateLimited(SmritiError):
    """Too many failed sign-ins; ``retry_after`` seconds until the next try."""

    code = ErrorCode.RATE_LIMITED

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class ConfigError(SmritiError):
    """Configuration that stops start-up, e.g. a malformed providers.yaml."""
