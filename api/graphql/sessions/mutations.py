"""Session mutations: create, rename, attach/detach, mount/unmount, fork, delete."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.types import MemoryScope as DomainScope
from ...domain.types import Visibility
from ...domain.validation import validate_title
from ...services import sessions as session_service
from ..context import Info
from ..core import ids
from ..core.chat_settings import ChatSettingsInput
from ..core.enums import MemoryScope, SessionVisibility
from ..core.errors import MutationError
from .types import Session


@strawberry.type(description="A reason `createSession` did not succeed.")
class CreateSessionError(MutationError):
    pass


@strawberry.type(description="A reason `updateSession` did not succeed.")
class UpdateSessionError(MutationError):
    pass


@strawberry.type(description="A reason `attachSpace` did not succeed.")
class AttachSpaceError(MutationError):
    pass


@strawberry.type(description="A reason `detachSpace` did not succeed.")
class DetachSpaceError(MutationError):
    pass


@strawberry.type(description="A reason `mountCheckpoint` did not succeed.")
class MountCheckpointError(MutationError):
    pass


@strawberry.type(description="A reason `unmountCheckpoint` did not succeed.")
class UnmountCheckpointError(MutationError):
    pass


@strawberry.type(description="A reason `forkSession` did not succeed.")
class ForkSessionError(MutationError):
    pass


@strawberry.type(description="A reason `deleteSession` did not succeed.")
class DeleteSessionError(MutationError):
    pass


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
    pinned: bool | None = strawberry.field(
        default=None,
        description="Pin (listed first, the most recently pinned first) or unpin.",
    )
    archived: bool | None = strawberry.field(
        default=None,
        description="Archive (left out of `sessions` unless asked for; still searched and "
        "exported) or unarchive.",
    )
    tags: list[str] | None = strawberry.field(
        default=None,
        description="The session's tags, replacing them all ([] removes them): each trimmed, "
        "inner whitespace one space, at most 40 characters; tags equal but for case are one "
        "(the first spelling kept); at most 20.",
    )
    settings: ChatSettingsInput | None = strawberry.field(
        default=None,
        description="The session's own instructions and parameters, replaced whole "
        "(a field not set takes the space's default; `{}` clears them). maxOutputTokens "
        "is checked against the session's model (the new one, with `model`).",
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
    description="Start a new session on a new branch from a checkpoint (a viewer of the "
    "space gets a private session of theirs in no space, with the checkpoint mounted, "
    "and no branch) — or, with atTurnId, a branch of a conversation at one of its turns."
)
class ForkSessionInput:
    checkpoint_id: strawberry.ID | None = strawberry.field(
        default=None, description="The checkpoint to fork from (or give atTurnId)."
    )
    at_turn_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="Instead of a checkpoint: a turn of a session of yours. The new session "
        "is a branch of that conversation holding copies of its turns up to and including "
        "this one (same space, checkpoint branch, model and mount; the old one is kept). "
        "Give exactly one of checkpointId and atTurnId; no branchName with atTurnId.",
    )
    branch_name: str | None = strawberry.field(
        default=None,
        description='A new, unique branch name ("main" is refused); omitted: fork-<hash>. '
        "A viewer leaves it out (FORBIDDEN otherwise).",
    )
    title: str | None = strawberry.field(default=None, description="The new session's title.")


@strawberry.input(description="The session to delete, with its turns.")
class DeleteSessionInput:
    id: strawberry.ID = strawberry.field(description="The session.")


@strawberry.type(description="The result of createSession.")
class CreateSessionPayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[CreateSessionError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of updateSession.")
class UpdateSessionPayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[UpdateSessionError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of attachSpace.")
class AttachSpacePayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[AttachSpaceError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of detachSpace.")
class DetachSpacePayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[DetachSpaceError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of mountCheckpoint.")
class MountCheckpointPayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[MountCheckpointError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of unmountCheckpoint.")
class UnmountCheckpointPayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[UnmountCheckpointError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of forkSession.")
class ForkSessionPayload:
    session: Session | None = strawberry.field(description="The session as it is now.")
    errors: list[ForkSessionError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of deleteSession.")
class DeleteSessionPayload:
    deleted_id: strawberry.ID | None = strawberry.field(description="The id that was deleted.")
    errors: list[DeleteSessionError] = strawberry.field(description="Why it failed, if it did.")


def _session_id(value: str, field: str = "sessionId") -> int:
    return ids.decode(value, "Session", field=field)


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
        created = await session_service.create_session(
            info.context.services,
            info.context.actor,
            title=input.title,
            space_id=ids.decode_optional(input.space_id, "Space", field="spaceId"),
            memory_scope=_scope(input.memory_scope),
            model=input.model,
        )
        return CreateSessionPayload(session=Session.from_domain(created), errors=[])

    @strawberry.mutation(
        description="Rename a session, change its scope, default model or settings "
        "(instructions, parameters), share it with its space, pin, archive or tag it "
        "(its author only)."
    )
    async def update_session(
        self,
        info: Info,
        input: Annotated[
            UpdateSessionInput, strawberry.argument(description="The updateSession arguments.")
        ],
    ) -> UpdateSessionPayload:
        updated = await session_service.update_session(
            info.context.services,
            info.context.actor,
            _session_id(input.id, "id"),
            title=input.title,
            memory_scope=_scope(input.memory_scope),
            model=input.model,
            visibility=Visibility(input.visibility.name) if input.visibility else None,
            pinned=input.pinned,
            archived=input.archived,
            tags=input.tags,
            settings=input.settings.to_domain() if input.settings is not None else None,
        )
        return UpdateSessionPayload(session=Session.from_domain(updated), errors=[])

    @strawberry.mutation(description="Attach a session to a space (HEAD mode on main).")
    async def attach_space(
        self,
        info: Info,
        input: Annotated[
            AttachSpaceInput, strawberry.argument(description="The attachSpace arguments.")
        ],
    ) -> AttachSpacePayload:
        updated = await session_service.attach_space(
            info.context.services,
            info.context.actor,
            _session_id(input.session_id),
            ids.decode(input.space_id, "Space", field="spaceId"),
            _scope(input.memory_scope),
        )
        return AttachSpacePayload(session=Session.from_domain(updated), errors=[])

    @strawberry.mutation(description="Detach a session from its space (FRESH mode).")
    async def detach_space(
        self,
        info: Info,
        input: Annotated[
            DetachSpaceInput, strawberry.argument(description="The detachSpace arguments.")
        ],
    ) -> DetachSpacePayload:
        updated = await session_service.detach_space(
            info.context.actor, _session_id(input.session_id)
        )
        return DetachSpacePayload(session=Session.from_domain(updated), errors=[])

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
        updated = await session_service.mount(
            info.context.actor,
            _session_id(input.session_id),
            ids.decode(input.checkpoint_id, "Checkpoint", field="checkpointId"),
        )
        return MountCheckpointPayload(session=Session.from_domain(updated), errors=[])

    @strawberry.mutation(description="Unmount the session's checkpoint (back to HEAD mode).")
    async def unmount_checkpoint(
        self,
        info: Info,
        input: Annotated[
            UnmountCheckpointInput,
            strawberry.argument(description="The unmountCheckpoint arguments."),
        ],
    ) -> UnmountCheckpointPayload:
        updated = await session_service.unmount(info.context.actor, _session_id(input.session_id))
        return UnmountCheckpointPayload(session=Session.from_domain(updated), errors=[])

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
        created = await session_service.fork_either(
            info.context.services,
            info.context.actor,
            checkpoint_id=ids.decode_optional(
                input.checkpoint_id, "Checkpoint", field="checkpointId"
            ),
            at_turn_id=ids.decode_optional(input.at_turn_id, "Turn", field="atTurnId"),
            branch_name=input.branch_name,
            title=validate_title(input.title) if input.title else None,
        )
        return ForkSessionPayload(session=Session.from_domain(created), errors=[])

    @strawberry.mutation(description="Delete a session and its turns (its author only).")
    async def delete_session(
        self,
        info: Info,
        input: Annotated[
            DeleteSessionInput, strawberry.argument(description="The deleteSession arguments.")
        ],
    ) -> DeleteSessionPayload:
        await session_service.delete_session(info.context.actor, _session_id(input.id, "id"))
        return DeleteSessionPayload(deleted_id=input.id, errors=[])
