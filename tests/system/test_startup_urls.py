"""How database URLs are read: the file a SQLite URL names, the pragmas, PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from api.settings import Settings
from api.store.database import describe, normalize_url, sqlite_path

PRAGMAS = "busy_timeout=10000&synchronous=NORMAL&foreign_keys=ON"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # Tortoise's spelling, and what the README and the Docker image use.
        ("sqlite:///data/smriti.sqlite3", f"sqlite:///data/smriti.sqlite3?{PRAGMAS}"),
        # SQLAlchemy's absolute spelling (was read as the relative "data/…").
        ("sqlite:////data/smriti.sqlite3", f"sqlite:///data/smriti.sqlite3?{PRAGMAS}"),
        ("sqlite://///data/smriti.sqlite3", f"sqlite:///data/smriti.sqlite3?{PRAGMAS}"),
        # A bare path, as people type one after --database.
        ("/data/smriti.sqlite3", f"sqlite:///data/smriti.sqlite3?{PRAGMAS}"),
        ("sqlite://:memory:", f"sqlite://:memory:?{PRAGMAS}"),
        ("sqlite:///:memory:", f"sqlite://:memory:?{PRAGMAS}"),
        (
            "sqlite:///a.db?busy_timeout=5",
            "sqlite:///a.db?busy_timeout=5&synchronous=NORMAL&foreign_keys=ON",
        ),
        ("postgresql://u:pw@db:5432/smriti", "postgres://u:pw@db:5432/smriti"),
        ("postgresql+asyncpg://u@db/smriti?ssl=true", "postgres://u@db/smriti?ssl=true"),
        ("postgres://u@db/smriti", "postgres://u@db/smriti"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_a_bare_relative_path_is_a_sqlite_file_in_the_working_directory() -> None:
    assert normalize_url("var/smriti.sqlite3") == (
        f"sqlite://{Path.cwd() / 'var/smriti.sqlite3'}?{PRAGMAS}"
    )


def test_a_relative_sqlite_path_is_made_absolute_from_the_working_directory() -> None:
    assert normalize_url("sqlite://var/smriti.sqlite3") == (
        f"sqlite://{Path.cwd()}/var/smriti.sqlite3?{PRAGMAS}"
    )


def test_a_home_relative_sqlite_path_is_expanded() -> None:
    home = os.path.expanduser("~")
    assert normalize_url("sqlite://~/smriti.sqlite3") == f"sqlite://{home}/smriti.sqlite3?{PRAGMAS}"


def test_normalizing_twice_changes_nothing() -> None:
    once = normalize_url("sqlite:////srv/smriti/db.sqlite3")
    assert normalize_url(once) == once


def test_sqlite_path_and_description() -> None:
    url = normalize_url("sqlite:////srv/smriti.sqlite3")
    assert sqlite_path(url) == Path("/srv/smriti.sqlite3")
    assert describe(url) == "SQLite file /srv/smriti.sqlite3"
    assert sqlite_path(normalize_url("sqlite://:memory:")) is None
    assert sqlite_path("postgres://u@db/smriti") is None
    assert (
        describe("postgres://u:hunter2@db:5432/smriti?ssl=true")
        == "postgres://u:***@db:5432/smriti"
    )


def test_settings_read_the_url_from_the_flag_then_the_environment() -> None:
    env = {"SMRITI_DATABASE_URL": "sqlite:////from/env.sqlite3"}
    assert Settings.from_environment(env).database_url == f"sqlite:///from/env.sqlite3?{PRAGMAS}"
    flagged = Settings.from_environment(env, database_url="sqlite:////from/flag.sqlite3")
    assert flagged.database_url == f"sqlite:///from/flag.sqlite3?{PRAGMAS}"
