"""Fixtures shared by every test: a database of the chosen kind, the real app.

SMRITI_TEST_DB selects the database: ``sqlite`` (default) or ``postgres`` (on
SMRITI_TEST_PG_URL). The migrations run once per run: ``database_url`` is a copy
of a database migrated at the first test that asks for one (a copied SQLite file;
on PostgreSQL a database made with ``CREATE DATABASE … TEMPLATE``, dropped after
the test). A test of the migrations themselves asks for ``empty_database_url``.

``providers_file`` points its `lab` provider at ``fake_openai`` when the test asks
for that fixture; otherwise at one shared stub, started at the first such test,
that fails the test if anything calls it (so no fake server is started for the
many tests that never call a model, and none calls one by accident).
"""

from __future__ import annotations

import dataclasses
import os
import uuid
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.graphql import view as graphql_view
from api.settings import Settings
from api.store.database import migrate, normalize_url, sqlite_url
from tests.support.databases import PG_URL, TEST_DB, admin, check_kind, fresh_database
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient


def pytest_report_header() -> str:
    return f"smriti database: {TEST_DB}"


@pytest.fixture(scope="session")
async def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """A database migrated once for the whole run (its URL); ``database_url`` copies it.

    Never handed to a test: on PostgreSQL a template must have no connections when
    it is copied."""
    check_kind()
    if TEST_DB == "sqlite":
        url = sqlite_url(tmp_path_factory.mktemp("migrated") / "template.sqlite3")
        await migrate(url)
        yield url
        return
    name = f"smriti_template_{uuid.uuid4().hex[:12]}"
    await admin(f'CREATE DATABASE "{name}"')
    try:
        url = normalize_url(f"{PG_URL.rsplit('/', 1)[0]}/{name}")
        await migrate(url)
        yield url
    finally:
        await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def database_url(tmp_path: Path, migrated_template: str) -> AsyncIterator[str]:
    """A migrated database of the chosen kind, this test's own."""
    async with fresh_database(tmp_path / "smriti.sqlite3", template=migrated_template) as url:
        yield url


@pytest.fixture
async def empty_database_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database with no tables yet: for tests of the migrations themselves."""
    async with fresh_database(tmp_path / "smriti.sqlite3") as url:
        yield url


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture(scope="session")
def _uncalled_lab() -> Iterator[FakeOpenAI]:
    """The `lab` provider of tests that do not ask for ``fake_openai``."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def providers_file(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """Offline defaults plus a `lab` provider served by ``fake_openai``.

    A test that does not ask for ``fake_openai`` (itself or through a fixture) gets a
    shared stub instead, and fails if its `lab` model is called: before, every test
    started a fake server of its own."""
    if "fake_openai" in request.fixturenames:
        lab: FakeOpenAI = request.getfixturevalue("fake_openai")
        calls_before = None
    else:
        lab = request.getfixturevalue("_uncalled_lab")
        calls_before = len(lab.paths)
    path = tmp_path / "providers.yaml"
    path.write_text(
        "chat_default: offline/echo\n"
        "background_intelligence: offline/extractor\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{lab.base_url}"\n'
        "    models: [my-model, other-model]\n"
        "  openai:\n"
        "    api_key_env: SMRITI_TEST_UNSET_OPENAI_KEY\n"
        "    models: [gpt-4o-mini]\n"
    )
    yield path
    if calls_before is not None:
        # Torn down after the app (which depends on this file), so its calls are in.
        called = lab.paths[calls_before:]
        assert called == [], (
            f"this test called the `lab` provider ({called}) without asking for the "
            "fake_openai fixture: add `fake_openai: FakeOpenAI` to its arguments"
        )


@pytest.fixture(scope="session", autouse=True)
def _one_schema_per_settings() -> Iterator[None]:
    """Each app builds its GraphQL schema from its settings: a fraction of a second
    (Strawberry walks every type), paid again by every test that starts an app.
    The schema depends on the settings' limits only, never on the database or the
    providers file, so apps whose other settings are equal share one, as the
    requests of one long-running server do."""
    built: dict[str, Any] = {}
    original = graphql_view.build_schema

    def shared(settings: Settings | None = None) -> Any:
        key = repr(settings and dataclasses.replace(settings, database_url="", providers_file=None))
        if key not in built:
            built[key] = original(settings)
        return built[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(graphql_view, "build_schema", shared)
        yield


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


# A database-neutral test (marked `database_neutral`: it runs servers on SQLite files
# of its own whatever the pass) runs in one pass: the PostgreSQL one when `make test`
# runs both side by side (the shorter, the browser tests being in the SQLite one),
# else the SQLite one, as a plain `pytest` run is.
NEUTRAL_PASS = "postgres" if os.environ.get("SMRITI_TEST_PASSES") == "both" else "sqlite"


# A database-free test (no database of the chosen kind among its fixtures, and a
# module that names none: the domain's properties, the schema, the docs, the
# MCP schemas, ...) does the same thing in either pass: when `make test` runs both,
# it runs in one rather than twice. Which one is fixed by its module's path, so
# the modules split about evenly between the passes (measured side by side, the
# passes were about as long as each other: half to each keeps them so).
BOTH_PASSES = os.environ.get("SMRITI_TEST_PASSES") == "both"


def free_pass(path: Path) -> str:
    """The pass of a database-free test of the module at ``path``."""
    if not BOTH_PASSES:
        return TEST_DB
    tests = Path(__file__).parent.resolve()
    resolved = path.resolve()
    relative = (
        resolved.relative_to(tests) if resolved.is_relative_to(tests) else resolved
    ).as_posix()
    return ("sqlite", "postgres")[zlib.crc32(relative.encode()) % 2]


DATABASE_FIXTURES = frozenset({"database_url", "empty_database_url", "migrated_template"})
# A module that makes databases of the chosen kind without these fixtures names one
# of these (tests/support/databases.py's helpers, or what selects the kind).
DATABASE_NAMES = ("module_database", "fresh_database", "TEST_DB", "PG_URL", "SMRITI_TEST_DB")
BROWSER_TESTS = Path(__file__).parent / "browser"  # SQLite pass only: tests/browser/conftest.py


def uses_a_database(item: Any, sources: dict[Path, str]) -> bool:
    if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    path = Path(item.path)
    if path not in sources:
        sources[path] = path.read_text() if path.suffix == ".py" else ""
    return any(name in sources[path] for name in DATABASE_NAMES)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    sources: dict[Path, str] = {}
    for item in items:
        # Tests that need PostgreSQL specifically say so; skip them on SQLite runs.
        if "postgres_only" in item.keywords:
            if TEST_DB != "postgres":
                item.add_marker(pytest.mark.skip(reason="runs in the PostgreSQL pass"))
        elif "database_neutral" in item.keywords:
            if TEST_DB != NEUTRAL_PASS:
                item.add_marker(
                    pytest.mark.skip(reason=f"database-neutral: runs in the {NEUTRAL_PASS} pass")
                )
        elif (
            (chosen := free_pass(Path(item.path))) != TEST_DB
            and not Path(item.path).is_relative_to(BROWSER_TESTS)
            and not uses_a_database(item, sources)
        ):
            item.add_marker(pytest.mark.skip(reason=f"uses no database: runs in the {chosen} pass"))
