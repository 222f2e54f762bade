"""The database URL as people write it, made canonical, and said back to them.

Pure string and path work, no driver: the settings read the URL
(``--database``, SMRITI_DATABASE_URL) and make it canonical here, and the store
opens what they made. Both import this module, so neither has to reach the other.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Writers wait for each other instead of failing with "database is locked";
# NORMAL is the durability WAL mode is designed for (a power cut may lose the
# last commits, never corrupt the file).
SQLITE_DEFAULTS = {"busy_timeout": "10000", "synchronous": "NORMAL", "foreign_keys": "ON"}


def sqlite_url(path: Path) -> str:
    return normalize_url(f"sqlite://{path}")


def normalize_url(url: str) -> str:
    """Accept the URL spellings users write; add SQLite's pragmas.

    A SQLite file path becomes absolute here, so the server opens (and prints) the
    file the user meant: ``sqlite:////abs`` (SQLAlchemy's spelling) and
    ``sqlite:///abs`` (Tortoise's, and what the README has always shown) both name
    ``/abs``; ``sqlite://relative/path`` is relative to the working directory, and so
    is a bare path with no scheme at all (``data/smriti.sqlite3``).
    """
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme == "" and parts.path:
        # A bare file path (`--database data/smriti.sqlite3`): the SQLite file it names,
        # not Tortoise's "Unknown DB scheme".
        return sqlite_url(Path(url))
    if scheme in ("postgresql", "postgresql+asyncpg", "asyncpg"):
        scheme = "postgres"
    if scheme == "sqlite":
        query = dict(SQLITE_DEFAULTS)
        query.update(dict(parse_qsl(parts.query)))
        # Built by hand: urlunsplit would drop the empty host ("sqlite:/abs").
        return f"sqlite://{_sqlite_location(parts.netloc + parts.path)}?{urlencode(query)}"
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))


def _sqlite_location(raw: str) -> str:
    if raw in ("", ":memory:", "/:memory:"):
        return ":memory:"
    if raw.startswith("//"):
        # SQLAlchemy's absolute spelling; POSIX keeps a leading "//" distinct.
        raw = "/" + raw.lstrip("/")
    return str(Path(raw).expanduser().absolute())


def sqlite_path(url: str) -> Path | None:
    """The file a normalized SQLite URL names (None for PostgreSQL and :memory:)."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or ":memory:" in (parts.netloc, parts.path):
        return None
    return Path(parts.path)


def describe(url: str) -> str:
    """The database as the start-up line shows it: a file's absolute path, or the
    URL without its password."""
    path = sqlite_path(url)
    if path is not None:
        return f"SQLite file {path}"
    parts = urlsplit(url)
    netloc = (
        parts.netloc.replace(f":{parts.password}@", ":***@") if parts.password else parts.netloc
    )
    return urlunsplit(parts._replace(netloc=netloc, query=""))
