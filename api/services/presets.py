"""Presets: a user's named model + instructions + parameters, chosen from the model picker.

A preset is its owner's alone (anyone else's is NOT_FOUND). Its model is
checked as a session's is (known, and the owner may use it), its settings as
a session's are, against that model's output limit. Applying one to a
session (``apply_preset``) is the one rule for it: the session takes the
preset's model and its settings whole, in one write.
"""

from __future__ import annotations

from ..domain import chat_settings
from ..domain.accounts import Actor
from ..domain.types import ChatSettings, Preset, Session
from ..errors import InputError
from ..store import presets, sessions
from . import access, policy
from .base import Services

NAME_MAX_CHARS = 100


def _name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > NAME_MAX_CHARS:
        raise InputError(f"A preset's name is 1 to {NAME_MAX_CHARS} characters.", field="name")
    return name


async def _checked(
    services: Services, actor: Actor, model: str, settings: ChatSettings
) -> tuple[str, ChatSettings]:
    registry = services.registry
    ref = registry.resolve(model, require_available=False)
    await access.check_model(actor, ref.name)
    return ref.name, chat_settings.validate(settings, output_limit=registry.output_limit(ref))


async def list_presets(actor: Actor) -> list[Preset]:
    """The actor's presets, by name (``viewer.presets``)."""
    policy.allow(actor, "viewer")
    return await presets.of_owner(actor.user_id)


async def create_preset(
    services: Services, actor: Actor, *, name: str, model: str, settings: ChatSettings
) -> Preset:
    policy.allow(actor, "createPreset")
    name = _name(name)
    model, settings = await _checked(services, actor, model, settings)
    return await presets.create(actor.user_id, name=name, model=model, settings=settings)


async def update_preset(
    services: Services,
    actor: Actor,
    preset_id: int,
    *,
    name: str | None,
    model: str | None,
    settings: ChatSettings | None,
) -> Preset:
    """Rename it, or change its model or settings (replaced whole); the
    settings are checked against the model it will have."""
    policy.allow(actor, "updatePreset")
    current = await presets.get(actor.user_id, preset_id)
    checked_model, checked = await _checked(
        services,
        actor,
        model or current.model,
        settings if settings is not None else current.settings,
    )
    return await presets.update(
        actor.user_id,
        preset_id,
        name=_name(name) if name is not None else None,
        model=checked_model if model is not None else None,
        settings=checked if settings is not None else None,
    )


async def delete_preset(actor: Actor, preset_id: int) -> None:
    policy.allow(actor, "deletePreset")
    await presets.delete(actor.user_id, preset_id)


async def apply_preset(
    services: Services, actor: Actor, session_id: int, preset_id: int
) -> Session:
    """The session takes the preset's model and settings (its own settings
    replaced whole: what the preset leaves unset comes from the space)."""
    rule = policy.allow(actor, "applyPreset")
    session = await access.session(actor, session_id, rule, field="sessionId")
    preset = await presets.get(actor.user_id, preset_id, field="presetId")
    model, settings = await _checked(services, actor, preset.model, preset.settings)
    provider, _, name = model.partition("/")
    return await sessions.configure(
        session.owner_id, session.id, provider=provider, model=name, settings=settings
    )
