"""Sign-in limits every worker shares (issue 16, section 2).

- ``sign_in``: failed sign-ins per (name, address) — the name as its sign-in
  key (NFKC, case-folded), unknown names too — and when that name last signed
  in from that address. Replaces the per-process counts in memory, which a
  restart forgot and each worker kept on its own.
- ``smriti_user.name_key``: the name NFKC-normalised and case-folded, unique,
  so "Ada" and "ada" can no longer be two accounts. Existing names that would
  collide stop the migration before it changes anything, with a message naming
  them: which account keeps the name is the operator's decision, not ours.
"""

import unicodedata
from collections import defaultdict
from typing import Any

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


def _id() -> fields.BigIntField:
    return fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)


def _when() -> Any:
    return fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)


def name_key(name: str) -> str:
    """api.domain.accounts.name_key as it is today (a migration keeps its own copy)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def collisions(users: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Groups of (id, name) whose names are one name without regard to case or width."""
    by_key: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for user_id, name in users:
        by_key[name_key(name)].append((user_id, name))
    return [sorted(group) for group in by_key.values() if len(group) > 1]


def collision_message(groups: list[list[tuple[int, str]]]) -> str:
    named = "; ".join(
        " and ".join(f"{name!r} (id {user_id})" for user_id, name in group) for group in groups
    )
    return (
        f"user names must differ by more than case or width from now on, and these do not: "
        f"{named}. Rename all but one of each (UPDATE smriti_user SET name = 'NEW' WHERE "
        f"id = ID), then start again; nothing was changed."
    )


async def _users(schema_editor: Any) -> list[tuple[int, str]]:
    rows = await schema_editor.client.execute_query_dict("SELECT id, name FROM smriti_user")
    return [(int(row["id"]), str(row["name"])) for row in rows]


async def refuse_collisions(_apps: Any, schema_editor: Any) -> None:
    from ..database import StartupError

    groups = collisions(await _users(schema_editor))
    if groups:
        raise StartupError(collision_message(groups))


async def fill_name_keys(_apps: Any, schema_editor: Any) -> None:
    for user_id, name in await _users(schema_editor):
        statement = "UPDATE smriti_user SET name_key = ? WHERE id = ?"
        if schema_editor.client.capabilities.dialect == "postgres":
            statement = "UPDATE smriti_user SET name_key = $1 WHERE id = $2"
        await schema_editor.client.execute_query(statement, [name_key(name), user_id])


async def nothing(_apps: Any, _schema_editor: Any) -> None:
    """Going back drops the column, and the keys with it."""


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
        ops.RunPython(refuse_collisions, nothing),
        ops.AddField(
            model_name="User",
            name="name_key",
            field=fields.CharField(max_length=100, null=True, unique=True),
        ),
        ops.RunPython(fill_name_keys, nothing),
    ]
