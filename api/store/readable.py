"""Who may read a session, as SQL: its author, and the members of its space
(any role) when its visibility is SPACE. Every statement of the store that
shows a session to someone who is not necessarily its author filters with
this condition."""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.types import Visibility


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition on the session table, whose every parameter is the reader's id."""

    sql: str
    users: int  # how many parameters it takes

    def params(self, user_id: int) -> list[int]:
        return [user_id] * self.users


def readable_sessions(alias: str = "session", *, through_space_only: bool = False) -> Condition:
    """The sessions a user may read, on the session table named ``alias``
    (``through_space_only``: those they read as a member of the session's
    space, their own left to the caller). Answered by the session's primary key
    or indexes and the (user_id, space_id) index of space_member; the same SQL
    on SQLite and PostgreSQL."""
    shared = (
        f"({alias}.visibility = '{Visibility.SPACE.value}' AND {alias}.space_id IN "
        "(SELECT space_id FROM space_member WHERE user_id = ?))"
    )
    if through_space_only:
        return Condition(shared, 1)
    return Condition(f"({alias}.owner_id = ? OR {shared})", 2)
