"""`exportSpace` and `exportSession`: documents returned as strings.

What cannot be found is null, as for every query. A format that does not
fit what is asked (a notebook of a whole space, the JSON of a session that
belongs to a space) is a top-level error with code INVALID or WRONG_SPACE:
it is a question for the caller, like checkpointByHash's AMBIGUOUS_HASH.
"""

from __future__ import annotations

import enum
from typing import Annotated

import strawberry

from ...errors import ErrorCode, InputError
from ...services import transfer
from ..context import Info
from ..core import ids


@strawberry.enum(description="The kinds of document Smriti exports.")
class ExportFormat(enum.Enum):
    JSON = strawberry.enum_value(
        "JSON",
        description="Lossless (docs/export.schema.json); importSpace recreates it.",
    )
    MARKDOWN = strawberry.enum_value(
        "MARKDOWN",
        description="Readable: a session's turns and checkpoints, or a space's lineage.",
    )
    IPYNB = strawberry.enum_value(
        "IPYNB", description="A session as a Jupyter notebook (nbformat 4.5)."
    )


_MEDIA = {
    ExportFormat.JSON: ("application/json", "json"),
    ExportFormat.MARKDOWN: ("text/markdown", "md"),
    ExportFormat.IPYNB: ("application/x-ipynb+json", "ipynb"),
}


@strawberry.input(description="What exportSpace should write.")
class ExportSpaceInput:
    space_id: strawberry.ID = strawberry.field(description="The space.")
    format: ExportFormat = strawberry.field(
        default=ExportFormat.JSON, description="JSON (default) or MARKDOWN (its lineage)."
    )


@strawberry.input(description="What exportSession should write.")
class ExportSessionInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    format: ExportFormat = strawberry.field(
        default=ExportFormat.MARKDOWN,
        description="MARKDOWN (default), IPYNB, or JSON (a session in no space only).",
    )


@strawberry.type(description="An exported document.")
class ExportedDocument:
    document: str = strawberry.field(description="The document itself.")
    media_type: str = strawberry.field(description='Its media type ("application/json"…).')
    file_name: str = strawberry.field(
        description="A name to save it under: the session's title or the space's name "
        "without the characters file systems refuse (`smriti-session-ID` or "
        "`smriti-space-ID` when nothing usable is left), then the format's suffix."
    )


def _exported(text: str, format: ExportFormat, stem: str) -> ExportedDocument:
    media_type, suffix = _MEDIA[format]
    return ExportedDocument(document=text, media_type=media_type, file_name=f"{stem}.{suffix}")


@strawberry.type
class ExportQuery:
    @strawberry.field(
        description="A space as a document (null: no such space). One export per operation: "
        "an operation holding more (aliases included) is refused with TOO_MANY_EXPORTS."
    )
    async def export_space(
        self,
        info: Info,
        input: Annotated[ExportSpaceInput, strawberry.argument(description="What to export.")],
    ) -> ExportedDocument | None:
        key = ids.key_or_none(input.space_id, "Space")
        if key is None:
            return None
        actor = info.context.actor
        if input.format is ExportFormat.JSON:
            export = await transfer.export_spaces(actor, [key])
            return _exported(transfer.to_json(export), input.format, transfer.export_stem(export))
        if input.format is ExportFormat.MARKDOWN:
            document = await transfer.lineage_markdown(actor, key)
        else:
            raise InputError(
                "A notebook holds one session: use exportSession.",
                code=ErrorCode.INVALID,
                field="format",
            )
        return _exported(document.text, input.format, document.stem)

    @strawberry.field(
        description="A session as a document (null: no such session). One export per "
        "operation, as for exportSpace."
    )
    async def export_session(
        self,
        info: Info,
        input: Annotated[ExportSessionInput, strawberry.argument(description="What to export.")],
    ) -> ExportedDocument | None:
        key = ids.key_or_none(input.session_id, "Session")
        if key is None:
            return None
        actor = info.context.actor
        if input.format is ExportFormat.JSON:
            export = await transfer.export_session(actor, key)
            return _exported(transfer.to_json(export), input.format, transfer.export_stem(export))
        if input.format is ExportFormat.MARKDOWN:
            document = await transfer.session_markdown(actor, key)
        else:
            document = await transfer.session_notebook(actor, key)
        return _exported(document.text, input.format, document.stem)
