"""The filters of a listing of sessions (`sessions`, `Space.sessions`)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from ...services import reading

ArchivedFilter = Annotated[
    bool | None,
    strawberry.argument(
        description="false (the default): leave archived sessions out; true: only them; null: both."
    ),
]
PinnedFilter = Annotated[
    bool | None,
    strawberry.argument(description="true: only pinned sessions; false: only the others."),
]
TagFilter = Annotated[
    str | None,
    strawberry.argument(
        description="Only sessions with this tag (compared as tags are: trimmed, case-insensitive)."
    ),
]


def session_filters(
    archived: bool | None, pinned: bool | None, tag: str | None
) -> reading.SessionFilters:
    return reading.session_filters(archived=archived, pinned=pinned, tag=tag)
