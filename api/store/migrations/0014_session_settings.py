"""Sessions and spaces carry instructions and model parameters; replies record theirs (issue 21 §2).

- ``session.settings``: the session's own instructions and parameters
  (``api.domain.types.ChatSettings.to_json``); null: none of its own.
- ``space.settings``: the defaults for the space's sessions, field by field.
- ``preset``: a user's named model + settings (unique name per user),
  chosen from the model picker; deleted with its user.
- ``turn.settings``: on a reply, the effective settings it was asked with,
  written with the turn; null for other turns, replies asked with none, and
  replies saved before this migration.

Added with ALTER TABLE ADD COLUMN (no table rebuild on SQLite), so the
immutability triggers of 0002 stay in place on ``turn`` and keep rejecting
UPDATE; existing rows are not rewritten.
"""

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0013_session_organising")]

    operations = [
        ops.AddField(model_name="Session", name="settings", field=fields.JSONField(null=True)),
        ops.AddField(model_name="Space", name="settings", field=fields.JSONField(null=True)),
        ops.AddField(model_name="Turn", name="settings", field=fields.JSONField(null=True)),
        ops.CreateModel(
            name="Preset",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                (
                    "owner",
                    fields.ForeignKeyField(
                        "models.User",
                        source_field="owner_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="presets",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("name", fields.CharField(max_length=100)),
                ("model", fields.CharField(max_length=300)),
                ("settings", fields.JSONField(null=True)),
                ("created_at", fields.DatetimeField()),
                ("updated_at", fields.DatetimeField()),
            ],
            options={
                "table": "preset",
                "app": "models",
                "pk_attr": "id",
                "unique_together": (("owner_id", "name"),),
            },
            bases=["Model"],
        ),
    ]
