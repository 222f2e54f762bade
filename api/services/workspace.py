"""Spaces and sessions: creating, attaching, renaming, deleting."""

from __future__ import annotations

from api.domain.types import MAIN_BRANCH, MemoryScope, Session, Space, SpaceRole, Visibility
from api.domain.validation import validate_name, validate_title
from api.errors import ErrorCode, InputError
from api.services import access
from api.services.base import Services
from api.store import checkpoints, sessions, spaces


async def create_space(owner_id: int, name: str, description: str | None) -> Space:
    return await spaces.create(owner_id, validate_name(name), description or "")


async def update_space(
    user_id: int, space_id: int, *, name: str | None, description: str | None
) -> Space:
    """Rename or describe a space: its owners only."""
    await access.space(user_id, space_id, SpaceRole.OWNER, field="id")
    return await spaces.update(
        user_id,
        space_id,
        name=validate_name(name) if name is not None else None,
        description=description,
    )


async def delete_space(user_id: int, space_id: int) -> None:
    """Delete a space: its owners only. Other members' sessions in it are
    detached and kept; the deleting owner's go with the space."""
    await access.space(user_id, space_id, SpaceRole.OWNER, field="id")
    await spaces.delete(user_id, space_id)


async def create_session(
    services: Services,
    owner_id: int,
    *,
    title: str | None,
    space_id: int | None,
    memory_scope: MemoryScope | None,
    model: str | None,
    is_admin: bool,
) -> Session:
    """A session; attached to a space, for its editors and owners."""
    registry = services.registry
    if model is not None:
        ref = registry.resolve(model, require_available=False)
        await access.check_model(ref.name, is_admin=is_admin)
    else:
        default = await access.default_model(registry, is_admin=is_admin)
        ref = registry.resolve(default, require_available=False)
    seeded_from = None
    if space_id is not None:
        await access.space(owner_id, space_id, SpaceRole.EDITOR)
        head = await checkpoints.head(space_id, MAIN_BRANCH)
        seeded_from = head.id if head else None
    return await sessions.create(
        owner_id,
        title=validate_title(title) if title else "",
        space_id=space_id,
        memory_scope=memory_scope or services.settings.default_memory_scope,
        provider=ref.provider,
        model=ref.model,
        seeded_from_id=seeded_from,
    )


async def attach_space(
    services: Services, session: Session, space_id: int, memory_scope: MemoryScope | None
) -> Session:
    await access.space(session.owner_id, space_id, SpaceRole.EDITOR)
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


async def detach_space(session: Session) -> Session:
    return await sessions.detach(session.owner_id, session.id)


async def unmount(session: Session) -> Session:
    return await sessions.unmount(session.owner_id, session.id)


async def update_session(
    services: Services,
    session: Session,
    *,
    title: str | None,
    memory_scope: MemoryScope | None,
    model: str | None,
    visibility: Visibility | None = None,
    is_admin: bool,
) -> Session:
    ref = services.registry.resolve(model, require_available=False) if model is not None else None
    if ref is not None:
        await access.check_model(ref.name, is_admin=is_admin)
    if visibility is not None and visibility is not session.visibility:
        session = await _share(session, visibility)
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


async def _share(session: Session, visibility: Visibility) -> Session:
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
        await access.space(session.owner_id, session.space_id, SpaceRole.EDITOR, field="visibility")
    return await sessions.set_visibility(session.owner_id, session.id, visibility)
