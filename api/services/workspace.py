"""Spaces and sessions: creating, attaching, renaming, deleting."""

from __future__ import annotations

from api.domain.accounts import Actor
from api.domain.types import MAIN_BRANCH, MemoryScope, Session, Space, Visibility
from api.domain.validation import validate_description, validate_name, validate_title
from api.errors import ErrorCode, InputError
from api.services import access, policy
from api.services.base import Services
from api.store import checkpoints, sessions, spaces


async def create_space(actor: Actor, name: str, description: str | None) -> Space:
    policy.allow(actor, "createSpace")
    description = validate_description(description) if description is not None else ""
    return await spaces.create(actor.user_id, validate_name(name), description)


async def update_space(
    actor: Actor, space_id: int, *, name: str | None, description: str | None
) -> Space:
    """Rename or describe a space."""
    rule = policy.allow(actor, "updateSpace")
    assert rule.role is not None
    await access.space(actor, space_id, rule.role, field="id")
    return await spaces.update(
        actor.user_id,
        space_id,
        name=validate_name(name) if name is not None else None,
        description=validate_description(description) if description is not None else None,
        roles=policy.roles_allowed(rule.role),
    )


async def delete_space(actor: Actor, space_id: int) -> None:
    """Delete a space. Other members' sessions in it are detached and kept;
    the deleting owner's go with the space."""
    rule = policy.allow(actor, "deleteSpace")
    assert rule.role is not None
    await access.space(actor, space_id, rule.role, field="id")
    await spaces.delete(actor.user_id, space_id, roles=policy.roles_allowed(rule.role))


async def create_session(
    services: Services,
    actor: Actor,
    *,
    title: str | None,
    space_id: int | None,
    memory_scope: MemoryScope | None,
    model: str | None,
) -> Session:
    """A session of the actor's; in a space, for the roles the policy names."""
    rule = policy.allow(actor, "createSession")
    registry = services.registry
    if model is not None:
        ref = registry.resolve(model, require_available=False)
        await access.check_model(actor, ref.name)
    else:
        default = await access.default_model(registry, actor)
        ref = registry.resolve(default, require_available=False)
    seeded_from = None
    if space_id is not None:
        await access.space(actor, space_id, rule.role)
        head = await checkpoints.head(space_id, MAIN_BRANCH)
        seeded_from = head.id if head else None
    return await sessions.create(
        actor.user_id,
        title=validate_title(title) if title else "",
        space_id=space_id,
        memory_scope=memory_scope or services.settings.default_memory_scope,
        provider=ref.provider,
        model=ref.model,
        seeded_from_id=seeded_from,
    )


async def attach_space(
    services: Services,
    actor: Actor,
    session_id: int,
    space_id: int,
    memory_scope: MemoryScope | None,
) -> Session:
    rule = policy.allow(actor, "attachSpace")
    session = await access.session(actor, session_id, rule)
    await access.space(actor, space_id, rule.role)
    if space_id == session.space_id:
        return await sessions.configure(
            session.owner_id, session.id, memory_scope=memory_scope or session.memory_scope
        )
    # A new space: its main branch, nothing mounted.
    head = await checkpoints.head(space_id, MAIN_BRANCH)
    return await sessions.move_to_space(
        session.owner_id,
        session.id,
        space_id=space_id,
        memory_scope=memory_scope or session.memory_scope,
        seeded_from_id=head.id if head else None,
    )


async def detach_space(actor: Actor, session_id: int) -> Session:
    rule = policy.allow(actor, "detachSpace")
    session = await access.session(actor, session_id, rule)
    return await sessions.detach(session.owner_id, session.id)


async def unmount(actor: Actor, session_id: int) -> Session:
    rule = policy.allow(actor, "unmountCheckpoint")
    session = await access.session(actor, session_id, rule)
    return await sessions.unmount(session.owner_id, session.id)


async def delete_session(actor: Actor, session_id: int) -> None:
    rule = policy.allow(actor, "deleteSession")
    session = await access.session(actor, session_id, rule, field="id")
    await sessions.delete(session.owner_id, session.id)


async def update_session(
    services: Services,
    actor: Actor,
    session_id: int,
    *,
    title: str | None,
    memory_scope: MemoryScope | None,
    model: str | None,
    visibility: Visibility | None = None,
) -> Session:
    rule = policy.allow(actor, "updateSession")
    session = await access.session(actor, session_id, rule, field="id")
    ref = services.registry.resolve(model, require_available=False) if model is not None else None
    if ref is not None:
        await access.check_model(actor, ref.name)
    if visibility is not None and visibility is not session.visibility:
        session = await _share(actor, session, visibility)
    if title is None and memory_scope is None and ref is None:
        return session
    return await sessions.configure(
        session.owner_id,
        session.id,
        title=validate_title(title) if title is not None else None,
        memory_scope=memory_scope,
        provider=ref.provider if ref else None,
        model=ref.model if ref else None,
    )


async def _share(actor: Actor, session: Session, visibility: Visibility) -> Session:
    """Share a session with its space's members, or make it private again.

    Sharing needs a space the author may write (an editor or an owner):
    a session in no space has no one to share with."""
    if visibility is Visibility.SPACE:
        if session.space_id is None:
            raise InputError(
                "Attach the session to a space before sharing it with the space.",
                code=ErrorCode.NO_SPACE,
                field="visibility",
            )
        await access.space(actor, session.space_id, policy.SHARE_SESSION, field="visibility")
    return await sessions.set_visibility(session.owner_id, session.id, visibility)
