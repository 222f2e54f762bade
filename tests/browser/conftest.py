"""Browser tests: the real `smriti serve` (fresh SQLite file) and headless Chromium.

One server per test module and one browser for the whole package (a launch cost
~1 s of CPU and 2-3 s on a busy machine, once per module before); each test opens
a page in a new browser context (cookies, storage and cache its own) and makes its
own spaces and sessions. A module whose tests talk to a `lab` model (served by
the scripted ``fake`` OpenAI server) uses ``lab_server`` as its server::

    @pytest.fixture(scope="module")
    def server(lab_server: SmritiServer) -> SmritiServer:
        return lab_server
 Skipped in the PostgreSQL pass of `make test` (the UI
does not depend on the database). Without Chromium the run stops with the command
to install it, unless SMRITI_TEST_SKIP_BROWSER=1 says to skip them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from api.store.database import sqlite_url
from tests.browser.support import CHROMIUM, VIEWPORT, chromium, warm_up
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

HERE = Path(__file__).parent
SKIP_BROWSER = "SMRITI_TEST_SKIP_BROWSER"
# The first model call of a server waits for LiteLLM's import; replies are quick after.
expect.set_options(timeout=10_000)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = None
    ours = [item for item in items if item.path.is_relative_to(HERE)]
    if os.environ.get("SMRITI_TEST_DB", "sqlite") != "sqlite":
        reason = "browser tests run in the SQLite pass"
    elif not CHROMIUM.exists() and os.environ.get(SKIP_BROWSER) == "1":
        reason = f"{CHROMIUM} is not installed and {SKIP_BROWSER}=1"
    elif not CHROMIUM.exists() and ours:
        # Never a silent skip: a run without them must say so on purpose.
        raise pytest.UsageError(
            f"the browser tests need {CHROMIUM}: run  sudo apt-get install chromium  "
            f"(or set {SKIP_BROWSER}=1 to skip them)"
        )
    for item in ours:
        item.add_marker(pytest.mark.browser)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browser") / "smriti.sqlite3"


@pytest.fixture(scope="module")
def server(database: Path) -> Iterator[SmritiServer]:
    with SmritiServer(sqlite_url(database)) as running:
        warm_up(running.base_url)
        yield running


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """The scripted OpenAI-compatible server behind ``lab_server``'s `lab` provider."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def lab_server(
    database: Path, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SmritiServer]:
    """Offline defaults (the background model is offline/extractor), a `lab` model
    served by ``fake``, and an `openai` provider whose key is not set (listed as
    unavailable)."""
    providers = tmp_path_factory.mktemp("providers") / "providers.yaml"
    providers.write_text(
        "chat_default: offline/echo\nbackground_intelligence: offline/extractor\nproviders:\n"
        f'  lab:\n    litellm_provider: openai\n    api_base: "{fake.base_url}"\n'
        "    models: [my-model]\n"
        "  openai:\n    api_key_env: SMRITI_TEST_UNSET_OPENAI_KEY\n    models: [gpt-4o-mini]\n"
    )
    with SmritiServer(sqlite_url(database), providers=providers) as running:
        warm_up(running.base_url, "lab/my-model")
        yield running


# Package scope: closed after the last browser test, so Playwright's event loop is
# gone before the asyncio tests of the other directories run.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page; an uncaught script error anywhere fails the test."""
    context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    context.set_default_timeout(10_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []
