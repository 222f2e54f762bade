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
- Deleting the group's indexed turn (its session deleted) indexes the
  group's oldest surviving turn instead, so the text stays findable once as
  long as a branch holds it.

Copies written before this migration lose their entries when the turn they
copy still exists.
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

# The group of a turn: the first turn (id = root) and its copies.
_SUCCESSOR = (
    "SELECT t.id, t.session_id, t.content FROM turn t "
    "WHERE t.id = {root} OR t.copied_from_id = {root} ORDER BY t.id LIMIT 1"
)

_FORGET_COPIES = {
    "sqlite": (
        f"DELETE FROM search_fts WHERE rowid IN (SELECT c.id * 4 + {TURN} FROM turn c "
        "WHERE c.copied_from_id IN (SELECT id FROM turn));"
    ),
    "postgres": (
        f"DELETE FROM search_entry WHERE kind = {TURN} AND object_id IN (SELECT c.id FROM turn c "
        "WHERE c.copied_from_id IN (SELECT id FROM turn));"
    ),
}


def _sqlite_forward() -> str:
    root = "coalesce(OLD.copied_from_id, OLD.id)"
    successor = _SUCCESSOR.format(root=root)
    return (
        "DROP TRIGGER IF EXISTS search_turn_insert;"
        "DROP TRIGGER IF EXISTS search_turn_delete;"
        "CREATE TRIGGER search_turn_insert AFTER INSERT ON turn "
        "WHEN NEW.copied_from_id IS NULL BEGIN "
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"VALUES (NEW.id * 4 + {TURN}, NEW.content, {TURN}, NEW.id, "
        "(SELECT owner_id FROM session WHERE id = NEW.session_id), NULL, NEW.session_id); END;"
        # The entry, then (when the deleted turn held its group's) the successor's.
        "CREATE TRIGGER search_turn_delete AFTER DELETE ON turn BEGIN "
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT n.id * 4 + {TURN}, n.content, {TURN}, n.id, s.owner_id, NULL, n.session_id "
        f"FROM ({successor}) n JOIN session s ON s.id = n.session_id "
        f"WHERE EXISTS (SELECT 1 FROM search_fts WHERE rowid = OLD.id * 4 + {TURN}); "
        f"DELETE FROM search_fts WHERE rowid = OLD.id * 4 + {TURN}; END;"
    )


def _postgres_forward() -> str:
    successor = _SUCCESSOR.format(root="coalesce(OLD.copied_from_id, OLD.id)")
    return f"""
CREATE OR REPLACE FUNCTION smriti_search_turn() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_entry WHERE kind = {TURN} AND object_id = OLD.id;
        IF FOUND THEN
            INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body)
            SELECT {TURN}, n.id, s.owner_id, NULL, n.session_id, n.content
            FROM ({successor}) n JOIN session s ON s.id = n.session_id
            ON CONFLICT (kind, object_id) DO NOTHING;
        END IF;
        RETURN OLD;
    END IF;
    INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body)
    SELECT {TURN}, NEW.id, s.owner_id, NULL, NEW.session_id, NEW.content
    FROM session s WHERE s.id = NEW.session_id
    ON CONFLICT (kind, object_id) DO UPDATE SET body = EXCLUDED.body;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS turn_search ON turn;
DROP TRIGGER IF EXISTS turn_search_delete ON turn;
CREATE TRIGGER turn_search AFTER INSERT ON turn FOR EACH ROW
    WHEN (NEW.copied_from_id IS NULL) EXECUTE FUNCTION smriti_search_turn();
CREATE TRIGGER turn_search_delete AFTER DELETE ON turn FOR EACH ROW
    EXECUTE FUNCTION smriti_search_turn();
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
            + search._postgres_function(
                "smriti_search_turn",
                TURN,
                f"SELECT {TURN}, NEW.id, s.owner_id, NULL, NEW.session_id, NEW.content "
                "FROM session s WHERE s.id = NEW.session_id",
            )
            + "CREATE TRIGGER turn_search AFTER INSERT OR DELETE ON turn "
            "FOR EACH ROW EXECUTE FUNCTION smriti_search_turn();"
        )
    else:
        insert = search._sqlite_insert(
            TURN, "NEW", "NEW.content", search._SQLITE_TURN_OWNER, "NULL", "NEW.session_id"
        )
        script = (
            "DROP TRIGGER IF EXISTS search_turn_insert;DROP TRIGGER IF EXISTS search_turn_delete;"
            f"CREATE TRIGGER search_turn_insert AFTER INSERT ON turn BEGIN {insert} END;"
            "CREATE TRIGGER search_turn_delete AFTER DELETE ON turn "
            f"BEGIN {search._sqlite_delete(TURN, 'OLD')} END;"
        )
    await schema_editor.client.execute_script(script + "DROP INDEX IF EXISTS turn_copied_from;")


class Migration(migrations.Migration):
    dependencies = [("models", "0015_turn_branches")]

    operations = [ops.RunPython(skip_copies, index_copies)]
