"""Conversation branches: a session branched at a turn of another (issue 21 §1).

- ``session.branched_from_id``: the session it was branched from (null: not a
  branch, or the origin was deleted since — a plain column, not a foreign
  key, so deleting the origin keeps its branches and leaves this as it was;
  readers resolve it leniently).
- ``session.branched_after_sequence``: t, the origin's last turn the branch
  holds (copies of turns 1..t).
- ``session.branch_root_id``: the first session of the family (null: the
  session is its own root); indexed, so a family is one indexed read.
- ``turn.copied_from_id``: for a turn a branch holds as a copy, the turn it
  copies (written at insert: turns are immutable).

Added with ALTER TABLE ADD COLUMN, so the immutability triggers of 0002 stay
in place; existing rows are not rewritten.
"""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0014_session_settings")]

    operations = [
        ops.AddField(
            model_name="Session",
            name="branched_from_id",
            field=fields.BigIntField(null=True),
        ),
        ops.AddField(
            model_name="Session",
            name="branched_after_sequence",
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name="Session",
            name="branch_root_id",
            field=fields.BigIntField(null=True),
        ),
        ops.AddIndex(model_name="Session", index=Index(fields=["branch_root_id"])),
        ops.AddField(
            model_name="Turn",
            name="copied_from_id",
            field=fields.BigIntField(null=True),
        ),
    ]
