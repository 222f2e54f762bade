"""The model picker says which providers are not reachable (issue 17).

The server checks reachability in the background and answers CHECKING until a
check is done; the page asks again meanwhile, so the label appears on its own.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from api.store.database import sqlite_url
from tests.browser.support import new_session, open_app
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def server(
    database: Path, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SmritiServer]:
    """A `lab` model served by ``fake`` and an `ollama` one with nothing on its port."""
    providers = tmp_path_factory.mktemp("providers") / "providers.yaml"
    providers.write_text(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{fake.base_url}", models: [my-model]}}\n'
        f'  ollama: {{api_base: "http://127.0.0.1:{closed_port()}", models: [llama3.1]}}\n'
    )
    with SmritiServer(sqlite_url(database), providers=providers) as running:
        yield running


def test_a_provider_with_nothing_listening_is_labelled_not_reachable(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    picker = page.get_by_label("Model", exact=True)

    ollama = picker.locator("option[value='ollama/llama3.1']")
    expect(ollama).to_have_text("ollama/llama3.1 (not reachable)")
    expect(ollama).to_be_enabled()  # it may be up by the time a message is sent
    expect(
        picker.locator("optgroup", has=page.locator("option[value='ollama/llama3.1']"))
    ).to_have_attribute("label", "ollama \u2014 not reachable")
    lab = picker.locator("option[value='lab/my-model']")
    expect(lab).to_have_text("lab/my-model")
    expect(
        picker.locator("optgroup", has=page.locator("option[value='lab/my-model']"))
    ).to_have_attribute("label", "lab")
    expect(picker).to_have_value("offline/echo")
