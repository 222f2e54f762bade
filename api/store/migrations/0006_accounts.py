"""Accounts (issue 9, phase 1): passwords on users, API tokens, web sessions.

A user with a password is an account; the built-in local user has none, so a
database without accounts behaves as before. Tokens and browser sessions are
kept only as SHA-256 hashes of their secrets.
"""

from typing import Any

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


def _id() -> fields.BigIntField:
    return fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)


def _user(related_name: str) -> Any:
    return fields.ForeignKeyField(
        "models.User",
        source_field="user_id",
        db_constraint=True,
        to_field="id",
        related_name=related_name,
        on_delete=OnDelete.CASCADE,
    )


class Migration(migrations.Migration):
    dependencies = [("models", "0005_space_origin")]

    operations = [
        ops.AddField(
            model_name="User",
            name="password_hash",
            field=fields.CharField(max_length=200, null=True),
        ),
        ops.AddField(
            model_name="User",
            name="is_admin",
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.AddField(
            model_name="User",
            name="disabled",
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.CreateModel(
            name="ApiToken",
            fields=[
                ("id", _id()),
                ("user", _user("api_tokens")),
                ("name", fields.CharField(max_length=100)),
                ("token_hash", fields.CharField(unique=True, max_length=64)),
                ("prefix", fields.CharField(max_length=16)),
                ("read_only", fields.BooleanField(default=False, db_default=False)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
                (
                    "last_used_at",
                    fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
                ),
                ("expires_at", fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ("revoked_at", fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={
                "table": "api_token",
                "app": "models",
                "indexes": [Index(fields=["user_id", "id"])],
                "pk_attr": "id",
            },
            bases=["Model"],
        ),
        ops.CreateModel(
            name="WebSession",
            fields=[
                ("id", _id()),
                ("user", _user("web_sessions")),
                ("session_hash", fields.CharField(unique=True, max_length=64)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ("last_seen_at", fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={"table": "web_session", "app": "models", "pk_attr": "id"},
            bases=["Model"],
        ),
    ]
