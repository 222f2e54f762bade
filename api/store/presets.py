"""Presets: a user's named model + settings. Each user reads and writes only their own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import IntegrityError

from ..domain.types import ChatSettings, Preset
from ..errors import ErrorCode, InputError, NotFound
from . import models, rows
from .writes import finished


def _preset(row: models.Preset) -> Preset:
    return Preset(
        id=row.id,
        owner_id=row.owner_id,  # type: ignore[attr-defined]
        name=row.name,
        model=row.model,
        settings=ChatSettings.from_json(rows.json_value(row.settings)),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _taken(name: str) -> InputError:
    return InputError(
        f"You have a preset named “{name}” already.", code=ErrorCode.CONFLICT, field="name"
    )


async def of_owner(owner_id: int) -> list[Preset]:
    """The user's presets, by name."""
    return [_preset(row) for row in await models.Preset.filter(owner_id=owner_id).order_by("name")]


async def get(owner_id: int, preset_id: int, *, field: str = "id") -> Preset:
    row = await models.Preset.get_or_none(id=preset_id, owner_id=owner_id)
    if row is None:
        raise NotFound("No such preset.", field=field)
    return _preset(row)


@finished
async def create(owner_id: int, *, name: str, model: str, settings: ChatSettings) -> Preset:
    now = datetime.now(UTC)
    try:
        row = await models.Preset.create(
            owner_id=owner_id,
            name=name,
            model=model,
            settings=settings.to_json(),
            created_at=now,
            updated_at=now,
        )
    except IntegrityError as exc:
        raise _taken(name) from exc
    return _preset(row)


@finished
async def update(
    owner_id: int,
    preset_id: int,
    *,
    name: str | None,
    model: str | None,
    settings: ChatSettings | None,
) -> Preset:
    """Change what is given (settings replaced whole)."""
    changes: dict[str, Any] = {"updated_at": datetime.now(UTC)}
    if name is not None:
        changes["name"] = name
    if model is not None:
        changes["model"] = model
    if settings is not None:
        changes["settings"] = settings.to_json()
    try:
        updated = await models.Preset.filter(id=preset_id, owner_id=owner_id).update(**changes)
    except IntegrityError as exc:
        raise _taken(name or "") from exc
    if not updated:
        raise NotFound("No such preset.", field="id")
    return await get(owner_id, preset_id)


@finished
async def delete(owner_id: int, preset_id: int) -> None:
    deleted = await models.Preset.filter(id=preset_id, owner_id=owner_id).delete()
    if not deleted:
        raise NotFound("No such preset.", field="id")
