"""addSpaceMember, updateSpaceMember, removeSpaceMember (a space's owners only)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...domain.types import SpaceRole as DomainRole
from ...services import members
from ..context import Info
from ..core import ids
from ..core.enums import SpaceRole
from ..core.errors import MutationError
from ..spaces.types import Space
from .types import SpaceMember


@strawberry.type(description="A reason `addSpaceMember` did not succeed.")
class AddSpaceMemberError(MutationError):
    pass


@strawberry.type(description="A reason `updateSpaceMember` did not succeed.")
class UpdateSpaceMemberError(MutationError):
    pass


@strawberry.type(description="A reason `removeSpaceMember` did not succeed.")
class RemoveSpaceMemberError(MutationError):
    pass


@strawberry.input(description="A user to add to a space, with their role.")
class AddSpaceMemberInput:
    space_id: strawberry.ID = strawberry.field(description="The space.")
    user_name: str = strawberry.field(description="The user's name (an account).")
    role: SpaceRole = strawberry.field(description="What they may do in the space.")


@strawberry.input(description="A member's new role.")
class UpdateSpaceMemberInput:
    space_id: strawberry.ID = strawberry.field(description="The space.")
    user_name: str = strawberry.field(description="The member's user name.")
    role: SpaceRole = strawberry.field(description="Their new role.")


@strawberry.input(description="A member to remove from a space.")
class RemoveSpaceMemberInput:
    space_id: strawberry.ID = strawberry.field(description="The space.")
    user_name: str = strawberry.field(description="The member's user name.")


@strawberry.type(description="The result of addSpaceMember.")
class AddSpaceMemberPayload:
    member: SpaceMember | None = strawberry.field(description="The new member.")
    space: Space | None = strawberry.field(description="The space, with its members.")
    errors: list[AddSpaceMemberError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of updateSpaceMember.")
class UpdateSpaceMemberPayload:
    member: SpaceMember | None = strawberry.field(description="The member with their new role.")
    space: Space | None = strawberry.field(description="The space, with its members.")
    errors: list[UpdateSpaceMemberError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of removeSpaceMember.")
class RemoveSpaceMemberPayload:
    space: Space | None = strawberry.field(
        description="The space, with its members; null when you removed yourself."
    )
    errors: list[RemoveSpaceMemberError] = strawberry.field(description="Why it failed, if it did.")


async def _space(info: Info, space_id: int) -> Space | None:
    """The space as the change left it (for a member removed: gone)."""
    # Read afresh: loaders in this request may hold what was before the change.
    info.context.fresh_loaders()
    found = await info.context.loaders.space_by_id.load(space_id)
    return Space.from_domain(found) if found else None


@strawberry.type
class MemberMutation:
    @strawberry.mutation(
        description="Add a user to a space with a role (its owners only). An unknown user "
        "name is NOT_FOUND on `userName`; a member already is CONFLICT."
    )
    async def add_space_member(
        self,
        info: Info,
        input: Annotated[
            AddSpaceMemberInput, strawberry.argument(description="The addSpaceMember arguments.")
        ],
    ) -> AddSpaceMemberPayload:
        space_id = ids.decode(input.space_id, "Space", field="spaceId")
        added = await members.add(
            info.context.actor, space_id, input.user_name, DomainRole(input.role.name)
        )
        return AddSpaceMemberPayload(
            member=SpaceMember.from_domain(added), space=await _space(info, space_id), errors=[]
        )

    @strawberry.mutation(
        description="Change a member's role (its owners only). The last OWNER cannot be "
        "made an editor or viewer (LAST_OWNER)."
    )
    async def update_space_member(
        self,
        info: Info,
        input: Annotated[
            UpdateSpaceMemberInput,
            strawberry.argument(description="The updateSpaceMember arguments."),
        ],
    ) -> UpdateSpaceMemberPayload:
        space_id = ids.decode(input.space_id, "Space", field="spaceId")
        changed = await members.change(
            info.context.actor, space_id, input.user_name, DomainRole(input.role.name)
        )
        return UpdateSpaceMemberPayload(
            member=SpaceMember.from_domain(changed), space=await _space(info, space_id), errors=[]
        )

    @strawberry.mutation(
        description="Remove a member from a space (its owners only; the last OWNER cannot "
        "be removed: LAST_OWNER). Their sessions in the space are detached (private, kept) "
        "and any mount of its checkpoints is undone."
    )
    async def remove_space_member(
        self,
        info: Info,
        input: Annotated[
            RemoveSpaceMemberInput,
            strawberry.argument(description="The removeSpaceMember arguments."),
        ],
    ) -> RemoveSpaceMemberPayload:
        space_id = ids.decode(input.space_id, "Space", field="spaceId")
        await members.remove(info.context.actor, space_id, input.user_name)
        return RemoveSpaceMemberPayload(space=await _space(info, space_id), errors=[])
