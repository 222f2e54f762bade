"""What an admin does to accounts: list them, disable or enable, delete, see
their tokens, and see or clear failed sign-ins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from ...domain import accounts as account_domain
from ...domain import sign_in as domain
from ...domain.accounts import Actor
from ...services import accounts
from ..context import Info
from ..core.errors import MutationError
from .types import ApiToken


@strawberry.type(description="A reason `clearSignInFailures` did not succeed.")
class ClearSignInFailuresError(MutationError):
    pass


@strawberry.type(description="A reason `setUserDisabled` did not succeed.")
class SetUserDisabledError(MutationError):
    pass


@strawberry.type(description="A reason `deleteUser` did not succeed.")
class DeleteUserError(MutationError):
    pass


@strawberry.type(description="Failed sign-ins of one name from one address, still counted.")
class SignInFailure:
    name: str = strawberry.field(
        description="The name that was tried, as it is counted: NFKC-normalised and "
        "case-folded (names nobody has are counted too)."
    )
    address: str = strawberry.field(description="The client address the attempts came from.")
    failures: int = strawberry.field(description="Failures within the sign-in window.")
    last_failed_at: datetime = strawberry.field(description="When the latest one failed.")

    @classmethod
    def from_domain(cls, failure: domain.SignInFailures) -> SignInFailure:
        return cls(
            name=failure.name,
            address=failure.address,
            failures=failure.failures,
            last_failed_at=failure.last_failed_at,
        )


@strawberry.type(description="An account: a user who signs in with a password or a token.")
class User:
    name: str = strawberry.field(description="Their user name (unique without regard to case).")
    is_admin: bool = strawberry.field(description="Whether they administer this server.")
    disabled: bool = strawberry.field(
        description="Whether the account is disabled: its tokens and sign-ins do not work."
    )
    created_at: datetime = strawberry.field(description="When the account was made.")
    actor: strawberry.Private[Actor]

    @strawberry.field(description="Their API tokens, newest first, revoked ones included.")
    async def api_tokens(self) -> list[ApiToken]:
        tokens = await accounts.user_tokens(self.actor, self.name)
        return [ApiToken.from_domain(token) for token in tokens]

    @classmethod
    def from_domain(cls, account: account_domain.Account, actor: Actor) -> User:
        """An account as ``actor`` (who listed it) sees it."""
        return cls(
            name=account.name,
            is_admin=account.is_admin,
            disabled=account.disabled,
            created_at=account.created_at,
            actor=actor,
        )


@strawberry.type
class UsersQuery:
    @strawberry.field(
        description="Admins: every account, oldest first. Anyone else: only themselves."
    )
    async def users(self, info: Info) -> list[User]:
        actor = info.context.actor
        return [User.from_domain(a, actor) for a in await accounts.users(actor)]

    @strawberry.field(
        description="Admins: every (name, address) with failed sign-ins still counted, the "
        "latest first. An address at the limit is refused (for that name, or at all); a "
        "name's failures from every address make sign-ins from new addresses wait. "
        "Empty for anyone else."
    )
    async def sign_in_failures(self, info: Info) -> list[SignInFailure]:
        limits = info.context.services.settings.sign_in_limits
        found = await accounts.failed_sign_ins(info.context.actor, limits)
        return [SignInFailure.from_domain(f) for f in found]


@strawberry.input(description="Whose failed sign-ins to forget: one name or one address.")
class ClearSignInFailuresInput:
    name: str | None = strawberry.field(
        default=None, description="A user name: its failures from every address."
    )
    address: str | None = strawberry.field(
        default=None, description="A client address: its failures for every name."
    )


@strawberry.type(description="The result of clearSignInFailures.")
class ClearSignInFailuresPayload:
    cleared: int = strawberry.field(
        description="How many (name, address) pairs had failures that are now forgotten."
    )
    errors: list[ClearSignInFailuresError] = strawberry.field(
        description="Why it failed, if it did."
    )


@strawberry.type
class UsersMutation:
    @strawberry.mutation(
        description="Forget the failed sign-ins of a name or of an address, for every "
        "worker (admins only)."
    )
    async def clear_sign_in_failures(
        self,
        info: Info,
        input: Annotated[
            ClearSignInFailuresInput,
            strawberry.argument(description="The clearSignInFailures arguments."),
        ],
    ) -> ClearSignInFailuresPayload:
        cleared = await accounts.clear_failed_sign_ins(
            info.context.actor, name=input.name, address=input.address
        )
        return ClearSignInFailuresPayload(cleared=cleared, errors=[])


@strawberry.input(description="An account to disable or enable.")
class SetUserDisabledInput:
    name: str = strawberry.field(description="Their user name.")
    disabled: bool = strawberry.field(
        description="True: their tokens and browser sessions stop working at once (nothing "
        "is deleted); false: they work again."
    )


@strawberry.type(description="The result of setUserDisabled.")
class SetUserDisabledPayload:
    user: User | None = strawberry.field(description="The account as it is now.")
    errors: list[SetUserDisabledError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.input(description="An account to delete.")
class DeleteUserInput:
    name: str = strawberry.field(description="Their user name.")


@strawberry.type(description="The result of deleteUser.")
class DeleteUserPayload:
    deleted_name: str | None = strawberry.field(description="The name of the deleted account.")
    errors: list[DeleteUserError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type
class UserAdminMutation:
    @strawberry.mutation(
        description="Disable an account (its tokens and browser sessions stop working at "
        "once) or enable it again (admins only; never yourself, never the last admin)."
    )
    async def set_user_disabled(
        self,
        info: Info,
        input: Annotated[
            SetUserDisabledInput, strawberry.argument(description="The setUserDisabled arguments.")
        ],
    ) -> SetUserDisabledPayload:
        actor = info.context.actor
        changed = await accounts.disable_user(actor, input.name, input.disabled)
        info.context.credentials_changed()
        return SetUserDisabledPayload(user=User.from_domain(changed, actor), errors=[])

    @strawberry.mutation(
        description="Delete an account with its own spaces, sessions, tokens and browser "
        "sessions (admins only; never yourself). Refused (CONFLICT) while a space it "
        "created has other members: disable it instead. What it wrote in other people's "
        "spaces stays."
    )
    async def delete_user(
        self,
        info: Info,
        input: Annotated[
            DeleteUserInput, strawberry.argument(description="The deleteUser arguments.")
        ],
    ) -> DeleteUserPayload:
        deleted = await accounts.remove_user(info.context.actor, input.name)
        info.context.credentials_changed()
        return DeleteUserPayload(deleted_name=deleted.name, errors=[])
