import functools
from json import dumps, loads

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    initial = True

    operations = [
        ops.CreateModel(
            name="User",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                ("name", fields.CharField(unique=True, max_length=100)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={"table": "smriti_user", "app": "models", "pk_attr": "id"},
            bases=["Model"],
        ),
        ops.CreateModel(
            name="Space",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                ("name", fields.CharField(max_length=200)),
                ("description", fields.TextField(default="", unique=False)),
                (
                    "owner",
                    fields.ForeignKeyField(
                        "models.User",
                        source_field="owner_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="spaces",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ("updated_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "space",
                "app": "models",
                "indexes": [Index(fields=["owner_id", "id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.CreateModel(
            name="Checkpoint",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                ("hash", fields.CharField(max_length=64)),
                (
                    "space",
                    fields.ForeignKeyField(
                        "models.Space",
                        source_field="space_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="checkpoints",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                (
                    "parent",
                    fields.ForeignKeyField(
                        "models.Checkpoint",
                        source_field="parent_id",
                        null=True,
                        db_constraint=True,
                        to_field="id",
                        related_name="children",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("branch_name", fields.CharField(max_length=100)),
                ("title", fields.CharField(max_length=200)),
                ("objective", fields.TextField(default="", unique=False)),
                ("summary", fields.TextField(default="", unique=False)),
                (
                    "decisions",
                    fields.JSONField(
                        default=list,
                        encoder=functools.partial(dumps, separators=(",", ":")),
                        decoder=loads,
                    ),
                ),
                (
                    "tasks",
                    fields.JSONField(
                        default=list,
                        encoder=functools.partial(dumps, separators=(",", ":")),
                        decoder=loads,
                    ),
                ),
                (
                    "open_questions",
                    fields.JSONField(
                        default=list,
                        encoder=functools.partial(dumps, separators=(",", ":")),
                        decoder=loads,
                    ),
                ),
                (
                    "entities",
                    fields.JSONField(
                        default=list,
                        encoder=functools.partial(dumps, separators=(",", ":")),
                        decoder=loads,
                    ),
                ),
                ("author_agent", fields.CharField(default="user", max_length=200)),
                ("source_session_id", fields.BigIntField(null=True)),
                ("source_first", fields.IntField(null=True)),
                ("source_last", fields.IntField(null=True)),
                ("base_sequence", fields.IntField(default=0)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "checkpoint",
                "app": "models",
                "unique_together": (("space_id", "hash"),),
                "indexes": [Index(fields=["parent_id"]), Index(fields=["space_id", "id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.CreateModel(
            name="Branch",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                (
                    "space",
                    fields.ForeignKeyField(
                        "models.Space",
                        source_field="space_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="branches",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("name", fields.CharField(max_length=100)),
                (
                    "head",
                    fields.ForeignKeyField(
                        "models.Checkpoint",
                        source_field="head_id",
                        db_constraint=True,
                        to_field="id",
                        related_name=False,
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ("updated_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "branch",
                "app": "models",
                "unique_together": (("space_id", "name"),),
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.CreateModel(
            name="Session",
            fields=[
                (
                    "id",
                    fields.BigIntField(
                        generated=True, primary_key=True, unique=True, db_index=True
                    ),
                ),
                ("title", fields.CharField(default="", max_length=200)),
                (
                    "space",
                    fields.ForeignKeyField(
                        "models.Space",
                        source_field="space_id",
                        null=True,
                        db_constraint=True,
                        to_field="id",
                        related_name="sessions",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("branch_name", fields.CharField(default="main", max_length=100)),
                ("active_provider", fields.CharField(max_length=100)),
                ("active_model", fields.CharField(max_length=200)),
                (
                    "seeded_from",
                    fields.ForeignKeyField(
                        "models.Checkpoint",
                        source_field="seeded_from_id",
                        null=True,
                        db_constraint=True,
                        to_field="id",
                        related_name=False,
                        on_delete=OnDelete.SET_NULL,
                    ),
                ),
                (
                    "forked_from",
                    fields.ForeignKeyField(
                        "models.Checkpoint",
                        source_field="forked_from_id",
                        null=True,
                        db_constraint=True,
                        to_field="id",
                        related_name=False,
                        on_delete=OnDelete.SET_NULL,
                    ),
                ),
                ("memory_scope", fields.CharField(default="LATEST_1", max_length=20)),
                (
                    "mount_checkpoint",
                    fields.ForeignKeyField(
                        "models.Checkpoint",
                        source_field="mount_checkpoint_id",
                        null=True,
                        db_constraint=True,
                        to_field="id",
                        related_name=False,
                        on_delete=OnDelete.SET_NULL,
                    ),
                ),
                ("mount_base_sequence", fields.IntField(null=True)),
                ("last_sequence_number", fields.IntField(default=0)),
                (
                    "owner",
                    fields.ForeignKeyField(
                        "models.User",
                        source_field="owner_id",
                        db_constraint=True,
                        to_field="id",
                        related_name="sessions",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ("updated_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "session",
                "app": "models",
                "indexes": [Index(fields=["owner_id", "id"]), Index(fields=["space_id", "id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.CreateModel(
            name="Turn",
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
                        related_name="turns",
                        on_delete=OnDelete.CASCADE,
                    ),
                ),
                ("sequence_number", fields.IntField()),
                ("role", fields.CharField(max_length=10)),
                ("content", fields.TextField(unique=False)),
                ("provider", fields.CharField(null=True, max_length=100)),
                ("model", fields.CharField(null=True, max_length=200)),
                ("token_count", fields.IntField(default=0)),
                ("prompt_tokens", fields.IntField(null=True)),
                ("completion_tokens", fields.IntField(null=True)),
                ("cost", fields.FloatField(null=True)),
                ("interrupted", fields.BooleanField(default=False)),
                ("reply_to_sequence", fields.IntField(null=True)),
                ("idempotency_key", fields.CharField(null=True, max_length=200)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "turn",
                "app": "models",
                "unique_together": (
                    ("session_id", "sequence_number"),
                    ("session_id", "idempotency_key"),
                ),
                "indexes": [Index(fields=["session_id", "created_at"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
    ]
