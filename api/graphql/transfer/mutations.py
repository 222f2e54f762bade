"""importSpace: recreate an exported document, or import another app's conversations."""

from __future__ import annotations

import enum
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


@strawberry.enum(description="What kind of document importSpace read.")
class ImportFormat(enum.Enum):
    SMRITI = strawberry.enum_value("smriti", description="A Smriti JSON export.")
    CHATGPT = strawberry.enum_value(
        "chatgpt", description="The conversations.json of a ChatGPT data export."
    )
    CLAUDE = strawberry.enum_value(
        "claude", description="The conversations.json of a Claude (claude.ai) data export."
    )
    OPEN_WEBUI = strawberry.enum_value(
        "openwebui", description="An Open WebUI chat export (all chats, or one)."
    )


@strawberry.input(description="A document to import.")
class ImportSpaceInput:
    document: str = strawberry.field(
        description="A JSON export (as exportSpace or `smriti export` write it), the "
        "conversations.json of a ChatGPT or a Claude data export, or an Open WebUI chat "
        "export; at most the server's request body limit."
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
    format: ImportFormat | None = strawberry.field(
        description="What the document was (null when it was not imported)."
    )
    branches_imported: int = strawberry.field(
        description="How many conversation branches this import created: another app's "
        "conversation becomes a session of the line it showed, and each other line (edited "
        "messages, regenerated replies) a branch of it, alternatives of the same cells. "
        "0 for a Smriti export."
    )
    errors: list[ImportSpaceError] = strawberry.field(
        description="Why nothing was imported, if so (TAMPERED names the first bad checkpoint)."
    )


@strawberry.type
class ImportMutation:
    @strawberry.mutation(
        description="Recreate an exported document: every checkpoint hash is verified "
        "first and nothing is written if one fails; a space imported before is not "
        "imported again. Another app's conversations become sessions in no space, every "
        "branch of one a conversation branch of its session."
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
            format=ImportFormat(done.source),
            branches_imported=sum(done.branches),
            errors=[],
        )
