"""The models an admin kept for admins ("provider/model")."""

from __future__ import annotations

from datetime import UTC, datetime

from . import models
from .writes import finished


async def admins_only() -> frozenset[str]:
    """Every model marked admins-only (a short list: one small read)."""
    found = await models.ModelAccess.filter(admins_only=True).values_list("model", flat=True)
    return frozenset(str(name) for name in found)


async def is_admins_only(model: str) -> bool:
    return await models.ModelAccess.filter(model=model, admins_only=True).exists()


@finished
async def set_admins_only(model: str, admins_only: bool) -> None:
    """Mark ``model`` admins-only, or open it to everyone again (no row: everyone)."""
    if not admins_only:
        await models.ModelAccess.filter(model=model).delete()
        return
    now = datetime.now(UTC)
    updated = await models.ModelAccess.filter(model=model).update(admins_only=True, updated_at=now)
    if not updated:
        await models.ModelAccess.get_or_create(
            model=model, defaults={"admins_only": True, "updated_at": now}
        )
