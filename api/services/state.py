"""Where a branch of a space stands, and what changed on it since a checkpoint
or a time: the continuation brief's facts (api/domain/brief.py renders them)."""

from __future__ import annotations

from datetime import datetime

from ..domain.accounts import Actor
from ..domain.brief import SpaceState
from ..domain.types import MAIN_BRANCH, Checkpoint
from ..errors import NotFound
from ..store import checkpoints
from . import access, policy

# How far back a time looks along the branch's line.
SINCE_TIME_DEPTH = 1000


async def space_state(
    actor: Actor,
    space_id: int,
    *,
    branch: str = MAIN_BRANCH,
    since: int | datetime | None = None,
) -> SpaceState:
    """The head of ``branch``, every branch's head, and the checkpoints on the
    branch's line after ``since``: a checkpoint of the space (after the last
    one the head and it share, when it is on another branch) or a time."""
    rule = policy.allow(actor, "space")
    space, _ = await access.space(actor, space_id, rule.role)
    heads = await checkpoints.branches([space_id])
    by_name = dict(heads[space_id])
    if not by_name and branch == MAIN_BRANCH:
        # A new space: main has no checkpoint yet. That is where it stands, not an
        # error; a `since` checkpoint cannot be of this space.
        if since is not None and not isinstance(since, datetime):
            raise NotFound("No such checkpoint in this space.", field="since")
        at = since if isinstance(since, datetime) else None
        return SpaceState(space=space, branch=branch, head=None, branches=(), since=at, changed=())
    if branch not in by_name:
        raise NotFound(f'The space has no branch "{branch[:100]}".', field="branch")
    tips = await checkpoints.get_many(list(by_name.values()))
    head = tips[by_name[branch]]
    since_at: Checkpoint | datetime | None = None
    changed: list[Checkpoint] = []
    if isinstance(since, datetime):
        since_at = since
        line = await checkpoints.chain(head.id, SINCE_TIME_DEPTH)
        for checkpoint in line:
            if checkpoint.created_at <= since:
                break
            changed.append(checkpoint)
        changed.reverse()
    elif since is not None:
        found = await checkpoints.get(since, field="since")
        if found.space_id != space_id:
            raise NotFound("No such checkpoint in this space.", field="since")
        since_at = found
        base = await checkpoints.common_ancestor_id(head.id, found.id)
        changed = [c for c in await checkpoints.since(head.id, base) if c.id != base]
    return SpaceState(
        space=space,
        branch=branch,
        head=head,
        branches=tuple((name, tips[tip]) for name, tip in heads[space_id]),
        since=since_at,
        changed=tuple(changed),
    )
