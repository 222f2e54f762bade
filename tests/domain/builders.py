"""Small builders for domain values, with defaults a test overrides by keyword."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from api.domain.hashing import checkpoint_hash
from api.domain.types import (
    BranchPoint,
    Checkpoint,
    CheckpointContent,
    MemoryScope,
    Mount,
    Role,
    Session,
    Turn,
)

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def session(
    *,
    id: int = 1,
    space_id: int | None = 10,
    memory_scope: MemoryScope = MemoryScope.LATEST_1,
    mount: Mount | None = None,
    last: int = 0,
    branch_name: str = "main",
    branched_from: BranchPoint | None = None,
) -> Session:
    return Session(
        id=id,
        title="A session",
        space_id=space_id,
        branch_name=branch_name,
        active_provider="offline",
        active_model="echo",
        seeded_from_id=None,
        forked_from_id=None,
        memory_scope=memory_scope,
        mount=mount,
        last_sequence_number=last,
        owner_id=1,
        created_at=T0,
        updated_at=T0,
        branched_from=branched_from,
        branch_root_id=branched_from.session_id if branched_from else None,
    )


def turn(
    sequence: int,
    *,
    role: Role | None = None,
    content: str | None = None,
    tokens: int = 10,
    session_id: int = 1,
) -> Turn:
    """Turn ``sequence``; odd sequences are USER turns, even ones ASSISTANT."""
    if role is None:
        role = Role.USER if sequence % 2 else Role.ASSISTANT
    return Turn(
        id=1000 + sequence,
        session_id=session_id,
        role=role,
        content=f"turn {sequence}" if content is None else content,
        sequence_number=sequence,
        provider="offline",
        model="echo",
        token_count=tokens,
        created_at=T0 + timedelta(seconds=sequence),
    )


def checkpoint(
    id: int,
    *,
    parent: Checkpoint | None = None,
    space_id: int = 10,
    title: str | None = None,
    body: CheckpointContent | None = None,
    source_session_id: int | None = 1,
    base_sequence: int = 0,
    branch_name: str = "main",
    hash: str | None = None,
) -> Checkpoint:
    """Checkpoint ``id`` with a correctly computed hash (unless ``hash`` is given)."""
    body = body or CheckpointContent(title=title or f"Checkpoint {id}")
    created_at = T0 + timedelta(minutes=id)
    real_hash = checkpoint_hash(
        body,
        space_id=space_id,
        parent_hash=parent.hash if parent else None,
        created_at=created_at,
        branch_name=branch_name,
        author_agent="user",
    )
    return Checkpoint(
        id=id,
        hash=hash or real_hash,
        space_id=space_id,
        parent_id=parent.id if parent else None,
        branch_name=branch_name,
        content=body,
        author_agent="user",
        source_session_id=source_session_id,
        source_turn_range=None,
        base_sequence=base_sequence,
        created_at=created_at,
    )


def lineage(count: int, *, first_id: int = 1, space_id: int = 10) -> list[Checkpoint]:
    """``count`` checkpoints, each the parent of the next; oldest first."""
    chain: list[Checkpoint] = []
    for id in range(first_id, first_id + count):
        chain.append(checkpoint(id, parent=chain[-1] if chain else None, space_id=space_id))
    return chain


def newest_first(turns: Sequence[Turn]) -> list[Turn]:
    return sorted(turns, key=lambda t: t.sequence_number, reverse=True)
