"""Session mutations: create, rename, attach/detach, mount/unmount, fork, delete."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from api.domain.types import MemoryScope as DomainScope
from api.domain.types import Session as DomainSession
from api.domain.types import Visibility
from api.domain.validation import validate_title
from api.graphql import ids
from api.graphql.context import Info
from api.graphql.mutations.base import attempt
from api.graphql.types.enums import MemoryScope, SessionVisibility
from api.graphql.types.errors import error_type
from api.graphql.types.session import Session
from api.services import access, workspace
from api.services import checkpoints as checkpoint_service
from api.store import sessions

CreateSessionError = error_type("CreateSessionError", "createSession")
UpdateSessionError = error_type("UpdateSessionError", "updateSession")
AttachSpaceError = error_type("AttachSpaceError", "attachSpace")
DetachSpaceError = error_type("DetachSpaceError", "detachSpace")
MountCheckpointError = error_type("MountCheckpointError", "mountCheckpoint")
UnmountCheckpointError = error_type("UnmountCheckpointError", "unmountCheckpoint")
ForkSessionError = error_type("ForkSessionError", "forkSession")
DeleteSessionError = error_type("DeleteSessionError", "deleteSession")


def _scope(value: MemoryScope | None) -> DomainScope | None:
    return DomainScope(value.name) if value is not None else None


@strawberry.input(description="A new session.")
class CreateSessionInput:
    title: str | None = strawberry.field(
        default=None, description="A title; omitted, one is written after the first reply."
    )
    space_id: strawberry.ID | None = strawberry.field(
        default=None, description="Attach to this space (omitted: FRESH mode)."
    )
    memory_scope: MemoryScope | None = strawberry.field(
        default=None, description="How many checkpoints the model sees."
    )
    model: str | None = strawberry.field(
        default=None, description='The default model, "provider/model".'
    )


@strawberry.input(description="New values for a session; omitted fields stay as they are.")
class UpdateSessionInput:
    id: strawberry.ID = strawberry.field(description="The session.")
    title: str | None = strawberry.field(default=None, description="A new title.")
    memory_scope: MemoryScope | None = strawberry.field(
        default=None,
        description="A new memory scope, changed in place: the space, branch and mount stay; "
        "the next message sees that many checkpoints.",
    )
    model: str | None = strawberry.field(default=None, description="A new default model.")
    visibility: SessionVisibility | None = strawberry.field(
        default=None,
        description="Share the session with its space's members (SPACE; it must be attached "
        "to a space you may edit) or make it private again (PRIVATE). Attaching it to "
        "another space or detaching it makes it private.",
    )


@strawberry.input(description="Attach a session to a space.")
class AttachSpaceInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    space_id: strawberry.ID = strawberry.field(description="The space.")
    memory_scope: MemoryScope | None = strawberry.field(
        default=None, description="How many checkpoints the model sees."
    )


@strawberry.input(description="Detach a session from its space (back to FRESH).")
class DetachSpaceInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")


@strawberry.input(
    description="Mount a checkpoint: one of the session's space, or, for a session in no "
    "space, any checkpoint you may read (how a viewer works from a space's lineage)."
)
class MountCheckpointInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    checkpoint_id: strawberry.ID = strawberry.field(description="The checkpoint.")


@strawberry.input(description="Unmount the session's checkpoint (back to HEAD).")
class UnmountCheckpointInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")


@strawberry.input(
    description="Start a new session on a new branch from a checkpoint. A viewer of the "
    "space gets a private session of theirs in no space, with the checkpoint mounted, "
    "and no branch."
)
class ForkSessionInput:
    checkpoint_id: strawberry.ID = strawberry.field(description="The checkpoint to fork from.")
    branch_name: str | None = strawberry.field(
        default=None,
        description='A new, unique branch name ("main" is refused); omitted: fork-<hash>. '
        "A viewer leaves it out (FORBIDDEN otherwise).",
    )
    title: str | None = strawberry.field(default=None, description="The new session's title.")


@strawberry.input(description="The session to delete, with its turns.")
class DeleteSessionInput:
    id: strawberry.ID = strawberry.field(description="The session.")


def _payload(name: str, mutation: str, error_cls: Any) -> Any:
    cls = type(
        name,
        (),
        {
            "__annotations__": {
                "session": "Session | None",
                "errors": f"list[{error_cls.__name__}]",
            },
            "session": strawberry.field(description="The session as it is now."),
            "errors": strawberry.field(description="Why it failed, if it did."),
            "__module__": __name__,
        },
    )
    return strawberry.type(cls, description=f"The result of {mutation}.")


CreateSessionPayload = _payload("CreateSessionPayload", "createSession", CreateSessionError)
UpdateSessionPayload = _payload("UpdateSessionPayload", "updateSession", UpdateSessionError)
AttachSpacePayload = _payload("AttachSpacePayload", "attachSpace", AttachSpaceError)
DetachSpacePayload = _payload("DetachSpacePayload", "detachSpace", DetachSpaceError)
MountCheckpointPayload = _payload("MountCheckpointPayload", "mountCheckpoint", MountCheckpointError)
UnmountCheckpointPayload = _payload(
    "UnmountCheckpointPayload", "unmountCheckpoint", UnmountCheckpointError
)
ForkSessionPayload = _payload("ForkSessionPayload", "forkSession", ForkSessionError)


@strawberry.type(description="The result of deleteSession.")
class DeleteSessionPayload:
    deleted_id: strawberry.ID | None = strawberry.field(description="The id that was deleted.")
    errors: list[DeleteSessionError] = strawberry.field(description="Why it failed, if it did.")


async def _session(info: Info, value: str, field: str = "sessionId") -> DomainSession:
    """A session the caller wrote (FORBIDDEN for one they only read)."""
    return await access.own_session(
        info.context.owner_id, ids.decode(value, "Session", field=field), field=field
    )


@strawberry.type
class SessionMutation:
    @strawberry.mutation(description="Create a session, optionally attached to a space.")
    async def create_session(
        self,
        info: Info,
        input: Annotated[
            CreateSessionInput, strawberry.argument(description="The createSession arguments.")
        ],
    ) -> CreateSessionPayload:
        async def work() -> Session:
            space_id = ids.decode_optional(input.space_id, "Space", field="spaceId")
            created = await workspace.create_session(
                info.context.services,
                info.context.owner_id,
                title=input.title,
                space_id=space_id,
                memory_scope=_scope(input.memory_scope),
                model=input.model,
                is_admin=info.context.is_admin,
            )
            return Session.from_domain(created)

        session, errors = await attempt(work(), CreateSessionError)
        return CreateSessionPayload(session=session, errors=errors)

    @strawberry.mutation(
        description="Rename a session, change its scope or default model, or share it with "
        "its space (its author only)."
    )
    async def update_session(
        self,
        info: Info,
        input: Annotated[
            UpdateSessionInput, strawberry.argument(description="The updateSession arguments.")
        ],
    ) -> UpdateSessionPayload:
        async def work() -> Session:
            session = await _session(info, input.id, "id")
            updated = await workspace.update_session(
                info.context.services,
                session,
                title=input.title,
                memory_scope=_scope(input.memory_scope),
                model=input.model,
                visibility=Visibility(input.visibility.name) if input.visibility else None,
                is_admin=info.context.is_admin,
            )
            return Session.from_domain(updated)

        session, errors = await attempt(work(), UpdateSessionError)
        return UpdateSessionPayload(session=session, errors=errors)

    @strawberry.mutation(description="Attach a session to a space (HEAD mode on main).")
    async def attach_space(
        self,
        info: Info,
        input: Annotated[
            AttachSpaceInput, strawberry.argument(description="The attachSpace arguments.")
        ],
    ) -> AttachSpacePayload:
        async def work() -> Session:
            session = await _session(info, input.session_id)
            space_id = ids.decode(input.space_id, "Space", field="spaceId")
            updated = await workspace.attach_space(
                info.context.services,
                session,
                space_id,
                _scope(input.memory_scope),
            )
            return Session.from_domain(updated)

        session, errors = await attempt(work(), AttachSpaceError)
        return AttachSpacePayload(session=session, errors=errors)

    @strawberry.mutation(description="Detach a session from its space (FRESH mode).")
    async def detach_space(
        self,
        info: Info,
        input: Annotated[
            DetachSpaceInput, strawberry.argument(description="The detachSpace arguments.")
        ],
    ) -> DetachSpacePayload:
        async def work() -> Session:
            session = await _session(info, input.session_id)
            return Session.from_domain(await workspace.detach_space(session))

        session, errors = await attempt(work(), DetachSpaceError)
        return DetachSpacePayload(session=session, errors=errors)

    @strawberry.mutation(
        description="Mount a checkpoint: the server records the boundary (the session's "
        "current lastSequenceNumber); only later turns reach the model."
    )
    async def mount_checkpoint(
        self,
        info: Info,
        input: Annotated[
            MountCheckpointInput, strawberry.argument(description="The mountCheckpoint arguments.")
        ],
    ) -> MountCheckpointPayload:
        async def work() -> Session:
            session = await _session(info, input.session_id)
            checkpoint_id = ids.decode(input.checkpoint_id, "Checkpoint", field="checkpointId")
            updated = await checkpoint_service.mount(
                info.context.services,
                session,
                checkpoint_id,
            )
            return Session.from_domain(updated)

        session, errors = await attempt(work(), MountCheckpointError)
        return MountCheckpointPayload(session=session, errors=errors)

    @strawberry.mutation(description="Unmount the session's checkpoint (back to HEAD mode).")
    async def unmount_checkpoint(
        self,
        info: Info,
        input: Annotated[
            UnmountCheckpointInput,
            strawberry.argument(description="The unmountCheckpoint arguments."),
        ],
    ) -> UnmountCheckpointPayload:
        async def work() -> Session:
            session = await _session(info, input.session_id)
            return Session.from_domain(await workspace.unmount(session))

        session, errors = await attempt(work(), UnmountCheckpointError)
        return UnmountCheckpointPayload(session=session, errors=errors)

    @strawberry.mutation(
        description="Fork: a new session on a new branch starting at a checkpoint."
    )
    async def fork_session(
        self,
        info: Info,
        input: Annotated[
            ForkSessionInput, strawberry.argument(description="The forkSession arguments.")
        ],
    ) -> ForkSessionPayload:
        async def work() -> Session:
            checkpoint_id = ids.decode(input.checkpoint_id, "Checkpoint", field="checkpointId")
            created = await checkpoint_service.fork(
                info.context.services,
                info.context.owner_id,
                checkpoint_id,
                branch_name=input.branch_name,
                title=validate_title(input.title) if input.title else None,
                is_admin=info.context.is_admin,
            )
            return Session.from_domain(created)

        session, errors = await attempt(work(), ForkSessionError)
        return ForkSessionPayload(session=session, errors=errors)

    @strawberry.mutation(description="Delete a session and its turns (its author only).")
    async def delete_session(
        self,
        info: Info,
        input: Annotated[
            DeleteSessionInput, strawberry.argument(description="The deleteSession arguments.")
        ],
    ) -> DeleteSessionPayload:
        async def work() -> strawberry.ID:
            session = await _session(info, input.id, "id")
            await sessions.delete(info.context.owner_id, session.id)
            return input.id

        deleted, errors = await attempt(work(), DeleteSessionError)
        return DeleteSessionPayload(deleted_id=deleted, errors=errors)
