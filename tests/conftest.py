"""Fixtures shared by every test: a database of the chosen kind, the real app.

SMRITI_TEST_DB selects the database: ``sqlite`` (default; a fresh file per
test) or ``postgres`` (a fresh database per test on SMRITI_TEST_PG_URL,
dropped afterwards).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import asyncpg
import httpx
import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.settings import Settings
from api.store.database import normalize_url, sqlite_url
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient

TEST_DB = os.environ.get("SMRITI_TEST_DB", "sqlite")
PG_URL = os.environ.get("SMRITI_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def pytest_report_header() -> str:
    return f"smriti database: {TEST_DB}"


async def _admin(statement: str) -> None:
    conn = await asyncpg.connect(PG_URL.replace("postgres://", "postgresql://", 1))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture
async def database_url(tmp_path: Path) -> AsyncIterator[str]:
    async with fresh_database(tmp_path / "smriti.sqlite3") as url:
        yield url


@contextlib.asynccontextmanager
async def fresh_database(sqlite_file: Path) -> AsyncIterator[str]:
    """An empty database of the chosen kind (a PostgreSQL one is dropped after)."""
    if TEST_DB == "sqlite":
        yield sqlite_url(sqlite_file)
        return
    if TEST_DB != "postgres":
        raise RuntimeError(f"SMRITI_TEST_DB must be sqlite or postgres, not {TEST_DB!r}")
    name = f"smriti_test_{uuid.uuid4().hex[:12]}"
    await _admin(f'CREATE DATABASE "{name}"')
    base = PG_URL.rsplit("/", 1)[0]
    try:
        yield normalize_url(f"{base}/{name}")
    finally:
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def providers_file(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    """Offline defaults plus a `lab` provider served by the fake OpenAI server."""
    path = tmp_path / "providers.yaml"
    path.write_text(
        "chat_default: offline/echo\n"
        "background_intelligence: offline/extractor\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{fake_openai.base_url}"\n'
        "    models: [my-model, other-model]\n"
        "  openai:\n"
        "    api_key_env: SMRITI_TEST_UNSET_OPENAI_KEY\n"
        "    models: [gpt-4o-mini]\n"
    )
    return path


@pytest.fixture
def settings(database_url: str, providers_file: Path) -> Settings:
    return Settings(
        database_url=database_url,
        providers_file=providers_file,
        provider_timeout_seconds=5.0,
        # The in-process client's name: the Host check stays on, through the allow-list.
        allowed_hosts=("smriti.test",),
    )


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Starlette]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def gql(app: Starlette) -> AsyncIterator[GraphQLClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://smriti.test") as http:
        yield GraphQLClient(http, app)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    # Tests that need PostgreSQL specifically say so; skip them on SQLite runs.
    for item in items:
        if "postgres_only" in item.keywords and TEST_DB != "postgres":
            item.add_marker(pytest.mark.skip(reason="runs in the PostgreSQL pass"))
