"""Read, in one call, every fact the context rules need (``ContextFacts``).

The rules ask for what they need (``facts_wanted``); this module reads it with
a number of statements that does not depend on how long the session is or
how deep the lineage goes: the named checkpoint or the branch head with its
chain (a recursive CTE), the session's progress when a foreign head was saved,
and the newest turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.context import ContextFacts, FactsWanted
from ..domain.types import Checkpoint, Session, Turn
from ..errors import NotFound
from . import checkpoints, turns


async def load(
    session: Session,
    wanted: FactsWanted,
    *,
    before: int | None,
    max_turns: int,
    recent: Sequence[Turn] | None = None,
) -> ContextFacts:
    """The facts for the next message of ``session``; ``before`` excludes the
    message's own turn (and anything after it) once that turn is saved.
    ``recent``: its ``max_turns`` newest turns, newest first, when the caller
    has read them already (``sessions.for_message``; ``before`` is then None).

    Who may read what ``wanted`` names is checked by the caller
    (``api.services.context``): this reads it."""
    checkpoint: Checkpoint | None = None
    head: Checkpoint | None = None
    chain: list[Checkpoint] = []
    if wanted.checkpoint_id is not None:
        # The chain starts with the checkpoint itself: one read serves both.
        chain = await checkpoints.chain(wanted.checkpoint_id, wanted.depth)
        if not chain:
            field = "context.checkpointId" if wanted.explicit else "checkpointId"
            raise NotFound("No such checkpoint.", field=field)
        checkpoint = chain[0]
    elif wanted.head_of is not None:
        tip = await checkpoints.head_id(*wanted.head_of)
        if tip is not None:
            chain = await checkpoints.chain(tip, wanted.depth)
            head = chain[0] if chain else None
    written_before_head = 0
    if head is not None and head.source_session_id != session.id:
        written_before_head = await turns.last_sequence_at(session.id, head.created_at)
    # Newest first from the top; the rules stop at the boundary, so reading
    # past it (after=0) returns the same window as reading from it.
    if recent is None:
        recent = await turns.recent(session.id, after=0, before=before, limit=max_turns)
    return ContextFacts(checkpoint, head, tuple(chain), written_before_head, tuple(recent))
