"""setModelAccess: an admin keeps a model for admins, or opens it to everyone."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import model_access
from ..context import Info
from ..core.errors import MutationError


@strawberry.type(description="A reason `setModelAccess` did not succeed.")
class SetModelAccessError(MutationError):
    pass


@strawberry.input(description="Who may use a model.")
class SetModelAccessInput:
    model: str = strawberry.field(
        description='The model, "provider/model" as `providers` lists it.'
    )
    admins_only: bool = strawberry.field(
        description="True: admins only (others do not see it in `providers` and get "
        "FORBIDDEN using it); false: everyone."
    )


@strawberry.type(description="The result of setModelAccess.")
class SetModelAccessPayload:
    model: str | None = strawberry.field(description='The model, "provider/model".')
    admins_only: bool = strawberry.field(description="Whether it is now for admins only.")
    errors: list[SetModelAccessError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class ModelAccessMutation:
    @strawberry.mutation(
        description="Keep a model for admins, or open it to everyone (admins only; stored "
        "in the database, for every worker)."
    )
    async def set_model_access(
        self,
        info: Info,
        input: Annotated[
            SetModelAccessInput, strawberry.argument(description="The setModelAccess arguments.")
        ],
    ) -> SetModelAccessPayload:
        model = await model_access.set_admins_only(
            info.context.actor, info.context.services.registry, input.model, input.admins_only
        )
        return SetModelAccessPayload(model=model, admins_only=input.admins_only, errors=[])
