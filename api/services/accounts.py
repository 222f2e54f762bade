"""Accounts: passwords (Argon2id), API tokens, browser sessions, sign-in limits.

Secrets (passwords, tokens, cookies) are only ever hashed here: none is logged,
stored or put in an error message.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..domain.accounts import (
    DISPLAY_PREFIX_CHARS,
    TOKEN_PREFIX,
    Account,
    Actor,
    ApiToken,
    Credential,
    name_key,
    password_problem,
    secret_hash,
    user_name,
)
from ..domain.sign_in import (
    SignInFailures,
    SignInLimits,
    delay,
    retry_after,
    sign_in_key,
)
from ..errors import InputError, RateLimited
from ..store import accounts as store
from ..store import sign_in as sign_ins
from ..store.spaces import LOCAL_USER, local_user_id
from . import policy
from .connections import Connections

# argon2-cffi's defaults are RFC 9106's low-memory recommendation for Argon2id:
# each hash holds 64 MiB and takes tens of milliseconds of CPU.
_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """A hash to verify against when the name is unknown, so that answer takes as long.

    Made at the first such sign-in (in a hashing thread), not on import: hashing
    costs a quarter of a second of every start (issue 19) and 64 MiB at once.
    """
    return _hasher.hash("not a password")


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
TOKEN_NAME_CHARS = 100


def hash_password(password: str) -> str:
    check_password(password)
    return _hasher.hash(password)


def check_password(password: str) -> None:
    problem = password_problem(password, min_chars=MIN_PASSWORD_CHARS, max_chars=MAX_PASSWORD_CHARS)
    if problem is not None:
        raise InputError(problem, field="password")


def check_user_name(name: str) -> str:
    name = user_name(name)
    if name_key(name) == LOCAL_USER:
        raise InputError(f"The name {LOCAL_USER!r} belongs to the user without an account.")
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


async def create_api_token(
    actor: Actor, *, name: str, read_only: bool, expires_in_days: int | None
) -> tuple[ApiToken, str]:
    """createApiToken: a token of the actor's own (see ``create_token``)."""
    policy.allow(actor, "createApiToken")
    return await create_token(
        actor.user_id, name=name, read_only=read_only, expires_in_days=expires_in_days
    )


async def api_tokens(actor: Actor) -> list[ApiToken]:
    """The actor's tokens, newest first, revoked ones included."""
    policy.allow(actor, "viewer")
    return await store.tokens(actor.user_id)


async def revoke_api_token(actor: Actor, token_id: int) -> ApiToken:
    """revokeApiToken: one of the actor's tokens (NotFound for anyone else's),
    or for an admin anyone's."""
    policy.allow(actor, "revokeApiToken")
    return await revoke_token(token_id, user_id=None if actor.is_admin else actor.user_id)


async def users(actor: Actor) -> list[Account]:
    """Every account for an admin; anyone else: only themselves."""
    policy.allow(actor, "users")
    everyone = await store.accounts()
    return [a for a in everyone if actor.is_admin or a.id == actor.user_id]


async def user_tokens(actor: Actor, name: str) -> list[ApiToken]:
    """The tokens of an account ``users`` listed for the actor."""
    policy.allow(actor, "users")
    account, tokens = await tokens_of(name)
    if not actor.is_admin and account.id != actor.user_id:
        return []
    return tokens


async def failed_sign_ins(actor: Actor, limits: SignInLimits) -> list[SignInFailures]:
    """signInFailures: every failure still counted for an admin; none for anyone else."""
    policy.allow(actor, "signInFailures")
    return await sign_in_failures(limits) if actor.is_admin else []


async def clear_failed_sign_ins(
    actor: Actor, *, name: str | None = None, address: str | None = None
) -> int:
    policy.allow(actor, "clearSignInFailures")
    return await clear_sign_in_failures(name=name, address=address)


async def disable_user(actor: Actor, name: str, disabled: bool) -> Account:
    """setUserDisabled (never the actor's own account)."""
    policy.allow(actor, "setUserDisabled")
    _not_yourself(actor, name, "disable or enable")
    return await set_user_disabled(name, disabled)


async def remove_user(actor: Actor, name: str) -> Account:
    """deleteUser (never the actor's own account)."""
    policy.allow(actor, "deleteUser")
    _not_yourself(actor, name, "delete")
    return await delete_user(name)


def _not_yourself(actor: Actor, name: str, what: str) -> None:
    if name_key(name) == name_key(actor.name):
        raise InputError(f"You cannot {what} your own account.", field="name")


async def local_actor() -> Actor:
    """Who every request acts as without accounts: the local user, an admin."""
    return Actor(user_id=await local_user_id(), name=LOCAL_USER, is_admin=True)


async def actor_for_token(secret: str) -> Actor | None:
    """The caller a bearer token stands for; None if it is unknown, revoked,
    expired, or its user is disabled."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    return await _token_actor(Credential.token(secret).hash)


async def actor_for_cookie(secret: str, idle: timedelta) -> Actor | None:
    return await _cookie_actor(Credential.cookie(secret).hash, idle)


async def actor_for(credential: Credential, idle: timedelta) -> Actor | None:
    """Who a credential stands for now; None once the token is revoked or has
    expired, the browser signed out (or stayed idle longer than ``idle``), or
    the user is disabled. Asked again for every operation, on every transport."""
    if credential.kind == "cookie":
        return await _cookie_actor(credential.hash, idle)
    return await _token_actor(credential.hash)


async def _token_actor(token_hash: str) -> Actor | None:
    found = await store.token_owner(token_hash, datetime.now(UTC))
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


async def _cookie_actor(session_hash: str, idle: timedelta) -> Actor | None:
    account = await store.web_session_owner(session_hash, datetime.now(UTC), idle)
    if account is None:
        return None
    return Actor(user_id=account.id, name=account.name, is_admin=account.is_admin)


WRONG = "Wrong user name or password."


async def _pause(seconds: float) -> None:
    """The wait a name's failures put on a sign-in (a seam for the tests)."""
    await asyncio.sleep(seconds)


async def sign_in(
    name: str, password: str, address: str, limits: SignInLimits
) -> tuple[Actor, str]:
    """(actor, cookie secret) for a right name and password.

    InputError (one message for a wrong name or a wrong password) or
    RateLimited; the rules are api/domain/sign_in.py's, the counts the database's.
    """
    key = sign_in_key(name)
    now = datetime.now(UTC)
    since = now - limits.window
    counts = await sign_ins.counts(key, address, since=since, known_since=now - limits.known_for)
    wait = retry_after(counts, limits, now)
    if wait:
        raise RateLimited(
            f"Too many failed sign-ins: try again in {wait} seconds.", retry_after=wait
        )
    pause = delay(counts, limits)
    if pause:
        await _pause(pause)
    try:
        account, stored = await store.by_name(name)
    except InputError:
        account, stored = None, None
    too_long = len(password) > MAX_PASSWORD_CHARS  # no password is: never hash unbounded input
    ok = (
        await _off_the_loop(_verify, stored or "", password[:MAX_PASSWORD_CHARS])
        and stored is not None
        and not too_long
    )
    if account is None or not ok or account.disabled:
        await sign_ins.failed(key, address, now=datetime.now(UTC), since=since)
        raise InputError(WRONG)
    await sign_ins.succeeded(key, address, now=datetime.now(UTC))
    if stored is not None and _hasher.check_needs_rehash(stored):
        await store.set_password_hash(account.id, await _off_the_loop(_hasher.hash, password))
    secret = secrets.token_urlsafe(TOKEN_BYTES)
    await store.create_web_session(account.id, secret_hash(secret))
    return Actor(user_id=account.id, name=account.name, is_admin=account.is_admin), secret


async def sign_in_failures(limits: SignInLimits) -> list[SignInFailures]:
    """Every (name, address) with failures still counted, the latest first."""
    return await sign_ins.recent_failures(datetime.now(UTC) - limits.window)


async def clear_sign_in_failures(*, name: str | None = None, address: str | None = None) -> int:
    """Forget a name's failures (from every address) or an address's (for every
    name): how many (name, address) pairs had some."""
    if (name is None) == (address is None):
        raise InputError("Say whose failures to clear: a user name or an address.")
    return await sign_ins.clear(
        name=sign_in_key(name) if name is not None else None, address=address
    )


def _verify(stored: str, password: str) -> bool:
    """Whether ``password`` matches ``stored``; "" (no such user): checked against a dummy."""
    try:
        return _hasher.verify(stored or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False


async def sign_out(secret: str, connections: Connections) -> None:
    """End a browser session, and at once whatever this worker has open on it
    (the other workers notice within ``Connections.interval``)."""
    await store.end_web_session(secret_hash(secret))
    await connections.end_resting_on(Credential.cookie(secret))


async def any_account() -> bool:
    return await store.any_account()


async def accounts_list() -> list[Account]:
    """Every account (users with a password), oldest first."""
    return await store.accounts()


async def set_user_disabled(name: str, disabled: bool) -> Account:
    """Disable an account (its tokens and browser sessions stop working; nothing
    is deleted) or enable it again; never the last enabled admin."""
    return await store.set_disabled(name, disabled)


async def delete_user(name: str) -> Account:
    """Delete an account and what is theirs alone (store.accounts.delete says what,
    and when it is refused)."""
    return await store.delete(name)


async def tokens_of(name: str) -> tuple[Account, list[ApiToken]]:
    """An account and its API tokens, newest first (revoked ones included)."""
    account, _ = await store.by_name(name)
    return account, await store.tokens(account.id)


async def revoke_token(token_id: int, *, user_id: int | None) -> ApiToken:
    """Revoke a token: ``user_id``'s own, or (None: an admin) anyone's."""
    if user_id is None:
        return await store.revoke_any_token(token_id)
    return await store.revoke_token(user_id, token_id)
