"""A checkpoint may have a second parent: the checkpoint merged into its branch.

Added with ALTER TABLE ADD COLUMN (no table rebuild on SQLite), so the
immutability triggers of 0002 stay in place and keep rejecting UPDATE.
"""

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0002_immutability_triggers")]

    operations = [
        ops.AddField(
            model_name="Checkpoint",
            name="merge_parent",
            field=fields.ForeignKeyField(
                "models.Checkpoint",
                source_field="merge_parent_id",
                null=True,
                db_constraint=True,
                to_field="id",
                related_name=False,
                on_delete=OnDelete.CASCADE,
            ),
        ),
    ]
