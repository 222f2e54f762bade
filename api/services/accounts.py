"""Accounts: passwords (Argon2id), API tokens, browser sessions, sign-in limits.

Secrets (passwords, tokens, cookies) are only ever hashed here: none is logged,
stored or put in an error message.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from api.domain.accounts import (
    DISPLAY_PREFIX_CHARS,
    TOKEN_PREFIX,
    Account,
    Actor,
    ApiToken,
    secret_hash,
)
from api.errors import InputError, RateLimited
from api.store import accounts as store
from api.store.spaces import LOCAL_USER

# argon2-cffi's defaults are RFC 9106's low-memory recommendation for Argon2id:
# each hash holds 64 MiB and takes tens of milliseconds of CPU.
_hasher = PasswordHasher()
# A hash to verify against when the name is unknown, so that answer takes as long.
_DUMMY_HASH = _hasher.hash("not a password")

# Hashes run in threads of their own (argon2's C code releases the GIL), never
# on the event loop: six wrong passwords at once stalled every other request
# for seconds. At most HASH_THREADS run at once per process, the others wait
# their turn: more at once would not finish sooner (argon2 already spreads one
# hash over its lanes, and the machine's cores are shared with the loop and the
# database) but each would hold its 64 MiB, so a burst of sign-ins could take
# the machine's memory. Two keeps a worker's peak at 128 MiB of hashing.
HASH_THREADS = 2
_hashing = ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="smriti-hash")
_T = TypeVar("_T")


async def _off_the_loop(work: Callable[..., _T], *args: str) -> _T:
    return await asyncio.get_running_loop().run_in_executor(_hashing, work, *args)


TOKEN_BYTES = 32
MAX_PASSWORD_CHARS = 1024
MIN_PASSWORD_CHARS = 8
MAX_TOKEN_DAYS = 3650
USER_NAME_CHARS = 100
TOKEN_NAME_CHARS = 100


def hash_password(password: str) -> str:
    check_password(password)
    return _hasher.hash(password)


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise InputError(
            f"A password has at least {MIN_PASSWORD_CHARS} characters.", field="password"
        )
    if len(password) > MAX_PASSWORD_CHARS:
        raise InputError(
            f"A password has at most {MAX_PASSWORD_CHARS} characters.", field="password"
        )


def check_user_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > USER_NAME_CHARS or any(c.isspace() for c in name):
        raise InputError(
            f"A user name is 1 to {USER_NAME_CHARS} characters without spaces.", field="name"
        )
    if name == LOCAL_USER:
        raise InputError(f"{LOCAL_USER!r} is the name of the user without an account.")
    return name


async def new_password_hash(password: str) -> str:
    """hash_password, off the event loop (and within the bound on hashes at once)."""
    check_password(password)
    return await _off_the_loop(_hasher.hash, password)


async def add_user(name: str, password: str, *, is_admin: bool) -> tuple[Account, bool]:
    """(account, adopted): the first account takes over the local user's data."""
    name = check_user_name(name)
    return await store.add(name, await new_password_hash(password), is_admin=is_admin)


def new_secret() -> str:
    """A token: ``smr_`` and 32 random bytes, URL-safe base64 (43 characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


async def create_token(
    user_id: int, *, name: str, read_only: bool, expires_in_days: int | None
) -> tuple[ApiToken, str]:
    """(token, secret): the secret is returned here once and never again.

    Only for an account (a user with a password): the local user has no tokens.
    """
    account = await store.by_id(user_id)
    if account is None or not account.has_password:
        raise InputError(
            "API tokens need accounts: create the first with `smriti users add NAME --admin`."
        )
    name = name.strip()
    if not name or len(name) > TOKEN_NAME_CHARS:
        raise InputError(f"A token's name is 1 to {TOKEN_NAME_CHARS} characters.", field="name")
    expires_at = None
    if expires_in_days is not None:
        if not 1 <= expires_in_days <= MAX_TOKEN_DAYS:
            raise InputError(
                f"A token expires in 1 to {MAX_TOKEN_DAYS} days.", field="expiresInDays"
            )
        expires_at = datetime.now(UTC) + timedelta(days=expires_in_days)
    secret = new_secret()
    token = await store.create_token(
        user_id,
        name=name,
        token_hash=secret_hash(secret),
        prefix=secret[:DISPLAY_PREFIX_CHARS],
        read_only=read_only,
        expires_at=expires_at,
    )
    return token, secret


async def actor_for_token(secret: str) -> Actor | None:
    """The caller a bearer token stands for; None if it is unknown, revoked,
    expired, or its user is disabled."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    found = await store.token_owner(secret_hash(secret), datetime.now(UTC))
    if found is None:
        return None
    account, token = found
    return Actor(
        user_id=account.id,
        name=account.name,
        is_admin=account.is_admin,
        read_only=token.read_only,
        token_name=token.name,
    )


async def actor_for_cookie(secret: str, idle: timedelta) -> Actor | None:
    account = await store.web_session_owner(secret_hash(secret), datetime.now(UTC), idle)
    if account is None:
        return None
    return Actor(user_id=account.id, name=account.name, is_admin=account.is_admin)


@dataclass
class SignInLimiter:
    """Failed sign-ins per account and per address, in this process's memory.

    ``limit`` failures within ``window`` seconds lock that name (or address) out
    until the oldest failure leaves the window. Per process: a restart forgets,
    and several workers would each count on their own.
    """

    limit: int = 10
    window: float = 15 * 60
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, *keys: str) -> int:
        now = time.monotonic()
        wait = 0.0
        for key in keys:
            times = self._failures.get(key)
            if not times:
                continue
            while times and now - times[0] >= self.window:
                times.popleft()
            if len(times) >= self.limit:
                wait = max(wait, self.window - (now - times[0]))
            if not times:
                del self._failures[key]
        return int(wait) + (1 if wait else 0)

    def failed(self, *keys: str) -> None:
        now = time.monotonic()
        for key in keys:
            self._failures.setdefault(key, deque()).append(now)
            # Bounded: only the newest `limit` failures matter.
            while len(self._failures[key]) > self.limit:
                self._failures[key].popleft()

    def succeeded(self, name_key: str) -> None:
        self._failures.pop(name_key, None)


WRONG = "Wrong user name or password."


async def sign_in(
    name: str, password: str, address: str, limiter: SignInLimiter
) -> tuple[Actor, str]:
    """(actor, cookie secret) for a right name and password.

    InputError (one message for a wrong name or a wrong password) or RateLimited.
    """
    keys = (f"user:{name}", f"address:{address}")
    wait = limiter.retry_after(*keys)
    if wait:
        raise RateLimited(
            f"Too many failed sign-ins: try again in {wait} seconds.", retry_after=wait
        )
    try:
        account, stored = await store.by_name(name)
    except InputError:
        account, stored = None, None
    too_long = len(password) > MAX_PASSWORD_CHARS  # no password is: never hash unbounded input
    ok = (
        await _off_the_loop(_verify, stored or _DUMMY_HASH, password[:MAX_PASSWORD_CHARS])
        and stored is not None
        and not too_long
    )
    if account is None or not ok or account.disabled:
        limiter.failed(*keys)
        raise InputError(WRONG)
    limiter.succeeded(keys[0])
    if stored is not None and _hasher.check_needs_rehash(stored):
        await store.set_password_hash(account.id, await _off_the_loop(_hasher.hash, password))
    secret = secrets.token_urlsafe(TOKEN_BYTES)
    await store.create_web_session(account.id, secret_hash(secret))
    return Actor(user_id=account.id, name=account.name, is_admin=account.is_admin), secret


def _verify(stored: str, password: str) -> bool:
    try:
        return _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


async def sign_out(secret: str) -> None:
    await store.end_web_session(secret_hash(secret))


async def any_account() -> bool:
    return await store.any_account()
