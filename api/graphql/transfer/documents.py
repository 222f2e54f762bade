"""`exportSpace`: a space as a document, returned as a string."""

from __future__ import annotations

import enum
from typing import Annotated

import strawberry

from api.errors import NotFound
from api.graphql import ids
from api.graphql.context import Info
from api.services import transfer


@strawberry.enum(description="The kinds of document Smriti exports.")
class ExportFormat(enum.Enum):
    JSON = strawberry.enum_value(
        "JSON",
        description="Lossless (docs/export.schema.json); importSpace recreates it.",
    )


@strawberry.input(description="What exportSpace should write.")
class ExportSpaceInput:
    space_id: strawberry.ID = strawberry.field(description="The space.")
    format: ExportFormat = strawberry.field(
        default=ExportFormat.JSON, description="The kind of document (default JSON)."
    )


@strawberry.type(description="An exported document.")
class ExportedDocument:
    document: str = strawberry.field(description="The document itself.")
    media_type: str = strawberry.field(description='Its media type ("application/json").')
    file_name: str = strawberry.field(description="A name to save it under.")


@strawberry.type
class ExportQuery:
    @strawberry.field(description="A space as a document (null: no such space).")
    async def export_space(
        self,
        info: Info,
        input: Annotated[ExportSpaceInput, strawberry.argument(description="What to export.")],
    ) -> ExportedDocument | None:
        key = ids.key_or_none(input.space_id, "Space")
        if key is None:
            return None
        try:
            exported = await transfer.export_spaces(info.context.owner_id, [key])
        except NotFound:
            return None
        return ExportedDocument(
            document=transfer.to_json(exported),
            media_type="application/json",
            file_name=f"smriti-space-{key}.json",
        )
