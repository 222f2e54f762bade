"""importSpace: recreate an exported document."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import transfer
from ..context import Info
from ..core.errors import MutationError
from ..sessions.types import Session
from ..spaces.types import Space


@strawberry.type(description="A reason `importSpace` did not succeed.")
class ImportSpaceError(MutationError):
    pass


@strawberry.input(description="A document to import.")
class ImportSpaceInput:
    document: str = strawberry.field(
        description="A JSON export (as exportSpace or `smriti export` write it), or the "
        "conversations.json of a ChatGPT data export; at most the server's request body limit."
    )


@strawberry.type(description="The result of importSpace.")
class ImportSpacePayload:
    spaces: list[Space] = strawberry.field(
        description="The document's spaces here (new, or the ones imported before)."
    )
    sessions: list[Session] = strawberry.field(
        description="The document's sessions that belong to no space."
    )
    created: int = strawberry.field(
        description="How many of them this import created (0: all were already here)."
    )
    errors: list[ImportSpaceError] = strawberry.field(
        description="Why nothing was imported, if so (TAMPERED names the first bad checkpoint)."
    )


@strawberry.type
class ImportMutation:
    @strawberry.mutation(
        description="Recreate an exported document: every checkpoint hash is verified "
        "first and nothing is written if one fails; a space imported before is not "
        "imported again."
    )
    async def import_space(
        self,
        info: Info,
        input: Annotated[ImportSpaceInput, strawberry.argument(description="The document.")],
    ) -> ImportSpacePayload:
        done = await transfer.import_document(
            info.context.actor, input.document, info.context.services.registry
        )
        return ImportSpacePayload(
            spaces=[Space.from_domain(s) for s, _ in done.spaces],
            sessions=[Session.from_domain(s) for s, _ in done.sessions],
            created=sum(1 for _, new in [*done.spaces, *done.sessions] if new),
            errors=[],
        )
