"""Shared spaces (issue 9, phase 2): members with roles, session visibility,
authorship of turns and checkpoints, admin-only models.

- ``space_member``: (space, user, role OWNER | EDITOR | VIEWER). Every
  existing space gets its creator as OWNER here, and every new one at its
  creation, so one indexed lookup answers "may this user read this space, and
  with which role" (no OR with ``space.owner_id``).
- ``session.visibility``: PRIVATE (the default, and every existing session)
  or SPACE (readable by the members of its space).
- ``turn.author_id`` / ``checkpoint.author_id`` and ``*.author_token``: who
  wrote the row and, for an API token, the token's name. Turns and
  checkpoints are immutable (0002 rejects UPDATE), so existing rows are not
  rewritten: a null author reads as the session's owner (a turn) or the
  space's creator (a checkpoint), who wrote every row before this migration
  (only a space's owner could attach sessions to it). Added with ALTER TABLE
  ADD COLUMN, which keeps the triggers. The checkpoint hash does not cover
  these columns.
- ``model_access``: the models an admin marked as admins-only ("provider/model").
"""

from typing import Any

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


def _id() -> fields.BigIntField:
    return fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)


def _fk(model: str, column: str, related_name: str) -> Any:
    return fields.ForeignKeyField(
        model,
        source_field=column,
        db_constraint=True,
        to_field="id",
        related_name=related_name,
        on_delete=OnDelete.CASCADE,
    )


BACKFILL_OWNERS = (
    "INSERT INTO space_member (space_id, user_id, role, created_at) "
    "SELECT id, owner_id, 'OWNER', created_at FROM space"
)


async def backfill_owners(_apps: Any, schema_editor: Any) -> None:
    await schema_editor.client.execute_script(BACKFILL_OWNERS + ";")


async def nothing(_apps: Any, _schema_editor: Any) -> None:
    """Going back drops the table, and the rows with it."""


class Migration(migrations.Migration):
    dependencies = [("models", "0007_search_pending_list")]

    operations = [
        ops.CreateModel(
            name="SpaceMember",
            fields=[
                ("id", _id()),
                ("space", _fk("models.Space", "space_id", "members")),
                ("user", _fk("models.User", "user_id", "memberships")),
                ("role", fields.CharField(max_length=10)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "space_member",
                "app": "models",
                "unique_together": (("space_id", "user_id"),),
                "indexes": [Index(fields=["user_id", "space_id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.RunPython(backfill_owners, nothing),
        ops.AddField(
            model_name="Session",
            name="visibility",
            field=fields.CharField(max_length=10, default="PRIVATE", db_default="PRIVATE"),
        ),
        ops.AddField(model_name="Turn", name="author_id", field=fields.BigIntField(null=True)),
        ops.AddField(
            model_name="Turn",
            name="author_token",
            field=fields.CharField(max_length=100, null=True),
        ),
        ops.AddField(
            model_name="Checkpoint", name="author_id", field=fields.BigIntField(null=True)
        ),
        ops.AddField(
            model_name="Checkpoint",
            name="author_token",
            field=fields.CharField(max_length=100, null=True),
        ),
        ops.CreateModel(
            name="ModelAccess",
            fields=[
                ("id", _id()),
                ("model", fields.CharField(unique=True, max_length=300)),
                ("admins_only", fields.BooleanField(default=False, db_default=False)),
                ("updated_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={"table": "model_access", "app": "models", "pk_attr": "id"},
            bases=["Model"],
        ),
    ]
