"""The reads that apply ``api.services.policy`` to an object: the actor's role
in a space, the session's author, the models they may use.

Each check is one indexed read (the membership row joined to the space, or
the session with its visibility). What a rule needs is the policy's; the
functions here only find the facts and hand them to it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.accounts import Actor
from ..domain.types import Checkpoint, Session, Space, SpaceRole, Turn
from ..errors import Forbidden, NotFound
from ..providers.registry import ProviderRegistry
from ..providers.types import ModelRef, ProviderStatus
from ..store import checkpoints, model_access, sessions, spaces, turns
from . import policy


async def space(
    actor: Actor, space_id: int, needs: SpaceRole | None = None, *, field: str = "spaceId"
) -> tuple[Space, SpaceRole]:
    """The space and the actor's role in it, if that role allows ``needs``
    (NotFound for a space they are not a member of)."""
    found, role = await spaces.get_with_role(actor.user_id, space_id, field=field)
    policy.check_role(role, needs, field=field)
    return found, role


async def member_space(user_id: int, space_id: int, *, field: str) -> Space:
    """A space ``user_id`` is a member of (any role). By user id, not actor: the
    context rules check what a session's author may read, who need not be the
    actor (a member previewing a shared session)."""
    return await spaces.get(user_id, space_id, field=field)


async def session(
    actor: Actor, session_id: int, rule: policy.Rule, *, field: str = "sessionId"
) -> Session:
    """A session the actor may read; with ``rule.author``, one they wrote
    (Forbidden for one they only read)."""
    found = await sessions.readable(actor.user_id, session_id, field=field)
    if rule.author:
        policy.check_author(actor, found.owner_id, field=field)
    return found


async def message_session(
    actor: Actor,
    session_id: int,
    rule: policy.Rule,
    *,
    idempotency_key: str | None,
    window: int,
) -> sessions.ForMessage:
    """``session``, read with what a new message to it needs (the turn its key
    was sent with, the newest turns: ``sessions.for_message``), in one statement."""
    found = await sessions.for_message(
        actor.user_id, session_id, idempotency_key=idempotency_key, window=window
    )
    if rule.author:
        policy.check_author(actor, found.session.owner_id, field="sessionId")
    return found


async def turn(
    actor: Actor, turn_id: int, rule: policy.Rule, *, field: str = "turnId"
) -> tuple[Turn, Session]:
    """A turn of a session the actor may read, and that session; with
    ``rule.author``, of a session they wrote (Forbidden for one they only read).
    A turn of a session they may not read is NotFound, as one that does not exist."""
    found = await turns.by_id(turn_id)
    if found is None:
        raise NotFound("No such turn.", field=field)
    try:
        owner = await session(actor, found.session_id, rule, field=field)
    except NotFound as exc:
        raise NotFound("No such turn.", field=field) from exc
    return found, owner


async def checkpoint(
    actor: Actor, checkpoint_id: int, *, field: str = "checkpointId"
) -> tuple[Checkpoint, SpaceRole]:
    """A checkpoint of a space the actor is a member of, and their role there."""
    found = await checkpoints.get(checkpoint_id, field=field)
    try:
        _, role = await spaces.get_with_role(actor.user_id, found.space_id)
    except NotFound as exc:
        raise NotFound("No such checkpoint.", field=field) from exc
    return found, role


def first_usable(preferred: str, providers: Sequence[ProviderStatus], kept: frozenset[str]) -> str:
    """The model used for someone who may not use the ``kept`` models, in
    place of ``preferred`` (the chat default, or the background model).

    ``preferred`` when it is not kept; else the first configured model that
    is not kept, from an available provider if there is one (configuration
    order); else ``preferred``, which then answers FORBIDDEN with its reason.
    """
    if preferred not in kept:
        return preferred
    usable = [
        (status.available, f"{status.name}/{model}")
        for status in providers
        for model in status.models
        if f"{status.name}/{model}" not in kept
    ]
    ready = [name for available, name in usable if available]
    return (ready or [name for _, name in usable] or [preferred])[0]


async def kept_from(actor: Actor) -> frozenset[str]:
    """The models ``actor`` may not use: none for an admin (or the local user:
    no read), else those kept for admins."""
    return frozenset() if actor.is_admin else await model_access.admins_only()


async def default_model(registry: ProviderRegistry, actor: Actor) -> str:
    """The model a new session of the actor uses ("provider/model")."""
    return first_usable(registry.chat_default, registry.providers(), await kept_from(actor))


async def check_model(actor: Actor, name: str) -> None:
    """Forbidden when ``name`` ("provider/model") is kept for admins and the
    actor is not one (an admin, or the local user without accounts, costs no read)."""
    if not actor.is_admin and await model_access.is_admins_only(name):
        raise Forbidden(f'The model "{name}" is for admins only.', field="model")


async def background_model(registry: ProviderRegistry, actor: Actor) -> ModelRef:
    """The model that drafts, suggests and titles for ``actor``: the background
    model, or when it is kept for admins and the actor is not one, the first
    model they may use (see ``first_usable``). Forbidden when there is none:
    a user's text never reaches a model they may not use."""
    kept = await kept_from(actor)
    name = first_usable(registry.background, registry.providers(), kept)
    if name in kept:
        raise Forbidden(
            f'The background model "{registry.background}" is for admins only, and there is '
            "no other model you may use.",
            field="model",
        )
    return registry.resolve(name)
