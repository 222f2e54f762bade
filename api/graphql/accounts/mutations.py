"""API tokens: createApiToken, revokeApiToken."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import accounts
from ..context import Info
from ..core import ids
from ..core.errors import MutationError
from .types import ApiToken


@strawberry.type(description="A reason `createApiToken` did not succeed.")
class CreateApiTokenError(MutationError):
    pass


@strawberry.type(description="A reason `revokeApiToken` did not succeed.")
class RevokeApiTokenError(MutationError):
    pass


@strawberry.input(description="A new API token for yourself.")
class CreateApiTokenInput:
    name: str = strawberry.field(description="What it is for (1 to 100 characters).")
    read_only: bool = strawberry.field(
        default=False, description="It may read but never change anything."
    )
    expires_in_days: int | None = strawberry.field(
        default=None, description="Days until it stops working (1 to 3650); null: never."
    )


@strawberry.type(description="The result of createApiToken.")
class CreateApiTokenPayload:
    api_token: ApiToken | None = strawberry.field(description="The new token.")
    secret: str | None = strawberry.field(
        description="The token itself (`smr_…`), for `Authorization: Bearer`. Shown this "
        "once: only its hash is kept."
    )
    errors: list[CreateApiTokenError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.input(description="The token to revoke.")
class RevokeApiTokenInput:
    id: strawberry.ID = strawberry.field(
        description="The token's id (`viewer { apiTokens }`; an admin's `users { apiTokens }`)."
    )


@strawberry.type(description="The result of revokeApiToken.")
class RevokeApiTokenPayload:
    api_token: ApiToken | None = strawberry.field(description="The token, now revoked.")
    errors: list[RevokeApiTokenError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class AccountMutation:
    @strawberry.mutation(
        description="Create an API token for yourself; its secret is in this answer only."
    )
    async def create_api_token(
        self,
        info: Info,
        input: Annotated[
            CreateApiTokenInput, strawberry.argument(description="The createApiToken arguments.")
        ],
    ) -> CreateApiTokenPayload:
        token, secret = await accounts.create_api_token(
            info.context.actor,
            name=input.name,
            read_only=input.read_only,
            expires_in_days=input.expires_in_days,
        )
        return CreateApiTokenPayload(
            api_token=ApiToken.from_domain(token), secret=secret, errors=[]
        )

    @strawberry.mutation(
        description="Revoke one of your API tokens (an admin: anyone's): it stops working at once."
    )
    async def revoke_api_token(
        self,
        info: Info,
        input: Annotated[
            RevokeApiTokenInput, strawberry.argument(description="The revokeApiToken arguments.")
        ],
    ) -> RevokeApiTokenPayload:
        token_id = ids.decode(input.id, "ApiToken", field="id")
        token = await accounts.revoke_api_token(info.context.actor, token_id)
        info.context.credentials_changed()
        return RevokeApiTokenPayload(api_token=ApiToken.from_domain(token), errors=[])
