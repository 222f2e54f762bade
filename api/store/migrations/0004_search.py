"""Full-text search: one index over turns, checkpoints, sessions and spaces.

SQLite: an FTS5 table ``search_fts`` (tokeniser ``unicode61 remove_diacritics
2``: Unicode word boundaries, case and accents folded, so "cafe" finds
"café"). PostgreSQL: a table ``search_entry`` whose ``document`` is
``to_tsvector('simple', body)`` under a GIN index. ``simple`` because the
text is in any language: a stemming configuration (``english``) would stem
German or Hindi as if it were English, and ``unaccent`` is an extension
Smriti cannot assume it may install; so on PostgreSQL "cafe" does not find
"café" (the exact word does). Punctuation becomes a space before parsing:
PostgreSQL's parser reads "<trip>" as an HTML tag, "a@b.org" as one e-mail
token and "3.14" as one number, none of which a search for "trip", "a" or
"3 14" would match; without punctuation its words are the sanitiser's
words (api/domain/search_query.py) and FTS5's.

Triggers keep the index current inside the transaction that writes the row:
turns and checkpoints are immutable (insert and delete only), a session's
title and a space's name and description can change, and deleting a session
or space cascades to its rows, whose delete triggers remove their entries.

Each entry keeps its owner (and its space or session), so a search is scoped
the way every other query is, without joining the source tables.
"""

from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

# Entry kinds; on SQLite the FTS rowid is ``object_id * 4 + kind`` so an
# entry is found by its object without a scan.
TURN, CHECKPOINT, SESSION, SPACE = 0, 1, 2, 3

_ITEM_COLUMNS = ("decisions", "tasks", "open_questions", "entities")


def _sqlite_checkpoint_body(row: str) -> str:
    items = " UNION ALL ".join(f"SELECT value FROM json_each({row}.{c})" for c in _ITEM_COLUMNS)
    return (
        f"{row}.title || char(10) || {row}.objective || char(10) || {row}.summary || char(10) || "
        f"coalesce((SELECT group_concat(value, char(10)) FROM ({items})), '')"
    )


def _sqlite_insert(kind: int, row: str, body: str, owner: str, space: str, session: str) -> str:
    return (
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"VALUES ({row}.id * 4 + {kind}, {body}, {kind}, {row}.id, {owner}, {space}, {session});"
    )


def _sqlite_delete(kind: int, row: str) -> str:
    return f"DELETE FROM search_fts WHERE rowid = {row}.id * 4 + {kind};"


_SQLITE_TURN_OWNER = "(SELECT owner_id FROM session WHERE id = NEW.session_id)"
_SQLITE_CHECKPOINT_OWNER = "(SELECT owner_id FROM space WHERE id = NEW.space_id)"
_SQLITE_SPACE_BODY = "NEW.name || char(10) || NEW.description"


def _sqlite_script() -> str:
    turn = _sqlite_insert(TURN, "NEW", "NEW.content", _SQLITE_TURN_OWNER, "NULL", "NEW.session_id")
    checkpoint = _sqlite_insert(
        CHECKPOINT,
        "NEW",
        _sqlite_checkpoint_body("NEW"),
        _SQLITE_CHECKPOINT_OWNER,
        "NEW.space_id",
        "NULL",
    )
    session = _sqlite_insert(SESSION, "NEW", "NEW.title", "NEW.owner_id", "NULL", "NEW.id")
    space = _sqlite_insert(SPACE, "NEW", _SQLITE_SPACE_BODY, "NEW.owner_id", "NEW.id", "NULL")
    statements = [
        "CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5("
        "body, kind UNINDEXED, object_id UNINDEXED, owner_id UNINDEXED, "
        "space_id UNINDEXED, session_id UNINDEXED, "
        "tokenize = 'unicode61 remove_diacritics 2');",
        f"CREATE TRIGGER search_turn_insert AFTER INSERT ON turn BEGIN {turn} END;",
        "CREATE TRIGGER search_turn_delete AFTER DELETE ON turn "
        f"BEGIN {_sqlite_delete(TURN, 'OLD')} END;",
        "CREATE TRIGGER search_checkpoint_insert AFTER INSERT ON checkpoint "
        f"BEGIN {checkpoint} END;",
        "CREATE TRIGGER search_checkpoint_delete AFTER DELETE ON checkpoint "
        f"BEGIN {_sqlite_delete(CHECKPOINT, 'OLD')} END;",
        f"CREATE TRIGGER search_session_insert AFTER INSERT ON session BEGIN {session} END;",
        # Only a new title reindexes: every send updates the session's counter.
        "CREATE TRIGGER search_session_update AFTER UPDATE OF title ON session "
        f"BEGIN {_sqlite_delete(SESSION, 'OLD')} {session} END;",
        "CREATE TRIGGER search_session_delete AFTER DELETE ON session "
        f"BEGIN {_sqlite_delete(SESSION, 'OLD')} END;",
        f"CREATE TRIGGER search_space_insert AFTER INSERT ON space BEGIN {space} END;",
        "CREATE TRIGGER search_space_update AFTER UPDATE OF name, description ON space "
        f"BEGIN {_sqlite_delete(SPACE, 'OLD')} {space} END;",
        "CREATE TRIGGER search_space_delete AFTER DELETE ON space "
        f"BEGIN {_sqlite_delete(SPACE, 'OLD')} END;",
    ]
    return "\n".join(statements) + "\n" + sqlite_backfill()


def sqlite_backfill() -> str:
    """Index the rows written before this migration."""
    statements = [
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT s.id * 4 + {SPACE}, s.name || char(10) || s.description, {SPACE}, s.id, "
        "s.owner_id, s.id, NULL FROM space s;",
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT s.id * 4 + {SESSION}, s.title, {SESSION}, s.id, s.owner_id, NULL, s.id "
        "FROM session s;",
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT t.id * 4 + {TURN}, t.content, {TURN}, t.id, s.owner_id, NULL, t.session_id "
        "FROM turn t JOIN session s ON s.id = t.session_id;",
        "INSERT INTO search_fts (rowid, body, kind, object_id, owner_id, space_id, session_id) "
        f"SELECT c.id * 4 + {CHECKPOINT}, {_sqlite_checkpoint_body('c')}, {CHECKPOINT}, c.id, "
        "s.owner_id, c.space_id, NULL FROM checkpoint c JOIN space s ON s.id = c.space_id;",
    ]
    return "\n".join(statements)


def _postgres_checkpoint_body(row: str) -> str:
    items = " UNION ALL ".join(
        f"SELECT jsonb_array_elements_text(to_jsonb({row}.{c})) AS value" for c in _ITEM_COLUMNS
    )
    return (
        f"concat_ws(E'\\n', {row}.title, {row}.objective, {row}.summary, "
        f"coalesce((SELECT string_agg(value, E'\\n') FROM ({items}) AS items), ''))"
    )


_POSTGRES_TABLE = """
CREATE TABLE IF NOT EXISTS search_entry (
    kind SMALLINT NOT NULL,
    object_id BIGINT NOT NULL,
    owner_id BIGINT NOT NULL,
    space_id BIGINT,
    session_id BIGINT,
    body TEXT NOT NULL,
    document TSVECTOR GENERATED ALWAYS AS (
        to_tsvector('simple', regexp_replace(body, '[[:punct:]]+', ' ', 'g'))
    ) STORED,
    position BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (kind, object_id)
);
CREATE INDEX IF NOT EXISTS search_entry_document ON search_entry USING GIN (document);
CREATE INDEX IF NOT EXISTS search_entry_newest ON search_entry (owner_id, position DESC);
"""

_POSTGRES_UPSERT = (
    "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
    "{select} ON CONFLICT (kind, object_id) DO UPDATE SET body = EXCLUDED.body;"
)


def _postgres_function(name: str, kind: int, select: str) -> str:
    upsert = _POSTGRES_UPSERT.format(select=select)
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_entry WHERE kind = {kind} AND object_id = OLD.id;
        RETURN OLD;
    END IF;
    {upsert}
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _postgres_script() -> str:
    functions = {
        "turn": (
            TURN,
            f"SELECT {TURN}, NEW.id, s.owner_id, NULL, NEW.session_id, NEW.content "
            "FROM session s WHERE s.id = NEW.session_id",
            "INSERT OR DELETE",
        ),
        "checkpoint": (
            CHECKPOINT,
            f"SELECT {CHECKPOINT}, NEW.id, s.owner_id, NEW.space_id, NULL, "
            f"{_postgres_checkpoint_body('NEW')} FROM space s WHERE s.id = NEW.space_id",
            "INSERT OR DELETE",
        ),
        "session": (
            SESSION,
            f"SELECT {SESSION}, NEW.id, NEW.owner_id, NULL::BIGINT, NEW.id, NEW.title",
            # Only a new title reindexes: every send updates the session's counter.
            "INSERT OR DELETE OR UPDATE OF title",
        ),
        "space": (
            SPACE,
            f"SELECT {SPACE}, NEW.id, NEW.owner_id, NEW.id, NULL::BIGINT, "
            "concat_ws(E'\\n', NEW.name, NEW.description)",
            "INSERT OR DELETE OR UPDATE OF name, description",
        ),
    }
    parts = [_POSTGRES_TABLE]
    for table, (kind, select, events) in functions.items():
        name = f"smriti_search_{table}"
        parts.append(_postgres_function(name, kind, select))
        parts.append(
            f"DROP TRIGGER IF EXISTS {table}_search ON {table};"
            f"CREATE TRIGGER {table}_search AFTER {events} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {name}();"
        )
    parts.append(postgres_backfill())
    return "\n".join(parts)


def postgres_backfill() -> str:
    """Index the rows written before this migration."""
    return (
        "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
        f"SELECT {SPACE}, id, owner_id, id, NULL, concat_ws(E'\\n', name, description) FROM space "
        "ON CONFLICT DO NOTHING;"
        "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
        f"SELECT {SESSION}, id, owner_id, NULL, id, title FROM session ON CONFLICT DO NOTHING;"
        "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
        f"SELECT {TURN}, t.id, s.owner_id, NULL, t.session_id, t.content "
        "FROM turn t JOIN session s ON s.id = t.session_id ON CONFLICT DO NOTHING;"
        "INSERT INTO search_entry (kind, object_id, owner_id, space_id, session_id, body) "
        f"SELECT {CHECKPOINT}, c.id, s.owner_id, c.space_id, NULL, "
        f"{_postgres_checkpoint_body('c')} "
        "FROM checkpoint c JOIN space s ON s.id = c.space_id ON CONFLICT DO NOTHING;"
    )


async def create_search(_apps: Any, schema_editor: Any) -> None:
    dialect = schema_editor.client.capabilities.dialect
    if dialect == "sqlite":
        script = _sqlite_script()
    elif dialect == "postgres":
        script = _postgres_script()
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported
        raise RuntimeError(f"Smriti does not support the {dialect} dialect")
    await schema_editor.client.execute_script(script)


async def drop_search(_apps: Any, schema_editor: Any) -> None:
    dialect = schema_editor.client.capabilities.dialect
    if dialect == "postgres":
        script = "".join(
            f"DROP TRIGGER IF EXISTS {t}_search ON {t};DROP FUNCTION IF EXISTS smriti_search_{t}();"
            for t in ("turn", "checkpoint", "session", "space")
        )
        script += "DROP TABLE IF EXISTS search_entry;"
    else:
        script = "".join(
            f"DROP TRIGGER IF EXISTS search_{t}_{event};"
            for t in ("turn", "checkpoint", "session", "space")
            for event in ("insert", "update", "delete")
        )
        script += "DROP TABLE IF EXISTS search_fts;"
    await schema_editor.client.execute_script(script)


class Migration(migrations.Migration):
    # The merge helper's 0003 also follows 0002; whoever lands second makes
    # this depend on 0003 so the chain stays linear.
    dependencies = [("models", "0003_merge_parent")]

    operations = [ops.RunPython(create_search, drop_search)]
