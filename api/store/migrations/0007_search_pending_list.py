"""PostgreSQL: a short pending list for the search index.

A GIN index gathers new entries in an unsorted pending list (4 MB by default)
and merges them into the index when the list is full or VACUUM runs. Every
search reads the whole list: at 100,000 turns it held ~450 pages and cost
~1.2 ms per search, more than the index itself for a rare word (0.6 ms).
64 kB keeps the list to 8 pages; inserts still batch, in smaller merges.
SQLite's FTS5 keeps no such list.
"""

from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

PENDING_LIST_KB = 64


async def shorten(_apps: Any, schema_editor: Any) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(
            f"ALTER INDEX search_entry_document SET (gin_pending_list_limit = {PENDING_LIST_KB})"
        )


async def restore(_apps: Any, schema_editor: Any) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(
            "ALTER INDEX search_entry_document RESET (gin_pending_list_limit)"
        )


class Migration(migrations.Migration):
    dependencies = [("models", "0006_accounts")]

    operations = [ops.RunPython(shorten, restore)]
