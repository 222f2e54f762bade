"""A space's use cases: create, update (rename, describe) and delete."""

from __future__ import annotations

from ..domain import chat_settings
from ..domain.accounts import Actor
from ..domain.types import ChatSettings, Space
from ..domain.validation import validate_description, validate_name
from ..store import spaces
from . import access, policy


async def create_space(actor: Actor, name: str, description: str | None) -> Space:
    policy.allow(actor, "createSpace")
    description = validate_description(description) if description is not None else ""
    return await spaces.create(actor.user_id, validate_name(name), description)


async def update_space(
    actor: Actor,
    space_id: int,
    *,
    name: str | None,
    description: str | None,
    settings: ChatSettings | None = None,
) -> Space:
    """Rename or describe a space, or set its sessions' default settings
    (replaced whole; a session's own value wins field by field)."""
    rule = policy.allow(actor, "updateSpace")
    assert rule.role is not None
    await access.space(actor, space_id, rule.role, field="id")
    if settings is not None:
        settings = chat_settings.validate(
            settings, output_limit=chat_settings.ANY_MODEL_OUTPUT_LIMIT
        )
    return await spaces.update(
        actor.user_id,
        space_id,
        name=validate_name(name) if name is not None else None,
        description=validate_description(description) if description is not None else None,
        roles=policy.roles_allowed(rule.role),
        settings=settings,
    )


async def delete_space(actor: Actor, space_id: int) -> None:
    """Delete a space. Other members' sessions in it are detached and kept;
    the deleting owner's go with the space."""
    rule = policy.allow(actor, "deleteSpace")
    assert rule.role is not None
    await access.space(actor, space_id, rule.role, field="id")
    await spaces.delete(actor.user_id, space_id, roles=policy.roles_allowed(rule.role))
