"""What an admin does to accounts: sign-in failures (seen, cleared)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from api.domain import sign_in as domain
from api.errors import Forbidden
from api.graphql.context import Info
from api.graphql.mutations.base import attempt
from api.graphql.types.errors import error_type
from api.services import accounts

ClearSignInFailuresError = error_type("ClearSignInFailuresError", "clearSignInFailures")


def _require_admin(info: Info, what: str, field: str | None = None) -> None:
    if not info.context.is_admin:
        raise Forbidden(f"Only an admin {what}.", field=field)


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


@strawberry.type
class UsersQuery:
    @strawberry.field(
        description="Admins: every (name, address) with failed sign-ins still counted, the "
        "latest first. An address at the limit is refused (for that name, or at all); a "
        "name's failures from every address make sign-ins from new addresses wait. "
        "Empty for anyone else."
    )
    async def sign_in_failures(self, info: Info) -> list[SignInFailure]:
        if not info.context.is_admin:
            return []
        limits = info.context.services.settings.sign_in_limits
        return [SignInFailure.from_domain(f) for f in await accounts.sign_in_failures(limits)]


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
        async def work() -> int:
            _require_admin(info, "clears failed sign-ins")
            return await accounts.clear_sign_in_failures(name=input.name, address=input.address)

        cleared, errors = await attempt(work(), ClearSignInFailuresError)
        return ClearSignInFailuresPayload(cleared=cleared or 0, errors=errors)
