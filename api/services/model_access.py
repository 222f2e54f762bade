"""Which models an actor may use and see: setModelAccess and the providers list."""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.accounts import Actor
from ..providers.reachability import Reachability
from ..providers.registry import ProviderRegistry
from ..store import model_access
from . import access, policy


@dataclass(frozen=True)
class ProviderView:
    """A provider as the actor sees it: the models they may use, and whether
    anything answered at its address when last checked."""

    name: str
    available: bool
    reason: str | None
    models: tuple[str, ...]
    reachability: Reachability


@dataclass(frozen=True)
class ProvidersView:
    """The providers as the actor sees them: a model kept for admins is not
    listed for anyone else, and their chat default is the first they may use."""

    providers: list[ProviderView]
    chat_default: str
    background: str
    admins_only: list[str]  # what is kept for admins, shown to admins only


async def providers(actor: Actor, registry: ProviderRegistry) -> ProvidersView:
    policy.allow(actor, "providers")
    kept = await model_access.admins_only()
    hidden = frozenset() if actor.is_admin else kept
    statuses = registry.providers()
    shown = [
        ProviderView(
            status.name,
            status.available,
            status.reason,
            tuple(m for m in status.models if f"{status.name}/{m}" not in hidden),
            # Never waits: the answer of the last check, one started if it is stale.
            registry.reachability(status.name),
        )
        for status in statuses
    ]
    return ProvidersView(
        providers=shown,
        chat_default=access.first_usable(registry.chat_default, statuses, hidden),
        background=registry.background,
        admins_only=sorted(kept) if actor.is_admin else [],
    )


async def set_admins_only(
    actor: Actor, registry: ProviderRegistry, model: str, admins_only: bool
) -> str:
    """Keep ``model`` for admins or open it to everyone; its "provider/model" name."""
    policy.allow(actor, "setModelAccess")
    name = registry.resolve(model, require_available=False).name
    await model_access.set_admins_only(name, admins_only)
    return name
