"""A space's members and their roles: added, changed and removed as the policy allows."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ..domain.accounts import Actor
from ..domain.types import Member, SpaceRole
from ..errors import NotFound
from ..store import accounts as account_store
from ..store import members
from . import access, policy


async def _account(name: str) -> int:
    user_id = await account_store.account_id(name.strip())
    if user_id is None:
        raise NotFound(f"No user named {name.strip()!r}.", field="userName")
    return user_id


# Each checks the actor's role first (NOT_FOUND / FORBIDDEN) and the store
# asks the policy again under the space's lock.


def _role_check(rule: policy.Rule) -> Callable[[SpaceRole], None]:
    return partial(policy.check_role, needs=rule.role, field="spaceId")


async def add(actor: Actor, space_id: int, user_name: str, role: SpaceRole) -> Member:
    rule = policy.allow(actor, "addSpaceMember")
    await access.space(actor, space_id, rule.role)
    return await members.add(
        space_id, await _account(user_name), role, by=actor.user_id, check_role=_role_check(rule)
    )


async def change(actor: Actor, space_id: int, user_name: str, role: SpaceRole) -> Member:
    rule = policy.allow(actor, "updateSpaceMember")
    await access.space(actor, space_id, rule.role)
    return await members.change(
        space_id, await _account(user_name), role, by=actor.user_id, check_role=_role_check(rule)
    )


async def remove(actor: Actor, space_id: int, user_name: str) -> None:
    """Remove a member; their sessions in the space are detached and kept."""
    rule = policy.allow(actor, "removeSpaceMember")
    await access.space(actor, space_id, rule.role)
    await members.remove(
        space_id, await _account(user_name), by=actor.user_id, check_role=_role_check(rule)
    )
