"""PostgreSQL: a member's search walks what they may read newest first.

A user who reads more than their own entries (a member of a teammate's space,
``members.shares_anything``) is scoped by an OR of their own turns and
sessions, their spaces' entries and the sessions shared with those spaces.
No index gives that set newest first, so a common word or a phrase of common
words (the walk, api/store/search.py) read and sorted every entry of the
table: 66-87 ms at 100,000 turns. With these indexes each part of the scope
is walked newest first on its own (the owner's turns and sessions, each
member space, each shared session) and the walks are merged
(``api.store.search._READABLE_NEWEST``). The owner's part has an index of its
own because 0004's ``search_entry_newest`` holds the owner's checkpoints too,
which that part skips one by one.

SQLite's FTS5 walks its matches newest first by rowid whatever the scope: it
needs nothing.
"""

from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

_CREATE = (
    "CREATE INDEX IF NOT EXISTS search_entry_own_newest "
    "ON search_entry (owner_id, position DESC) WHERE kind IN (0, 2);"
    "CREATE INDEX IF NOT EXISTS search_entry_space_newest "
    "ON search_entry (space_id, position DESC) WHERE space_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS search_entry_session_newest "
    "ON search_entry (session_id, position DESC) WHERE session_id IS NOT NULL;"
)
_DROP = (
    "DROP INDEX IF EXISTS search_entry_own_newest;"
    "DROP INDEX IF EXISTS search_entry_space_newest;"
    "DROP INDEX IF EXISTS search_entry_session_newest;"
)


async def create_indexes(_apps: Any, schema_editor: Any) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(_CREATE)


async def drop_indexes(_apps: Any, schema_editor: Any) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(_DROP)


class Migration(migrations.Migration):
    dependencies = [("models", "0016_search_skips_copies")]

    operations = [ops.RunPython(create_indexes, drop_indexes)]
