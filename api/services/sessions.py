"""A session's use cases: create, rename and share, attach and detach a space, mount
and unmount a checkpoint, fork from a checkpoint, delete."""

from __future__ import annotations

from collections.abc import Sequence

from ..domain import chat_settings
from ..domain.accounts import Actor
from ..domain.tags import validate_tags
from ..domain.types import (
    MAIN_BRANCH,
    ChatSettings,
    Checkpoint,
    MemoryScope,
    Session,
    Visibility,
)
from ..domain.validation import (
    fork_title,
    validate_branch_name,
    validate_title,
)
from ..errors import ErrorCode, Forbidden, InputError
from ..store import checkpoints, sessions
from . import access, branching, policy
from .base import Services


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
    pinned: bool | None = None,
    archived: bool | None = None,
    tags: Sequence[str] | None = None,
    settings: ChatSettings | None = None,
) -> Session:
    """Change what is given; pin, archive and tag as the author (the rule of
    updateSession: a member reading a shared session may not). ``settings``
    replace the session's own whole (fields not set: its space's, if any);
    their maxOutputTokens is checked against the session's model (the new one
    when ``model`` is given too)."""
    rule = policy.allow(actor, "updateSession")
    session = await access.session(actor, session_id, rule, field="id")
    registry = services.registry
    ref = registry.resolve(model, require_available=False) if model is not None else None
    if ref is not None:
        await access.check_model(actor, ref.name)
    # Checked before anything is written.
    cleaned = validate_tags(tags) if tags is not None else None
    checked_title = validate_title(title) if title is not None else None
    if settings is not None:
        target = ref or registry.resolve(
            f"{session.active_provider}/{session.active_model}", require_available=False
        )
        settings = chat_settings.validate(settings, output_limit=registry.output_limit(target))
    if visibility is not None and visibility is not session.visibility:
        session = await _share(actor, session, visibility)
    if pinned is not None or archived is not None or cleaned is not None:
        session = await sessions.organise(
            session.owner_id, session.id, pinned=pinned, archived=archived, tags=cleaned
        )
    if title is None and memory_scope is None and ref is None and settings is None:
        return session
    return await sessions.configure(
        session.owner_id,
        session.id,
        title=checked_title,
        memory_scope=memory_scope,
        provider=ref.provider if ref else None,
        model=ref.model if ref else None,
        settings=settings,
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


async def mount(actor: Actor, session_id: int, checkpoint_id: int) -> Session:
    """Mount a checkpoint the author may read. A session in a space mounts that
    space's checkpoints; a session in no space may mount any they can read
    (how a viewer works from a space's lineage: mounting reads the space, it
    does not write it)."""
    rule = policy.allow(actor, "mountCheckpoint")
    session = await access.session(actor, session_id, rule)
    checkpoint, _ = await access.checkpoint(actor, checkpoint_id)
    if session.space_id is not None and checkpoint.space_id != session.space_id:
        raise InputError(
            "That checkpoint belongs to another space.",
            code=ErrorCode.WRONG_SPACE,
            field="checkpointId",
        )
    return await sessions.mount(session.owner_id, session.id, checkpoint.id)


async def fork(
    services: Services,
    actor: Actor,
    checkpoint_id: int,
    *,
    branch_name: str | None,
    title: str | None,
) -> Session:
    """A new session of the actor's continuing from a checkpoint.

    An editor or owner forks inside the space: a new branch, the session on it.
    A viewer cannot write the space (a branch is part of its lineage), so a
    viewer's fork is a private session of theirs in no space with the
    checkpoint mounted: it reads the lineage and adds nothing to it."""
    policy.allow(actor, "forkSession")
    checkpoint, role = await access.checkpoint(actor, checkpoint_id)
    registry = services.registry
    default = registry.resolve(await access.default_model(registry, actor), require_available=False)
    if not role.allows(policy.BRANCH_IN_SPACE):
        if branch_name is not None:
            raise Forbidden(
                "A viewer's fork is a session of theirs outside the space: it creates no "
                "branch (leave branchName out).",
                field="branchName",
            )
        return await sessions.create(
            actor.user_id,
            title=title or fork_title(checkpoint.content.title),
            space_id=None,
            memory_scope=services.settings.default_memory_scope,
            provider=default.provider,
            model=default.model,
            seeded_from_id=checkpoint.id,
            forked_from_id=checkpoint.id,
            mount_checkpoint_id=checkpoint.id,
        )
    if branch_name is None:
        branch_name = await _free_branch_name(checkpoint)
    else:
        branch_name = validate_branch_name(branch_name)
    return await sessions.create_fork(
        actor.user_id,
        checkpoint=checkpoint,
        branch_name=branch_name,
        title=title or fork_title(checkpoint.content.title),
        memory_scope=services.settings.default_memory_scope,
        provider=default.provider,
        model=default.model,
    )


async def fork_either(
    services: Services,
    actor: Actor,
    *,
    checkpoint_id: int | None,
    at_turn_id: int | None,
    branch_name: str | None,
    title: str | None,
) -> Session:
    """forkSession: from a checkpoint (``fork``) or at a turn of a conversation
    (``branching.fork_at_turn``); exactly one of them."""
    policy.allow(actor, "forkSession")
    if (checkpoint_id is None) == (at_turn_id is None):
        raise InputError(
            "Fork from a checkpoint (checkpointId) or at a turn (atTurnId): give one of them.",
            field="atTurnId" if at_turn_id is not None else "checkpointId",
        )
    if at_turn_id is not None:
        if branch_name is not None:
            raise InputError(
                "A branch of a conversation stays on its session's checkpoint branch: "
                "leave branchName out.",
                field="branchName",
            )
        return await branching.fork_at_turn(actor, at_turn_id, title=title)
    assert checkpoint_id is not None
    return await fork(services, actor, checkpoint_id, branch_name=branch_name, title=title)


async def _free_branch_name(checkpoint: Checkpoint) -> str:
    base = f"fork-{checkpoint.short_hash}"
    name, n = base, 1
    while await checkpoints.branch_exists(checkpoint.space_id, name) or name == MAIN_BRANCH:
        n += 1
        name = f"{base}-{n}"
    return name
