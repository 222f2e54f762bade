"""Organising sessions: pin, archive and tags (issue 21 §3).

- ``session.pinned_at``: when the session was pinned (null: not pinned);
  pinned sessions are listed first, the most recently pinned first.
- ``session.archived_at``: when it was archived (null: not archived);
  archived sessions are left out of listings unless asked for, and are still
  searched and exported.
- ``session_tag``: one row per tag of a session, its text as the user wrote
  it (``tag``) and its key (``tag_key``, case-folded: what equality and the
  filter compare), unique per session. A table rather than a JSON list so the
  tag filter is one indexed EXISTS on both SQLite and PostgreSQL (no
  json_each / jsonb operators to keep in step).

Sessions are mutable rows (no immutability trigger), so the columns are added
with ALTER TABLE ADD COLUMN and updated in place.
"""

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0012_item_ids")]

    operations = [
        ops.AddField(
            model_name="Session",
            name="pinned_at",
            field=fields.DatetimeField(null=True),
        ),
        ops.AddField(
            model_name="Session",
            name="archived_at",
            field=fields.DatetimeField(null=True),
        ),
        ops.CreateModel(
            name="SessionTag",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                (
                    "session",
                    fields.ForeignKeyField(
                        "models.Session",
                        source_field="session_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="tags",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("tag", fields.CharField(max_length=40)),
                ("tag_key", fields.CharField(max_length=160)),
            ],
            options={
                "table": "session_tag",
                "app": "models",
                "unique_together": (("session_id", "tag_key"),),
                "indexes": [Index(fields=["tag_key", "session_id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
    ]
