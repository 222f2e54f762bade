"""createSpace, updateSpace, deleteSpace."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.validation import DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS
from ...services import spaces as space_service
from ..context import Info
from ..core import ids
from ..core.chat_settings import ChatSettingsInput
from ..core.errors import MutationError
from .types import Space


@strawberry.type(description="A reason `createSpace` did not succeed.")
class CreateSpaceError(MutationError):
    pass


@strawberry.type(description="A reason `updateSpace` did not succeed.")
class UpdateSpaceError(MutationError):
    pass


@strawberry.type(description="A reason `deleteSpace` did not succeed.")
class DeleteSpaceError(MutationError):
    pass


@strawberry.input(description="A new space.")
class CreateSpaceInput:
    name: str = strawberry.field(description=f"Its name (1 to {NAME_MAX_CHARS} characters).")
    description: str | None = strawberry.field(
        default=None, description=f"What it is for (at most {DESCRIPTION_MAX_CHARS} characters)."
    )


@strawberry.type(description="The result of createSpace.")
class CreateSpacePayload:
    space: Space | None = strawberry.field(description="The new space.")
    errors: list[CreateSpaceError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.input(description="New values for a space; omitted fields stay as they are.")
class UpdateSpaceInput:
    id: strawberry.ID = strawberry.field(description="The space.")
    name: str | None = strawberry.field(
        default=None, description=f"A new name (1 to {NAME_MAX_CHARS} characters)."
    )
    description: str | None = strawberry.field(
        default=None,
        description=f"A new description (at most {DESCRIPTION_MAX_CHARS} characters).",
    )
    settings: ChatSettingsInput | None = strawberry.field(
        default=None,
        description="Default instructions and parameters for the space's sessions, "
        "replaced whole (`{}` clears them); a session's own value wins field by field.",
    )


@strawberry.type(description="The result of updateSpace.")
class UpdateSpacePayload:
    space: Space | None = strawberry.field(description="The space as it is now.")
    errors: list[UpdateSpaceError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.input(description="The space to delete, with its sessions, turns and checkpoints.")
class DeleteSpaceInput:
    id: strawberry.ID = strawberry.field(description="The space.")


@strawberry.type(description="The result of deleteSpace.")
class DeleteSpacePayload:
    deleted_id: strawberry.ID | None = strawberry.field(description="The id that was deleted.")
    errors: list[DeleteSpaceError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class SpaceMutation:
    @strawberry.mutation(description="Create a space.")
    async def create_space(
        self,
        info: Info,
        input: Annotated[
            CreateSpaceInput, strawberry.argument(description="The createSpace arguments.")
        ],
    ) -> CreateSpacePayload:
        space = await space_service.create_space(info.context.actor, input.name, input.description)
        return CreateSpacePayload(space=Space.from_domain(space), errors=[])

    @strawberry.mutation(description="Rename a space or change its description (its owners only).")
    async def update_space(
        self,
        info: Info,
        input: Annotated[
            UpdateSpaceInput, strawberry.argument(description="The updateSpace arguments.")
        ],
    ) -> UpdateSpacePayload:
        space = await space_service.update_space(
            info.context.actor,
            ids.decode(input.id, "Space", field="id"),
            name=input.name,
            description=input.description,
            settings=input.settings.to_domain() if input.settings is not None else None,
        )
        return UpdateSpacePayload(space=Space.from_domain(space), errors=[])

    @strawberry.mutation(
        description="Delete a space with its lineage and your sessions in it (its owners "
        "only); other members' sessions in it are detached and kept."
    )
    async def delete_space(
        self,
        info: Info,
        input: Annotated[
            DeleteSpaceInput, strawberry.argument(description="The deleteSpace arguments.")
        ],
    ) -> DeleteSpacePayload:
        await space_service.delete_space(
            info.context.actor, ids.decode(input.id, "Space", field="id")
        )
        return DeleteSpacePayload(deleted_id=input.id, errors=[])
