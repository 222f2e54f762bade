"""Sign-in limits every worker shares (issue 16, section 2).

- ``sign_in``: failed sign-ins per (name, address) — the name as its sign-in
  key (NFKC, case-folded), unknown names too — and when that name last signed
  in from that address. Replaces the per-process counts in memory, which a
  restart forgot and each worker kept on its own.
"""

from typing import Any

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


def _id() -> fields.BigIntField:
    return fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)


def _when() -> Any:
    return fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)


class Migration(migrations.Migration):
    dependencies = [("models", "0008_members")]

    operations = [
        ops.CreateModel(
            name="SignIn",
            fields=[
                ("id", _id()),
                ("name", fields.CharField(max_length=100)),
                ("address", fields.CharField(max_length=64)),
                ("failures", fields.IntField(default=0, db_default=0)),
                ("last_failed_at", _when()),
                ("signed_in_at", _when()),
            ],
            options={
                "table": "sign_in",
                "app": "models",
                "unique_together": (("name", "address"),),
                "indexes": [
                    Index(fields=["address", "last_failed_at"]),
                    Index(fields=["last_failed_at"]),
                ],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
    ]
