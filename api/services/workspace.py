"""Spaces and sessions: creating, attaching, renaming, deleting."""

from __future__ import annotations

from api.domain.types import MAIN_BRANCH, MemoryScope, Session, Space
from api.domain.validation import validate_name, validate_title
from api.services.base import Services
from api.store import checkpoints, sessions, spaces


async def create_space(owner_id: int, name: str, description: str | None) -> Space:
    return await spaces.create(owner_id, validate_name(name), description or "")


async def update_space(
    owner_id: int, space_id: int, *, name: str | None, description: str | None
) -> Space:
    return await spaces.update(
        owner_id,
        space_id,
        name=validate_name(name) if name is not None else None,
        description=description,
    )


async def create_session(
    services: Services,
    owner_id: int,
    *,
    title: str | None,
    space_id: int | None,
    memory_scope: MemoryScope | None,
    model: str | None,
) -> Session:
    registry = services.registry
    ref = registry.resolve(model or registry.chat_default, require_available=False)
    seeded_from = None
    if space_id is not None:
        await spaces.get(owner_id, space_id)
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
    await spaces.get(session.owner_id, space_id)
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
) -> Session:
    ref = services.registry.resolve(model, require_available=False) if model is not None else None
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
