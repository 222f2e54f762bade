"""Search finds a turn a conversation's branches share once (issue 21).

A branch copies the turns it shares with its origin (0015); indexing every
copy made a word of a shared turn a hit per branch, and the index's turn
trigger most of what a branch costs (2.5-3.2 s of a 10,000-turn fork on
PostgreSQL, 0.56 s without it). Now:

- A copy is not indexed: the insert trigger runs only for a turn whose
  ``copied_from_id`` is null, so a shared turn is found in the session that
  first had it.
- ``copied_from_id`` names that first turn, never a copy (a copy of a copy
  names the turn the first copy names: ``api.store.sessions.COPY_TURNS``), so
  the first turn and its copies form one group, found through the partial
  index ``turn_copied_from``.
- Deleting a session first indexes, for each turn of it that held its
  group's entry, the group's oldest copy in another session (a trigger before
  the session's delete), so the text stays findable once as long as a branch
  holds it.

Copies written before this migration keep an entry only when they hold their
group's (the turn they copy is gone, and no older copy of it is left), so no
group has two entries and a successor is never indexed twice.
"""

import importlib
from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

TURN = 0  # the turn entries' kind (0004)

_INDEX = (
    "CREATE INDEX IF NOT EXISTS turn_copied_from ON turn (copied_from_id) "
    "WHERE copied_from_id IS NOT NULL;"
)

# A session's turns are deleted with it (turns are never deleted alone), so
# the successors are indexed in one statement before it is. Per deleted turn
# (a trigger on turn) it cost 10,000 lookups and inserts for a 10,000-turn
# origin of two branches: 5.7 s instead of 1 on PostgreSQL; on SQLite 12 s, each
# insert between FTS5 deletes of lower rowids making it flush its pending
# changes. A turn holds its group's entry when it is the group's oldest
# surviving turn (the first turn, or once it is gone the oldest copy); its
# successor is the oldest copy in another session.
_HELD = (
    "(h.copied_from_id IS NULL OR (NOT EXISTS (SELECT 1 FROM turn o WHERE o.id = h.copied_from_id) "
    "AND NOT EXISTS (SELECT 1 FROM turn c WHERE c.copied_from_id = h.copied_from_id "
    "AND c.id < h.id)))"
)
_SUCCESSORS = (
    "FROM turn h JOIN turn n ON n.id = (SELECT min(c.id) FROM turn c "
    "WHERE c.copied_from_id = coalesce(h.copied_from_id, h.id) AND c.session_id <> OLD.id) "
    f"JOIN session s ON s.id = n.session_id WHERE h.session_id = OLD.id AND {_HELD} "
    "ORDER BY n.id"
)


# Copies written before this migration: only the holders keep an entry.
_COPIES_HELD = (
    "SELECT h.id FROM turn h WHERE h.copied_from_id IS NOT NULL AND "
    "NOT EXISTS (SELECT 1 FROM turn o WHERE o.id = h.copied_from_id) "
    "AND NOT EXISTS (SELECT 1 FROM turn c WHERE c.copied_from_id = h.copied_from_id "
    "AND c.id < h.id)"
)
_FORGET_COPIES = {
    "sqlite": (
        f"DELETE FROM search_fts WHERE rowid IN (SELECT c.id * 4 + {TURN} FROM turn c "
        f"WHERE c.copied_from_id IS NOT NULL AND c.id NOT IN ({_COPIES_HELD}));"
    ),
    "postgres": (
        f"DELETE FROM search_entry WHERE kind = {TURN} AND object_id IN (SELECT c.id FROM turn c "
        f"WHERE c.copied_from_id IS NOT NULL AND c.id NOT IN ({_COPIES_HELD}));"
    ),
}


def _sqlite_forward() -> str:
    return (
        "DROP TRIGGER IF EXISTS search_turn_insert;"
        "DROP TRIGGER IF EXISTS search_session_successors;"
        "CREATE TRIGGER search_turn_insert AFTER INSERT ON turn "
        "WHEN NEW.copied_from_id IS NULL BEGIN "
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"VALUES (NEW.id * 4 + {TURN}, NEW.content, {TURN}, NEW.id, "
        "(SELECT owner_id FROM session WHERE id = NEW.session_id), NULL, NEW.session_id); END;"
        "CREATE TRIGGER search_session_successors BEFORE DELETE ON session BEGIN "
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT n.id * 4 + {TURN}, n.content, {TURN}, n.id, s.owner_id, NULL, n.session_id "
        f"{_SUCCESSORS}; END;"
    )


def _postgres_forward() -> str:
    # smriti_search_turn (0004) indexes an inserted turn and forgets a deleted one.
    return f"""
CREATE OR REPLACE FUNCTION smriti_search_successors() RETURNS trigger AS $$
BEGIN
    INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body)
    SELECT {TURN}, n.id, s.owner_id, NULL, n.session_id, n.content {_SUCCESSORS}
    ON CONFLICT (kind, object_id) DO NOTHING;
    RETURN OLD;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS turn_search ON turn;
DROP TRIGGER IF EXISTS turn_search_delete ON turn;
DROP TRIGGER IF EXISTS session_search_successors ON session;
CREATE TRIGGER turn_search AFTER INSERT ON turn FOR EACH ROW
    WHEN (NEW.copied_from_id IS NULL) EXECUTE FUNCTION smriti_search_turn();
CREATE TRIGGER turn_search_delete AFTER DELETE ON turn FOR EACH ROW
    EXECUTE FUNCTION smriti_search_turn();
CREATE TRIGGER session_search_successors BEFORE DELETE ON session FOR EACH ROW
    EXECUTE FUNCTION smriti_search_successors();
"""


async def skip_copies(_apps: Any, schema_editor: Any) -> None:
    dialect = schema_editor.client.capabilities.dialect
    if dialect == "sqlite":
        script = _sqlite_forward()
    elif dialect == "postgres":
        script = _postgres_forward()
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported
        raise RuntimeError(f"Smriti does not support the {dialect} dialect")
    await schema_editor.client.execute_script(_INDEX + script + _FORGET_COPIES[dialect])


async def index_copies(_apps: Any, schema_editor: Any) -> None:
    """Back to 0004's turn triggers (copies indexed from then on; those written
    meanwhile stay unindexed)."""
    dialect = schema_editor.client.capabilities.dialect
    search = importlib.import_module(".0004_search", __package__)
    if dialect == "postgres":
        script = (
            "DROP TRIGGER IF EXISTS turn_search ON turn;"
            "DROP TRIGGER IF EXISTS turn_search_delete ON turn;"
            "DROP TRIGGER IF EXISTS session_search_successors ON session;"
            "DROP FUNCTION IF EXISTS smriti_search_successors();"
            "CREATE TRIGGER turn_search AFTER INSERT OR DELETE ON turn "
            "FOR EACH ROW EXECUTE FUNCTION smriti_search_turn();"
        )
    else:
        insert = search._sqlite_insert(
            TURN, "NEW", "NEW.content", search._SQLITE_TURN_OWNER, "NULL", "NEW.session_id"
        )
        script = (
            "DROP TRIGGER IF EXISTS search_turn_insert;"
            "DROP TRIGGER IF EXISTS search_session_successors;"
            f"CREATE TRIGGER search_turn_insert AFTER INSERT ON turn BEGIN {insert} END;"
        )
    await schema_editor.client.execute_script(script + "DROP INDEX IF EXISTS turn_copied_from;")


class Migration(migrations.Migration):
    dependencies = [("models", "0015_turn_branches")]

    operations = [ops.RunPython(skip_copies, index_copies)]
