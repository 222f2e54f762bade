"""The shared fixtures of tests/conftest.py keep their meaning while costing less.

``database_url`` is a migrated database of this test's own (a copy of one migrated
once per run), ``empty_database_url`` one with no tables for the tests of the
migrations, and a test whose `lab` model is served by no ``fake_openai`` of its own
fails if it calls that model.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg
import httpx
import pytest

from api.app import create_app
from api.settings import Settings
from api.store.database import sqlite_path
from tests.support.databases import TEST_DB
from tests.support.fake_openai import FakeOpenAI
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer

PYPROJECT = REPOSITORY_ROOT / "pyproject.toml"
MIGRATIONS = sorted(
    path.stem for path in (REPOSITORY_ROOT / "api" / "store" / "migrations").glob("0*.py")
)


async def tables_and_migrations(url: str) -> tuple[set[str], list[str]]:
    """The database's tables, and the migrations it records as applied."""
    path = sqlite_path(url)
    if path is not None:
        with sqlite3.connect(path) as connection:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
            applied = (
                [row[0] for row in connection.execute("SELECT name FROM tortoise_migrations")]
                if "tortoise_migrations" in tables
                else []
            )
        return tables, sorted(applied)
    connection = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1))
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = {row["tablename"] for row in rows}
        applied = (
            [r["name"] for r in await connection.fetch("SELECT name FROM tortoise_migrations")]
            if "tortoise_migrations" in tables
            else []
        )
    finally:
        await connection.close()
    return tables, sorted(applied)


async def test_database_url_is_migrated_before_any_app_starts(database_url: str) -> None:
    tables, applied = await tables_and_migrations(database_url)
    assert applied == MIGRATIONS
    assert {"space", "session", "turn"} <= tables


async def test_empty_database_url_has_no_tables(empty_database_url: str) -> None:
    assert await tables_and_migrations(empty_database_url) == (set(), [])


def test_providers_file_serves_lab_from_fake_openai_when_the_test_asks_for_it(
    providers_file: Path, fake_openai: FakeOpenAI
) -> None:
    assert f'    api_base: "{fake_openai.base_url}"\n' in providers_file.read_text()


PROBE = """
from tests.support.ops import create_session, send

async def test_without_fake_openai(gql):
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    await send(gql, sid, "hello")

async def test_with_fake_openai(gql, fake_openai):
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    await send(gql, sid, "hello")
    assert len(fake_openai.requests) == 1
"""


@pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")
def test_a_test_that_calls_lab_without_asking_for_fake_openai_fails(tmp_path: Path) -> None:
    """Run in a pytest of its own: two tests that send a message to `lab/my-model`."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    plugins = ["-p", "tests.conftest", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-q", "-c", str(PYPROJECT), str(probe)],
        cwd=REPOSITORY_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[-1].startswith("2 passed, 1 error in "), done.stdout
    assert "ERROR at teardown of test_without_fake_openai" in done.stdout
    assert (
        "this test called the `lab` provider (['/v1/chat/completions']) without asking for "
        "the fake_openai fixture" in done.stdout
    )


@pytest.mark.database_neutral
def test_a_server_whose_port_is_taken_before_it_binds_starts_on_another(tmp_path: Path) -> None:
    """The two passes start servers side by side: a port free when it was picked can
    be taken before `smriti serve` binds it (status 5); SmritiServer picks another."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        server = SmritiServer(f"sqlite:///{tmp_path / 'db.sqlite3'}")
        server.port = taken
        with server:
            assert server.port != taken
            assert httpx.get(f"{server.base_url}/healthz", timeout=5).json()["status"] == "ok"


def _schema_of(settings: Settings) -> object:
    app = create_app(settings)
    return next(r.endpoint for r in app.routes if getattr(r, "path", "") == "/graphql").schema


def test_apps_with_the_same_limits_share_one_schema(settings: Settings, tmp_path: Path) -> None:
    """conftest's ``_one_schema_per_settings``: the schema is built once for equal
    limits (another database is not another schema), again for other limits."""
    elsewhere = dataclasses.replace(settings, database_url=f"sqlite:///{tmp_path / 'other.db'}")
    deeper = dataclasses.replace(settings, max_query_depth=settings.max_query_depth + 1)
    assert _schema_of(settings) is _schema_of(elsewhere)
    assert _schema_of(deeper) is not _schema_of(settings)


def test_a_test_runs_in_both_passes_only_if_it_uses_a_database_of_the_chosen_kind() -> None:
    from tests.conftest import uses_a_database

    def item(path: str, *fixtures: str) -> object:
        return dataclasses.make_dataclass("Item", ["path", "fixturenames"])(
            REPOSITORY_ROOT / path, list(fixtures)
        )

    sources: dict[Path, str] = {}
    cases = {
        # A fixture that is (or depends on) a database of the chosen kind.
        ("tests/domain/test_merge.py", "database_url"): True,
        ("tests/domain/test_merge.py", "empty_database_url"): True,
        # A module that makes one with tests/support/databases.py's helpers.
        ("tests/system/test_shutdown.py", "tmp_path"): True,
        # Neither: the pure domain, the docs.
        ("tests/domain/test_merge.py", "tmp_path"): False,
        ("tests/test_docs.py",): False,
    }
    assert {case: uses_a_database(item(*case), sources) for case in cases} == cases
