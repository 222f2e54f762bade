"""The filters of a listing of sessions (`sessions`, `Space.sessions`)."""

from __future__ import annotations

from enum import Enum
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


@strawberry.enum(
    description="Which of a conversation's branches (sessions of one familyId) a listing holds."
)
class SessionBranches(Enum):
    ALL = strawberry.enum_value("ALL", description="Every one.")
    LATEST_PER_FAMILY = strawberry.enum_value(
        "LATEST_PER_FAMILY",
        description="One per conversation: of its branches the listing would hold (under "
        "its other filters), the most recently updated; branchCount says how many there are.",
    )


BranchesFilter = Annotated[
    SessionBranches,
    strawberry.argument(
        description="ALL (the default): every session; LATEST_PER_FAMILY: a conversation "
        "once, as its most recently updated branch (in that branch's place in the order)."
    ),
]


def session_filters(
    archived: bool | None,
    pinned: bool | None,
    tag: str | None,
    branches: SessionBranches = SessionBranches.ALL,
) -> reading.SessionFilters:
    return reading.session_filters(
        archived=archived,
        pinned=pinned,
        tag=tag,
        latest_per_family=branches is SessionBranches.LATEST_PER_FAMILY,
    )
