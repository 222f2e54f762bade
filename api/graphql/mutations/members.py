"""addSpaceMember, updateSpaceMember, removeSpaceMember (a space's owners only)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.domain.types import SpaceRole as DomainRole
from api.graphql import ids
from api.graphql.context import Info
from api.graphql.loaders import make_loaders
from api.graphql.mutations.base import attempt
from api.graphql.types.enums import SpaceRole
from api.graphql.types.errors import error_type
from api.graphql.types.member import SpaceMember
from api.graphql.types.space import Space
from api.services import members

AddSpaceMemberError = error_type("AddSpaceMemberError", "addSpaceMember")
UpdateSpaceMemberError = error_type("UpdateSpaceMemberError", "updateSpaceMember")
RemoveSpaceMemberError = error_type("RemoveSpaceMemberError", "removeSpaceMember")


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
    info.context.loaders = make_loaders(info.context.owner_id)
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
        async def work() -> tuple[SpaceMember, Space | None]:
            space_id = ids.decode(input.space_id, "Space", field="spaceId")
            added = await members.add(
                info.context.owner_id, space_id, input.user_name, DomainRole(input.role.name)
            )
            return SpaceMember.from_domain(added), await _space(info, space_id)

        result, errors = await attempt(work(), AddSpaceMemberError)
        member, space = result if result is not None else (None, None)
        return AddSpaceMemberPayload(member=member, space=space, errors=errors)

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
        async def work() -> tuple[SpaceMember, Space | None]:
            space_id = ids.decode(input.space_id, "Space", field="spaceId")
            changed = await members.change(
                info.context.owner_id, space_id, input.user_name, DomainRole(input.role.name)
            )
            return SpaceMember.from_domain(changed), await _space(info, space_id)

        result, errors = await attempt(work(), UpdateSpaceMemberError)
        member, space = result if result is not None else (None, None)
        return UpdateSpaceMemberPayload(member=member, space=space, errors=errors)

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
        async def work() -> Space | None:
            space_id = ids.decode(input.space_id, "Space", field="spaceId")
            await members.remove(info.context.owner_id, space_id, input.user_name)
            return await _space(info, space_id)

        space, errors = await attempt(work(), RemoveSpaceMemberError)
        return RemoveSpaceMemberPayload(space=space, errors=errors)
