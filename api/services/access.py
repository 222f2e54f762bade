"""Who may read and write what (issue 9): the one place the rules are applied.

    a space       exists for its members only (NotFound for anyone else);
                  what a member's role does not allow is Forbidden
                  (they can see the space, so it is not hidden)
    a session     readable by its author, and by the members of its space when
                  its visibility is SPACE; only its author writes to it
                  (Forbidden for a reader, NotFound for anyone else)
    a checkpoint  readable by the members of its space

Each check is one indexed read (the membership row joined to the space, or
the session with its visibility), the same statement count as the owner
checks it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from api.domain.types import Checkpoint, Session, Space, SpaceRole
from api.errors import Forbidden, NotFound
from api.providers.registry import ProviderRegistry
from api.providers.types import ProviderStatus
from api.store import checkpoints, model_access, sessions, spaces

_NEEDS = {
    SpaceRole.OWNER: "Only an owner of the space may do this.",
    SpaceRole.EDITOR: "Viewers of a space read it: this needs an editor or an owner.",
    SpaceRole.VIEWER: "",
}


async def space(
    user_id: int, space_id: int, needs: SpaceRole = SpaceRole.VIEWER, *, field: str = "spaceId"
) -> tuple[Space, SpaceRole]:
    """The space and the user's role in it, if that role allows ``needs``."""
    found, role = await spaces.get_with_role(user_id, space_id, field=field)
    if not role.allows(needs):
        raise Forbidden(_NEEDS[needs], field=field)
    return found, role


async def readable_session(user_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    return await sessions.readable(user_id, session_id, field=field)


async def own_session(user_id: int, session_id: int, *, field: str = "sessionId") -> Session:
    """A session the user wrote: Forbidden for one they only read."""
    session = await sessions.readable(user_id, session_id, field=field)
    if session.owner_id != user_id:
        raise Forbidden("Only its author writes to a session.", field=field)
    return session


async def checkpoint(
    user_id: int, checkpoint_id: int, *, field: str = "checkpointId"
) -> tuple[Checkpoint, SpaceRole]:
    """A checkpoint of a space the user is a member of, and their role there."""
    found = await checkpoints.get(checkpoint_id, field=field)
    try:
        _, role = await spaces.get_with_role(user_id, found.space_id)
    except NotFound as exc:
        raise NotFound("No such checkpoint.", field=field) from exc
    return found, role


def first_usable(
    chat_default: str, providers: Sequence[ProviderStatus], kept: frozenset[str]
) -> str:
    """The model a new session uses for someone who may not use the ``kept`` models.

    The chat default when it is not kept; else the first configured model that
    is not kept, from an available provider if there is one (configuration
    order); else the chat default, which then answers FORBIDDEN with its reason.
    """
    if chat_default not in kept:
        return chat_default
    usable = [
        (status.available, f"{status.name}/{model}")
        for status in providers
        for model in status.models
        if f"{status.name}/{model}" not in kept
    ]
    ready = [name for available, name in usable if available]
    return (ready or [name for _, name in usable] or [chat_default])[0]


async def default_model(registry: ProviderRegistry, *, is_admin: bool) -> str:
    """The model a new session of the caller uses ("provider/model")."""
    if is_admin:  # nothing is kept from an admin (or the local user): no read
        return registry.chat_default
    kept = await model_access.admins_only()
    return first_usable(registry.chat_default, registry.providers(), kept)


async def check_model(name: str, *, is_admin: bool) -> None:
    """Forbidden when ``name`` ("provider/model") is kept for admins and the
    caller is not one (an admin, or the local user without accounts, costs no read)."""
    if not is_admin and await model_access.is_admins_only(name):
        raise Forbidden(f'The model "{name}" is for admins only.', field="model")
