"""Turns and checkpoints are immutable: the database rejects UPDATE on them.

Deleting rows stays possible (deleting a whole session or space cascades).
The SQL differs per dialect, so this is a RunPython step that asks the
schema editor which database it is talking to.
"""

from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

IMMUTABLE_TABLES = ("turn", "checkpoint")


def _sqlite(table: str) -> str:
    return (
        f"CREATE TRIGGER IF NOT EXISTS {table}_immutable BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} rows are immutable'); END;"
    )


def _postgres(table: str) -> str:
    return (
        f"DROP TRIGGER IF EXISTS {table}_immutable ON {table};"
        f"CREATE TRIGGER {table}_immutable BEFORE UPDATE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION smriti_reject_update();"
    )


POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION smriti_reject_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""


async def create_triggers(_apps: Any, schema_editor: Any) -> None:
    dialect = schema_editor.client.capabilities.dialect
    if dialect == "sqlite":
        script = "\n".join(_sqlite(t) for t in IMMUTABLE_TABLES)
    elif dialect == "postgres":
        script = POSTGRES_FUNCTION + "\n".join(_postgres(t) for t in IMMUTABLE_TABLES)
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported
        raise RuntimeError(f"Smriti does not support the {dialect} dialect")
    await schema_editor.client.execute_script(script)


async def drop_triggers(_apps: Any, schema_editor: Any) -> None:
    dialect = schema_editor.client.capabilities.dialect
    for table in IMMUTABLE_TABLES:
        suffix = f" ON {table}" if dialect == "postgres" else ""
        await schema_editor.client.execute_script(
            f"DROP TRIGGER IF EXISTS {table}_immutable{suffix};"
        )


class Migration(migrations.Migration):
    dependencies = [("models", "0001_initial")]

    operations = [ops.RunPython(create_triggers, drop_triggers)]
