"""Who is answering a user turn sent with an idempotency key (issue 17, section 1).

- ``reply_claim``: one row per such turn while a request asks the provider for
  its reply (``holder``, until ``expires_at`` in milliseconds since the epoch,
  pushed on while it works), or after a try that failed, with its error. The
  same key sent again meanwhile, to any worker or server, waits for that
  answer instead of asking the provider a second time. Deleted with its turn.
"""

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0010_finish_reason")]

    operations = [
        ops.CreateModel(
            name="ReplyClaim",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                (
                    "turn",
                    fields.OneToOneField(
                        "models.Turn",
                        source_field="turn_id",
                        db_constraint=True,
                        to_field="id",
                        related_name=False,
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("holder", fields.CharField(max_length=32)),
                ("expires_at", fields.BigIntField()),
                ("failure_code", fields.CharField(null=True, max_length=40)),
                ("failure_message", fields.TextField(null=True, unique=False)),
                ("failure_retry_after", fields.FloatField(null=True)),
            ],
            options={"table": "reply_claim", "app": "models", "pk_attr": "id"},
            bases=["Model"],
        ),
    ]
