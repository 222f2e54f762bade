"""Checkpoint items have identities (issue 18 §1).

- ``checkpoint.item_ids``: per list field (``decisions``, ``tasks``,
  ``open_questions``, ``entities``) the list of its items' ids, in the items'
  order; part of the hash (``itemIds``). Null for every checkpoint saved
  before this migration: their ids are implicit (derived from the hash,
  ``api.domain.identity``), so their hashes are unchanged.

Added with ALTER TABLE ADD COLUMN (no table rebuild on SQLite), so the
immutability triggers of 0002 stay in place and keep rejecting UPDATE;
existing rows are not rewritten.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0011_reply_claim")]

    operations = [
        ops.AddField(
            model_name="Checkpoint",
            name="item_ids",
            field=fields.JSONField(null=True),
        ),
    ]
