"""Smriti installed as a user installs it, run from elsewhere than the repository.

``pip install .`` (and pipx or ``uv tool install`` of a clone) installs a wheel: this
module builds one from the working tree and installs it into a fresh venv outside the
repository, with the dependencies of ``requirements.lock`` alone (tests/support/
installed.py), then runs that venv's ``smriti serve`` from another directory and uses
it as a person would: the notebook and the login page, the bundled providers,
GraphiQL from its local assets, a message sent in Chromium and its reply.

Before, an installed Smriti served a 404 at ``/`` and listed only the offline
provider (it looked for ``webui/`` and ``providers.yaml`` in a repository beside the
package), and put a top-level package named ``api`` into site-packages.

The dev lock carries more than the runtime needs (httpx-ws brings wsproto), so a
server started from the dev environment can work where the install does not: without
a websocket library uvicorn answered every upgrade with "Unsupported upgrade
request". The websocket and SSE tests here run against the install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from importlib.resources import files
from pathlib import Path

import httpx
import pytest
import yaml

import api
from api.graphiql import assets
from api.store.database import sqlite_url
from tests.browser.support import CHROMIUM, chromium, new_session, open_app, send
from tests.support.installed import (
    LOCK,
    build_wheel,
    clean_environment,
    install,
    runtime_dependencies,
    site_packages,
)
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer
from tests.support.streams import STREAM, graphql_ws, sse_events

CREATE = 'mutation { createSession(input: {title: "runtime"}) { session { id } } }'
PROVIDERS = "{ providers { providers { name available } chatDefault background } }"

pytestmark = pytest.mark.database_neutral


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a venv holding the wheel; the venv is in a temporary
    directory, not the repository."""
    dependencies = runtime_dependencies()
    workdir = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(workdir)
    return install(wheel, workdir / "venv", dependencies)


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working directory of everything the install runs: not the repository."""
    return tmp_path_factory.mktemp("elsewhere")


def run_installed(installed: Path, elsewhere: Path, code: str) -> str:
    done = subprocess.run(
        [str(installed / "python"), "-c", code],
        cwd=elsewhere,
        env=clean_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def runtime_server(installed: Path, elsewhere: Path) -> Iterator[SmritiServer]:
    # No --providers and no SMRITI_PROVIDERS_FILE: the bundled providers.yaml.
    env = {"PYTHONPATH": "", "SMRITI_PROVIDERS_FILE": ""}
    database = sqlite_url(elsewhere / "smriti.sqlite3")
    server = SmritiServer(database, program=(str(installed / "smriti"),), cwd=elsewhere, env=env)
    with server:
        yield server


@pytest.fixture
async def http(runtime_server: SmritiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=runtime_server.base_url, timeout=30) as client:
        yield client


def lock_names() -> set[str]:
    return {
        canonical(match) for match in re.findall(r"^([A-Za-z0-9_.-]+)==", LOCK.read_text(), re.M)
    }


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_install_holds_the_runtime_lock_and_smriti_only(
    installed: Path, elsewhere: Path
) -> None:
    listed = run_installed(
        installed,
        elsewhere,
        "import importlib.metadata as m, json; "
        "print(json.dumps([d.metadata['Name'] for d in m.distributions()]))",
    )
    found = {canonical(name) for name in json.loads(listed)}
    # pip comes with every venv; everything else is the lock's or Smriti (the lock is
    # universal: a few of its entries are for other platforms only, e.g. colorama).
    assert found - {"pip"} <= lock_names() | {"smriti"}
    assert {"smriti", "uvicorn", "websockets"} <= found
    assert "wsproto" not in found  # the dev lock's websocket library is not here


def test_the_package_is_smriti_and_there_is_no_top_level_api(
    installed: Path, elsewhere: Path
) -> None:
    """The wheel installs `smriti` (a generic `api` in site-packages would shadow or be
    shadowed by anyone else's), and that package alone holds what Smriti ships."""
    venv = installed.parent
    top_level = sorted(p.name for p in site_packages(venv).iterdir())
    assert "api" not in top_level
    assert [name for name in top_level if not name.startswith(("_", "smriti"))] == []
    found = json.loads(
        run_installed(
            installed,
            elsewhere,
            "import importlib.util, importlib.metadata, json, smriti, smriti.bundled as b; "
            "print(json.dumps([importlib.util.find_spec('api') is None, smriti.__file__, "
            "str(b.WEBUI_DIR), str(b.PROVIDERS_FILE), smriti.__version__, "
            "importlib.metadata.version('smriti')]))",
        )
    )
    no_api, package, webui, providers, version, metadata_version = found
    assert no_api is True
    package_dir = site_packages(venv).resolve() / "smriti"
    assert Path(package) == package_dir / "__init__.py"
    assert Path(webui) == package_dir / "webui"
    assert Path(providers) == package_dir / "providers.yaml"
    assert version == metadata_version == api.__version__
    assert (package_dir / "webui" / "index.html").read_bytes() == (
        REPOSITORY_ROOT / "webui" / "index.html"
    ).read_bytes()


async def test_the_notebook_and_the_login_page_are_served(http: httpx.AsyncClient) -> None:
    notebook = await http.get("/")
    assert notebook.status_code == 200
    assert notebook.text == (REPOSITORY_ROOT / "webui" / "index.html").read_text()
    login = await http.get("/login.html")
    assert login.status_code == 200
    assert login.text == (REPOSITORY_ROOT / "webui" / "login.html").read_text()
    script = await http.get("/components/turn-cell.js")
    assert script.status_code == 200


async def test_the_bundled_providers_are_listed(http: httpx.AsyncClient) -> None:
    body = (await http.post("/graphql", json={"query": PROVIDERS})).json()
    bundled = yaml.safe_load((REPOSITORY_ROOT / "providers.yaml").read_text())
    listed = body["data"]["providers"]
    assert [p["name"] for p in listed["providers"]] == ["offline", *bundled["providers"]]
    assert listed["chatDefault"] == bundled["chat_default"] == "offline/echo"
    assert listed["background"] == bundled["background_intelligence"]


async def test_graphiql_loads_its_assets_from_the_install(http: httpx.AsyncClient) -> None:
    local = REPOSITORY_ROOT / "api" / "static" / "vendor"
    page = (await http.get("/graphql", headers={"Accept": "text/html"})).text
    # The page names each asset at /static/vendor: the copies the wheel carries.
    assert "unpkg.com" not in page and "cdn.jsdelivr.net" not in page, (
        f"GraphiQL loads from a CDN: were its assets fetched into {local} before the "
        "build? Run  .venv/bin/python scripts/fetch-graphiql-assets"
    )
    named = re.findall(r'(?:src|href)="(/static/vendor/[^"]+)"', page)
    strawberry_page = files("strawberry").joinpath("static", "graphiql.html").read_text()
    assert sorted(named) == sorted(
        f"/static/vendor/{a.local_path}" for a in assets(strawberry_page)
    )
    for url in named:
        served = await http.get(url)
        assert served.status_code == 200, url
        assert served.content == (local / url.removeprefix("/static/vendor/")).read_bytes()


async def new_session_id(http: httpx.AsyncClient) -> str:
    created = (await http.post("/graphql", json={"query": CREATE})).json()
    sid: str = created["data"]["createSession"]["session"]["id"]
    return sid


async def test_a_websocket_subscription_streams_from_the_install(
    http: httpx.AsyncClient,
) -> None:
    sid = await new_session_id(http)
    async with graphql_ws(http) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "Hello over a websocket"})
        events = (await ws.events("1"))["1"]
    kinds = [e["__typename"] for e in events]
    assert kinds[0] == "StreamUserTurn"
    assert kinds[-1] == "StreamAssistantTurn"
    assert set(kinds[1:-1]) == {"StreamDelta"}
    assert events[0]["userTurn"]["sequenceNumber"] == 1
    assert events[-1]["assistantTurn"]["sequenceNumber"] == 2
    streamed = "".join(e["delta"] for e in events[1:-1])
    assert streamed == events[-1]["assistantTurn"]["content"]


async def test_an_sse_subscription_streams_from_the_install(
    http: httpx.AsyncClient,
) -> None:
    sid = await new_session_id(http)
    body = {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Hello, SSE"}}}
    response = await http.post("/graphql", json=body, headers={"Accept": "text/event-stream"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert [kind for kind, _ in events][-1] == "complete"
    streamed = [data["data"]["messageStream"] for kind, data in events if kind == "next"]
    assert streamed[0]["__typename"] == "StreamUserTurn"
    assert streamed[0]["userTurn"]["sequenceNumber"] == 1
    assert streamed[-1]["__typename"] == "StreamAssistantTurn"
    assert streamed[-1]["assistantTurn"]["sequenceNumber"] == 2


@pytest.mark.skipif(
    not CHROMIUM.exists() and os.environ.get("SMRITI_TEST_SKIP_BROWSER") == "1",
    reason=f"{CHROMIUM} is not installed and SMRITI_TEST_SKIP_BROWSER=1",
)
def test_a_message_sent_in_the_notebook_gets_its_reply(runtime_server: SmritiServer) -> None:
    with chromium() as browser:
        page = browser.new_page()
        try:
            open_app(page, runtime_server.base_url)
            new_session(page, None)
            send(page, "Does the installed notebook answer?")
            reply = page.locator("turn-cell.assistant").last
            reply.get_by_text("You asked: Does the installed notebook answer?").wait_for()
            assert page.locator("turn-cell").count() == 2
        finally:
            page.close()
