"""Presets: a user's named model + settings. Each user reads and writes only their own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..domain.types import ChatSettings, Preset
from ..errors import ErrorCode, InputError, NotFound
from . import rows, sql
from .tables import PRESET
from .writes import finished

_MINE = "id = ? AND owner_id = ?"


def _taken(name: str) -> InputError:
    return InputError(
        f"You have a preset named “{name}” already.", code=ErrorCode.CONFLICT, field="name"
    )


async def _select(where: str, params: list[Any]) -> list[Preset]:
    found = await sql.fetch_rows(
        sql.connection(), f"SELECT {PRESET.select()} FROM preset WHERE {where}", params
    )
    return [rows.preset(row) for row in found]


async def of_owner(owner_id: int) -> list[Preset]:
    """The user's presets, by name."""
    return await _select("owner_id = ? ORDER BY name", [owner_id])


async def get(owner_id: int, preset_id: int, *, field: str = "id") -> Preset:
    found = await _select(_MINE, [preset_id, owner_id])
    if not found:
        raise NotFound("No such preset.", field=field)
    return found[0]


@finished
async def create(owner_id: int, *, name: str, model: str, settings: ChatSettings) -> Preset:
    now = datetime.now(UTC)
    values = dict(
        owner_id=owner_id,
        name=name,
        model=model,
        settings=settings.to_json(),
        created_at=now,
        updated_at=now,
    )
    try:
        return rows.preset(await sql.insert(sql.connection(), PRESET, values))
    except sql.IntegrityError as exc:
        raise _taken(name) from exc


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
        updated = await sql.update(sql.connection(), PRESET, changes, _MINE, [preset_id, owner_id])
    except sql.IntegrityError as exc:
        raise _taken(name or "") from exc
    if not updated:
        raise NotFound("No such preset.", field="id")
    return await get(owner_id, preset_id)


@finished
async def delete(owner_id: int, preset_id: int) -> None:
    deleted = await sql.write(
        sql.connection(), f"DELETE FROM preset WHERE {_MINE}", [preset_id, owner_id]
    )
    if not deleted:
        raise NotFound("No such preset.", field="id")
