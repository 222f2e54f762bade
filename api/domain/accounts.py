"""Who is asking, and the accounts and tokens they have (issue 9, phase 1)."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..errors import InputError
from .sign_in import sign_in_key
from .types import Authorship

TOKEN_PREFIX = "smr_"
USER_NAME_CHARS = 100
# Characters that mean something in HTML, attributes or Markdown code: a name is
# shown in bylines, member lists and logs, and never needs them.
MARKUP = frozenset("<>&\"'`")
# Unicode categories a name never holds: controls, format characters (the
# zero-width ones, bidirectional overrides), surrogates, private use,
# unassigned, and separators (spaces, line and paragraph separators).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
USER_NAME_RULE = (
    f"A user name is 1 to {USER_NAME_CHARS} letters, digits or punctuation: no spaces, "
    "no control or invisible characters, none of < > & \" ' `."
)
# The characters of a token shown to recognise it by ("smr_" and 6 more): not enough to use it.
DISPLAY_PREFIX_CHARS = 10


@dataclass(frozen=True)
class Actor:
    """Who is asking: the user, the API token they came with, its scope, admin or not.

    Every use case in ``api.services`` takes it first (``api.services.policy``).

    ``token_name``: the API token's name when the request came with one (agents and
    scripts), None for a browser session or the local user.
    """

    user_id: int
    name: str
    is_admin: bool
    read_only: bool = False
    token_name: str | None = None

    @property
    def authorship(self) -> Authorship:
        """Who writes what this actor writes: the user and their token's name."""
        return Authorship(self.user_id, self.token_name)


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


def user_name(name: str) -> str:
    """``name`` as it is stored: NFKC-normalised, without surrounding spaces;
    InputError if it holds what a name may not. Names are unique by
    ``name_key`` (without regard to case or width)."""
    name = unicodedata.normalize("NFKC", name).strip()
    if not 1 <= len(name) <= USER_NAME_CHARS or any(
        c in MARKUP or c.isspace() or unicodedata.category(c) in HIDDEN_CATEGORIES for c in name
    ):
        raise InputError(USER_NAME_RULE, field="name")
    return name


def name_key(name: str) -> str:
    """What makes two names the same account: NFKC and case-folded."""
    return sign_in_key(name)


def password_problem(password: str, *, min_chars: int, max_chars: int) -> str | None:
    """Why ``password`` cannot be one, or None."""
    if len(password) < min_chars:
        return f"A password has at least {min_chars} characters."
    if len(password) > max_chars:
        return f"A password has at most {max_chars} characters."
    if not password.strip():
        return "A password is more than spaces."
    return None


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


@dataclass(frozen=True)
class Credential:
    """What a caller's rights rest on, by the hash of its secret: an API token
    (``token``) or a signed-in browser's session cookie (``cookie``).

    Kept for as long as a websocket or a stream is open, so that its rights can
    be checked again; the secret itself is not kept.
    """

    kind: Literal["token", "cookie"]
    hash: str

    @classmethod
    def token(cls, secret: str) -> Credential:
        return cls("token", secret_hash(secret))

    @classmethod
    def cookie(cls, secret: str) -> Credential:
        return cls("cookie", secret_hash(secret))
