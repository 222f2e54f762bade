"""Who is asking, and the accounts and tokens they have (issue 9, phase 1)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

TOKEN_PREFIX = "smr_"
# The characters of a token shown to recognise it by ("smr_" and 6 more): not enough to use it.
DISPLAY_PREFIX_CHARS = 10


@dataclass(frozen=True)
class Actor:
    """The authenticated caller, resolved once per request (or websocket connection).

    ``token_name``: the API token's name when the request came with one (agents and
    scripts), None for a browser session or the local user.
    """

    user_id: int
    name: str
    is_admin: bool
    read_only: bool = False
    token_name: str | None = None


@dataclass(frozen=True)
class Account:
    id: int
    name: str
    is_admin: bool
    disabled: bool
    has_password: bool
    created_at: datetime


@dataclass(frozen=True)
class ApiToken:
    """A token as it may be shown: never its secret, only its first characters."""

    id: int
    user_id: int
    name: str
    prefix: str
    read_only: bool
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


def secret_hash(secret: str) -> str:
    """What is stored for a token or a session cookie: its SHA-256, hex.

    The secrets are 32 random bytes, so a fast hash is enough (no dictionary to
    guess from); a lookup by hash needs no per-row salt.
    """
    return hashlib.sha256(secret.encode()).hexdigest()


def bearer_secret(header: str | None) -> str | None:
    """The token in an ``Authorization: Bearer smr_…`` header, or None."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
