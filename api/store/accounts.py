"""Users with passwords, their API tokens and their browser sessions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from ..domain.accounts import Account, ApiToken, name_key
from ..errors import ErrorCode, InputError, NotFound
from . import members, models
from .spaces import LOCAL_USER
from .writes import finished

# last_used_at is written at most this often per token.
LAST_USED_GRANULARITY = timedelta(minutes=1)


def _account(row: models.User) -> Account:
    return Account(
        id=int(row.id),
        name=row.name,
        is_admin=row.is_admin,
        disabled=row.disabled,
        has_password=row.password_hash is not None,
        created_at=row.created_at,
    )


def _token(row: models.ApiToken) -> ApiToken:
    return ApiToken(
        id=int(row.id),
        user_id=int(row.user_id),  # type: ignore[attr-defined]
        name=row.name,
        prefix=row.prefix,
        read_only=row.read_only,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
    )


async def any_account() -> bool:
    """Whether one user has a password: from then on, the server runs with accounts."""
    return await models.User.filter(password_hash__isnull=False).exists()


@finished
async def add(name: str, password_hash: str, *, is_admin: bool) -> tuple[Account, bool]:
    """A new account; (account, adopted).

    The first account takes over the local user's row (adopted=True): the spaces
    and sessions made before accounts existed become the first account's.
    """
    now = datetime.now(UTC)
    key = name_key(name)
    async with in_transaction():
        taken = await models.User.filter(name_key=key).first()
        if taken is not None:
            raise InputError(f"There is already a user named {taken.name!r}.", field="name")
        local = None
        if not await models.User.filter(password_hash__isnull=False).exists():
            local = await models.User.get_or_none(name=LOCAL_USER, password_hash=None)
        if local is not None:
            local.name = name
            local.name_key = key
            local.password_hash = password_hash
            local.is_admin = is_admin
            await local.save(update_fields=["name", "name_key", "password_hash", "is_admin"])
            return _account(local), True
        try:
            row = await models.User.create(
                name=name,
                name_key=key,
                password_hash=password_hash,
                is_admin=is_admin,
                created_at=now,
            )
        except IntegrityError:
            raise InputError(f"There is already a user named {name!r}.", field="name") from None
        return _account(row), False


async def accounts() -> list[Account]:
    return [
        _account(row)
        for row in await models.User.filter(password_hash__isnull=False).order_by("id")
    ]


async def by_name(name: str) -> tuple[Account, str | None]:
    """An account and its password hash (for a sign-in); NotFound if there is none."""
    row = await _named(name)
    if row is None:
        raise NotFound(f"No user named {name!r}.", field="name")
    return _account(row), row.password_hash


async def _named(name: str) -> models.User | None:
    """The account called ``name`` without regard to case or width."""
    return await models.User.get_or_none(name_key=name_key(name), password_hash__isnull=False)


async def by_id(user_id: int) -> Account | None:
    row = await models.User.get_or_none(id=user_id)
    return None if row is None else _account(row)


async def disable(name: str) -> None:
    """A disabled user's tokens and sessions stop working; nothing is deleted."""
    await set_disabled(name, True)


@finished
async def set_password(name: str, password_hash: str) -> None:
    """A new password signs every browser out."""
    async with in_transaction():
        row = await _named(name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        row.password_hash = password_hash
        await row.save(update_fields=["password_hash"])
        await models.WebSession.filter(user_id=row.id).delete()


@finished
async def set_password_hash(user_id: int, password_hash: str) -> None:
    """Replace an outdated hash (argon2's check_needs_rehash) after a sign-in."""
    await models.User.filter(id=user_id).update(password_hash=password_hash)


@finished
async def create_token(
    user_id: int,
    *,
    name: str,
    token_hash: str,
    prefix: str,
    read_only: bool,
    expires_at: datetime | None,
) -> ApiToken:
    row = await models.ApiToken.create(
        user_id=user_id,
        name=name,
        token_hash=token_hash,
        prefix=prefix,
        read_only=read_only,
        created_at=datetime.now(UTC),
        expires_at=expires_at,
    )
    return _token(row)


async def tokens(user_id: int) -> list[ApiToken]:
    """A user's tokens that still work or were revoked, newest first."""
    rows = await models.ApiToken.filter(user_id=user_id).order_by("-id")
    return [_token(row) for row in rows]


@finished
async def revoke_token(user_id: int, token_id: int) -> ApiToken:
    async with in_transaction():
        row = await models.ApiToken.get_or_none(id=token_id, user_id=user_id)
        if row is None:
            raise NotFound("No such API token.", field="id")
        if row.revoked_at is None:
            row.revoked_at = datetime.now(UTC)
            await row.save(update_fields=["revoked_at"])
        return _token(row)


async def token_owner(token_hash: str, now: datetime) -> tuple[Account, ApiToken] | None:
    """The live token with this hash and its (enabled) user; None otherwise.

    Marks it used, at most once a minute.
    """
    row = await models.ApiToken.get_or_none(token_hash=token_hash).select_related("user")
    if row is None or row.revoked_at is not None:
        return None
    if row.expires_at is not None and row.expires_at <= now:
        return None
    user = row.user
    if user.disabled or user.password_hash is None:
        return None
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
        await _mark_used(int(row.id), now)
        row.last_used_at = now
    return _account(user), _token(row)


@finished
async def _mark_used(token_id: int, now: datetime) -> None:
    await models.ApiToken.filter(id=token_id).update(last_used_at=now)


@finished
async def create_web_session(user_id: int, session_hash: str) -> None:
    now = datetime.now(UTC)
    await models.WebSession.create(
        user_id=user_id, session_hash=session_hash, created_at=now, last_seen_at=now
    )


async def web_session_owner(session_hash: str, now: datetime, idle: timedelta) -> Account | None:
    """The enabled user signed in with this cookie, unless it has been idle too long."""
    row = await models.WebSession.get_or_none(session_hash=session_hash).select_related("user")
    if row is None:
        return None
    if now - row.last_seen_at > idle:
        await end_web_session(session_hash)
        return None
    if row.user.disabled or row.user.password_hash is None:
        return None
    if now - row.last_seen_at >= LAST_USED_GRANULARITY:
        await _seen(int(row.id), now)
    return _account(row.user)


@finished
async def _seen(session_id: int, now: datetime) -> None:
    await models.WebSession.filter(id=session_id).update(last_seen_at=now)


@finished
async def end_web_session(session_hash: str) -> None:
    await models.WebSession.filter(session_hash=session_hash).delete()


async def names(user_ids: list[int]) -> dict[int, str]:
    """User names by id (authors of turns and checkpoints)."""
    if not user_ids:
        return {}
    found = await models.User.filter(id__in=user_ids).values_list("id", "name")
    return {int(user_id): str(name) for user_id, name in found}


async def account_id(name: str) -> int | None:
    """The id of the account named ``name`` (a user with a password), or None."""
    row = await _named(name)
    return int(row.id) if row is not None else None


async def _other_enabled_admin(user_id: int, conn: Any) -> bool:
    return (
        await models.User.filter(
            is_admin=True, disabled=False, password_hash__isnull=False, id__not=user_id
        )
        .using_db(conn)
        .exists()
    )


@finished
async def set_disabled(name: str, disabled: bool) -> Account:
    """Disable an account (its tokens and browser sessions stop working at once;
    nothing is deleted) or enable it again. The last enabled admin stays enabled."""
    async with in_transaction() as conn:
        row = await _named(name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        if disabled and row.is_admin and not await _other_enabled_admin(int(row.id), conn):
            raise InputError(
                f"The account {row.name} is the last enabled admin: make another admin first.",
                code=ErrorCode.CONFLICT,
                field="name",
            )
        row.disabled = disabled
        await row.save(update_fields=["disabled"], using_db=conn)
        if disabled:
            await models.WebSession.filter(user_id=row.id).using_db(conn).delete()
        return _account(row)


@finished
async def delete(name: str) -> Account:
    """Delete an account with everything that is theirs alone: their spaces, their
    sessions (in any space), tokens, browser sessions and memberships.

    Refused (CONFLICT, nothing deleted) while a space they created has other
    members, whose shared work would go with it, and for the last enabled admin.
    Turns and checkpoints they wrote in other people's spaces stay (their author
    then has no name).
    """
    async with in_transaction() as conn:
        row = await _named(name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        user_id = int(row.id)
        if row.is_admin and not row.disabled and not await _other_enabled_admin(user_id, conn):
            raise InputError(
                f"The account {row.name} is the last enabled admin: make another admin first.",
                code=ErrorCode.CONFLICT,
                field="name",
            )
        owned = (
            await models.Space.filter(owner_id=user_id).using_db(conn).values_list("id", flat=True)
        )
        shared = (
            await models.Space.filter(id__in=list(owned))
            .filter(members__user_id__not=user_id)
            .using_db(conn)
            .distinct()
            .order_by("name")
            .values_list("name", flat=True)
        )
        if shared:
            listed = ", ".join(repr(str(n)) for n in shared)
            raise InputError(
                f"The account {row.name} owns spaces shared with others ({listed}): remove their "
                "members or delete those spaces first, or disable the account instead.",
                code=ErrorCode.CONFLICT,
                field="name",
            )
        for space_id in owned:
            await members.detach_others(conn, int(str(space_id)), user_id)
        await models.Space.filter(owner_id=user_id).using_db(conn).delete()
        await models.User.filter(id=user_id).using_db(conn).delete()
        return _account(row)


@finished
async def revoke_any_token(token_id: int) -> ApiToken:
    """An admin revokes anyone's token."""
    row = await models.ApiToken.get_or_none(id=token_id)
    if row is None:
        raise NotFound("No such API token.", field="id")
    return await revoke_token(int(row.user_id), token_id)  # type: ignore[attr-defined]


# Hashes asked about in one statement, at most (SQLite allows 32766 parameters).
LIVE_CHUNK = 1000


async def live_token_hashes(token_hashes: set[str], now: datetime) -> set[str]:
    """Which of these tokens still work: not revoked, not expired, their user
    enabled (as ``token_owner`` decides). One query per thousand hashes."""
    found: set[str] = set()
    hashes = sorted(token_hashes)
    for start in range(0, len(hashes), LIVE_CHUNK):
        rows = await (
            models.ApiToken.filter(
                token_hash__in=hashes[start : start + LIVE_CHUNK],
                revoked_at__isnull=True,
                user__disabled=False,
                user__password_hash__isnull=False,
            )
            .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
            .values_list("token_hash", flat=True)
        )
        found.update(str(row) for row in rows)
    return found


async def live_session_hashes(session_hashes: set[str], now: datetime, idle: timedelta) -> set[str]:
    """Which of these browser sessions are still signed in: not signed out, not
    idle longer than ``idle``, their user enabled (as ``web_session_owner``
    decides). One query per thousand hashes."""
    found: set[str] = set()
    hashes = sorted(session_hashes)
    for start in range(0, len(hashes), LIVE_CHUNK):
        rows = await models.WebSession.filter(
            session_hash__in=hashes[start : start + LIVE_CHUNK],
            last_seen_at__gte=now - idle,
            user__disabled=False,
            user__password_hash__isnull=False,
        ).values_list("session_hash", flat=True)
        found.update(str(row) for row in rows)
    return found
