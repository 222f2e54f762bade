"""Users with passwords, their API tokens and their browser sessions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..domain.accounts import Account, ApiToken, name_key
from ..errors import ErrorCode, InputError, NotFound
from . import members, rows, sql
from .spaces import LOCAL_USER
from .tables import API_TOKEN, USER, WEB_SESSION
from .writes import finished

# last_used_at is written at most this often per token.
LAST_USED_GRANULARITY = timedelta(minutes=1)

_USERS = f"SELECT {USER.select()} FROM smriti_user"
# The password hash's position in a row of ``_USERS``.
_PASSWORD = USER.position["password_hash"]


async def _users(conn: Any, where: str, params: list[Any]) -> list[rows.Row]:
    return list(await sql.fetch_rows(conn, f"{_USERS} WHERE {where}", params))


async def _one_user(conn: Any, where: str, params: list[Any]) -> rows.Row | None:
    found = await _users(conn, where, params)
    return found[0] if found else None


async def _exists(conn: Any, statement: str, params: list[Any]) -> bool:
    return bool(await sql.fetch_rows(conn, f"SELECT 1 WHERE EXISTS ({statement})", params))


_WITH_PASSWORD = "SELECT 1 FROM smriti_user WHERE password_hash IS NOT NULL"


async def any_account() -> bool:
    """Whether one user has a password: from then on, the server runs with accounts."""
    return await _exists(sql.connection(), _WITH_PASSWORD, [])


@finished
async def add(name: str, password_hash: str, *, is_admin: bool) -> tuple[Account, bool]:
    """A new account; (account, adopted).

    The first account takes over the local user's row (adopted=True): the spaces
    and sessions made before accounts existed become the first account's.
    """
    now = datetime.now(UTC)
    key = name_key(name)
    async with sql.transaction() as conn:
        taken = await _one_user(conn, "name_key = ? ORDER BY id LIMIT 1", [key])
        if taken is not None:
            raise InputError(
                f"There is already a user named {rows.account(taken).name!r}.", field="name"
            )
        local = None
        if not await _exists(conn, _WITH_PASSWORD, []):
            local = await _one_user(conn, "name = ? AND password_hash IS NULL", [LOCAL_USER])
        if local is not None:
            adopted = await sql.returning(
                conn,
                "UPDATE smriti_user SET name = ?, name_key = ?, password_hash = ?, is_admin = ? "
                f"WHERE id = ? RETURNING {USER.select()}",
                [name, key, password_hash, is_admin, rows.account(local).id],
            )
            return rows.account(adopted[0]), True
        values = dict(
            name=name, name_key=key, password_hash=password_hash, is_admin=is_admin, created_at=now
        )
        try:
            row = await sql.insert(conn, USER, values)
        except sql.IntegrityError:
            raise InputError(f"There is already a user named {name!r}.", field="name") from None
        return rows.account(row), False


async def accounts() -> list[Account]:
    found = await _users(sql.connection(), "password_hash IS NOT NULL ORDER BY id", [])
    return [rows.account(row) for row in found]


async def by_name(name: str) -> tuple[Account, str | None]:
    """An account and its password hash (for a sign-in); NotFound if there is none."""
    row = await _named(sql.connection(), name)
    if row is None:
        raise NotFound(f"No user named {name!r}.", field="name")
    return rows.account(row), row[_PASSWORD]


async def _named(conn: Any, name: str) -> rows.Row | None:
    """The account called ``name`` without regard to case or width."""
    return await _one_user(conn, "name_key = ? AND password_hash IS NOT NULL", [name_key(name)])


async def by_id(user_id: int) -> Account | None:
    row = await _one_user(sql.connection(), "id = ?", [user_id])
    return None if row is None else rows.account(row)


async def disable(name: str) -> None:
    """A disabled user's tokens and sessions stop working; nothing is deleted."""
    await set_disabled(name, True)


@finished
async def set_password(name: str, password_hash: str) -> None:
    """A new password signs every browser out."""
    async with sql.transaction() as conn:
        row = await _named(conn, name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        user_id = rows.account(row).id
        await sql.update(conn, USER, {"password_hash": password_hash}, "id = ?", [user_id])
        await sql.execute(conn, "DELETE FROM web_session WHERE user_id = ?", [user_id])


@finished
async def set_password_hash(user_id: int, password_hash: str) -> None:
    """Replace an outdated hash (argon2's check_needs_rehash) after a sign-in."""
    await sql.update(sql.connection(), USER, {"password_hash": password_hash}, "id = ?", [user_id])


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
    values = dict(
        user_id=user_id,
        name=name,
        token_hash=token_hash,
        prefix=prefix,
        read_only=read_only,
        created_at=datetime.now(UTC),
        expires_at=expires_at,
    )
    return rows.api_token(await sql.insert(sql.connection(), API_TOKEN, values))


_TOKENS = f"SELECT {API_TOKEN.select()} FROM api_token"


async def _tokens(conn: Any, where: str, params: list[Any]) -> list[ApiToken]:
    found = await sql.fetch_rows(conn, f"{_TOKENS} WHERE {where}", params)
    return [rows.api_token(row) for row in found]


async def tokens(user_id: int) -> list[ApiToken]:
    """A user's tokens that still work or were revoked, newest first."""
    return await _tokens(sql.connection(), "user_id = ? ORDER BY id DESC", [user_id])


@finished
async def revoke_token(user_id: int, token_id: int) -> ApiToken:
    async with sql.transaction() as conn:
        mine = "id = ? AND user_id = ?"
        await sql.update(
            conn,
            API_TOKEN,
            {"revoked_at": datetime.now(UTC)},
            f"{mine} AND revoked_at IS NULL",
            [token_id, user_id],
        )
        found = await _tokens(conn, mine, [token_id, user_id])
        if not found:
            raise NotFound("No such API token.", field="id")
        return found[0]


# A token or a browser session with its user's columns after its own.
_TOKEN_OWNER = (
    f"SELECT {API_TOKEN.select('t')}, {USER.select('u')} FROM api_token t "
    "JOIN smriti_user u ON u.id = t.user_id WHERE t.token_hash = ?"
)
_WEB_SESSION_OWNER = (
    f"SELECT {WEB_SESSION.select('w')}, {USER.select('u')} FROM web_session w "
    "JOIN smriti_user u ON u.id = w.user_id WHERE w.session_hash = ?"
)


def _enabled(user: rows.Row) -> bool:
    return not user[USER.position["disabled"]] and user[_PASSWORD] is not None


async def token_owner(token_hash: str, now: datetime) -> tuple[Account, ApiToken] | None:
    """The live token with this hash and its (enabled) user; None otherwise.

    Marks it used, at most once a minute.
    """
    found = await sql.fetch_rows(sql.connection(), _TOKEN_OWNER, [token_hash])
    if not found:
        return None
    token, user = rows.api_token(found[0]), found[0][len(API_TOKEN.columns) :]
    if token.revoked_at is not None:
        return None
    if token.expires_at is not None and token.expires_at <= now:
        return None
    if not _enabled(user):
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        await _mark_used(token.id, now)
        token = replace(token, last_used_at=now)
    return rows.account(user), token


@finished
async def _mark_used(token_id: int, now: datetime) -> None:
    await sql.update(sql.connection(), API_TOKEN, {"last_used_at": now}, "id = ?", [token_id])


@finished
async def create_web_session(user_id: int, session_hash: str) -> None:
    now = datetime.now(UTC)
    values = dict(user_id=user_id, session_hash=session_hash, created_at=now, last_seen_at=now)
    await sql.insert(sql.connection(), WEB_SESSION, values)


async def web_session_owner(session_hash: str, now: datetime, idle: timedelta) -> Account | None:
    """The enabled user signed in with this cookie, unless it has been idle too long."""
    found = await sql.fetch_rows(sql.connection(), _WEB_SESSION_OWNER, [session_hash])
    if not found:
        return None
    p = WEB_SESSION.position
    session_id = int(found[0][p["id"]])
    last_seen = rows.timestamp(found[0][p["last_seen_at"]])
    user = found[0][len(WEB_SESSION.columns) :]
    if now - last_seen > idle:
        await end_web_session(session_hash)
        return None
    if not _enabled(user):
        return None
    if now - last_seen >= LAST_USED_GRANULARITY:
        await _seen(session_id, now)
    return rows.account(user)


@finished
async def _seen(session_id: int, now: datetime) -> None:
    await sql.update(sql.connection(), WEB_SESSION, {"last_seen_at": now}, "id = ?", [session_id])


@finished
async def end_web_session(session_hash: str) -> None:
    await sql.execute(
        sql.connection(), "DELETE FROM web_session WHERE session_hash = ?", [session_hash]
    )


async def names(user_ids: list[int]) -> dict[int, str]:
    """User names by id (authors of turns and checkpoints)."""
    if not user_ids:
        return {}
    found = await sql.fetch_rows(
        sql.connection(),
        f"SELECT id, name FROM smriti_user WHERE id IN ({sql.marks(user_ids)})",
        list(user_ids),
    )
    return {int(user_id): str(name) for user_id, name in found}


async def account_id(name: str) -> int | None:
    """The id of the account named ``name`` (a user with a password), or None."""
    row = await _named(sql.connection(), name)
    return rows.account(row).id if row is not None else None


async def _other_enabled_admin(user_id: int, conn: Any) -> bool:
    return await _exists(
        conn,
        "SELECT 1 FROM smriti_user WHERE is_admin = ? AND disabled = ? "
        "AND password_hash IS NOT NULL AND id <> ?",
        [True, False, user_id],
    )


def _last_admin(name: str) -> InputError:
    return InputError(
        f"The account {name} is the last enabled admin: make another admin first.",
        code=ErrorCode.CONFLICT,
        field="name",
    )


@finished
async def set_disabled(name: str, disabled: bool) -> Account:
    """Disable an account (its tokens and browser sessions stop working at once;
    nothing is deleted) or enable it again. The last enabled admin stays enabled."""
    async with sql.transaction() as conn:
        row = await _named(conn, name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        account = rows.account(row)
        if disabled and account.is_admin and not await _other_enabled_admin(account.id, conn):
            raise _last_admin(account.name)
        await sql.update(conn, USER, {"disabled": disabled}, "id = ?", [account.id])
        if disabled:
            await sql.execute(conn, "DELETE FROM web_session WHERE user_id = ?", [account.id])
        return replace(account, disabled=disabled)


@finished
async def delete(name: str) -> Account:
    """Delete an account with everything that is theirs alone: their spaces, their
    sessions (in any space), tokens, browser sessions and memberships.

    Refused (CONFLICT, nothing deleted) while a space they created has other
    members, whose shared work would go with it, and for the last enabled admin.
    Turns and checkpoints they wrote in other people's spaces stay (their author
    then has no name).
    """
    async with sql.transaction() as conn:
        row = await _named(conn, name)
        if row is None:
            raise NotFound(f"No user named {name!r}.", field="name")
        account = rows.account(row)
        user_id = account.id
        if (
            account.is_admin
            and not account.disabled
            and not await _other_enabled_admin(user_id, conn)
        ):
            raise _last_admin(account.name)
        owned = await sql.fetch_rows(
            conn, "SELECT id FROM space WHERE owner_id = ? ORDER BY id", [user_id]
        )
        shared = await sql.fetch_rows(
            conn,
            "SELECT DISTINCT s.name FROM space s JOIN space_member m ON m.space_id = s.id "
            "WHERE s.owner_id = ? AND m.user_id <> ? ORDER BY s.name",
            [user_id, user_id],
        )
        if shared:
            listed = ", ".join(repr(str(found[0])) for found in shared)
            raise InputError(
                f"The account {account.name} owns spaces shared with others ({listed}): remove "
                "their members or delete those spaces first, or disable the account instead.",
                code=ErrorCode.CONFLICT,
                field="name",
            )
        for (space_id,) in owned:
            await members.detach_others(conn, int(space_id), user_id)
        await sql.execute(conn, "DELETE FROM space WHERE owner_id = ?", [user_id])
        await sql.execute(conn, "DELETE FROM smriti_user WHERE id = ?", [user_id])
        return account


@finished
async def revoke_any_token(token_id: int) -> ApiToken:
    """An admin revokes anyone's token."""
    found = await _tokens(sql.connection(), "id = ?", [token_id])
    if not found:
        raise NotFound("No such API token.", field="id")
    return await revoke_token(found[0].user_id, token_id)


# Hashes asked about in one statement, at most (SQLite allows 32766 parameters).
LIVE_CHUNK = 1000

_ENABLED_USER = "SELECT id FROM smriti_user WHERE disabled = ? AND password_hash IS NOT NULL"


async def live_token_hashes(token_hashes: set[str], now: datetime) -> set[str]:
    """Which of these tokens still work: not revoked, not expired, their user
    enabled (as ``token_owner`` decides). One query per thousand hashes."""
    return await _live(
        "SELECT token_hash FROM api_token WHERE revoked_at IS NULL "
        "AND (expires_at IS NULL OR expires_at > ?) "
        f"AND user_id IN ({_ENABLED_USER}) AND token_hash IN ({{marks}})",
        [now, False],
        token_hashes,
    )


async def live_session_hashes(session_hashes: set[str], now: datetime, idle: timedelta) -> set[str]:
    """Which of these browser sessions are still signed in: not signed out, not
    idle longer than ``idle``, their user enabled (as ``web_session_owner``
    decides). One query per thousand hashes."""
    return await _live(
        "SELECT session_hash FROM web_session WHERE last_seen_at >= ? "
        f"AND user_id IN ({_ENABLED_USER}) AND session_hash IN ({{marks}})",
        [now - idle, False],
        session_hashes,
    )


async def _live(statement: str, params: list[Any], hashes: set[str]) -> set[str]:
    found: set[str] = set()
    ordered = sorted(hashes)
    conn = sql.connection()
    for start in range(0, len(ordered), LIVE_CHUNK):
        chunk = ordered[start : start + LIVE_CHUNK]
        marks = sql.marks(chunk)
        for (value,) in await sql.fetch_rows(
            conn, statement.format(marks=marks), [*params, *chunk]
        ):
            found.add(str(value))
    return found
