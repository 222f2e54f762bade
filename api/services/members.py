"""A space's members and their roles: added, changed and removed by its owners."""

from __future__ import annotations

from api.domain.types import Member, SpaceRole
from api.errors import NotFound
from api.services import access
from api.store import accounts as account_store
from api.store import members


async def _account(name: str) -> int:
    user_id = await account_store.account_id(name.strip())
    if user_id is None:
        raise NotFound(f"No user named {name.strip()!r}.", field="userName")
    return user_id


# Each checks the caller's role first (NOT_FOUND / FORBIDDEN) and the store
# checks it again under the space's lock.


async def add(user_id: int, space_id: int, user_name: str, role: SpaceRole) -> Member:
    await access.space(user_id, space_id, SpaceRole.OWNER)
    return await members.add(space_id, await _account(user_name), role, by=user_id)


async def change(user_id: int, space_id: int, user_name: str, role: SpaceRole) -> Member:
    await access.space(user_id, space_id, SpaceRole.OWNER)
    return await members.change(space_id, await _account(user_name), role, by=user_id)


async def remove(user_id: int, space_id: int, user_name: str) -> None:
    """Remove a member; their sessions in the space are detached and kept."""
    await access.space(user_id, space_id, SpaceRole.OWNER)
    await members.remove(space_id, await _account(user_name), by=user_id)
