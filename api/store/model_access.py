"""The models an admin kept for admins ("provider/model")."""

from __future__ import annotations

from datetime import UTC, datetime

from . import sql
from .writes import finished


async def admins_only() -> frozenset[str]:
    """Every model marked admins-only (a short list: one small read)."""
    found = await sql.fetch_rows(
        sql.connection(), "SELECT model FROM model_access WHERE admins_only = ?", [True]
    )
    return frozenset(str(row[0]) for row in found)


async def is_admins_only(model: str) -> bool:
    found = await sql.fetch_rows(
        sql.connection(),
        "SELECT 1 FROM model_access WHERE model = ? AND admins_only = ?",
        [model, True],
    )
    return bool(found)


@finished
async def set_admins_only(model: str, admins_only: bool) -> None:
    """Mark ``model`` admins-only, or open it to everyone again (no row: everyone).
    One statement either way, so two admins at once leave one row."""
    conn = sql.connection()
    if not admins_only:
        await sql.execute(conn, "DELETE FROM model_access WHERE model = ?", [model])
        return
    await sql.execute(
        conn,
        "INSERT INTO model_access (model, admins_only, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (model) DO UPDATE SET admins_only = excluded.admins_only, "
        "updated_at = excluded.updated_at",
        [model, True, datetime.now(UTC)],
    )
