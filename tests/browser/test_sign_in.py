"""Accounts mode in the browser: the sign-in page, a wrong password, the name and
"Sign out" in the top bar, and an API token shown once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from api.store.database import sqlite_url
from tests.support.servers import SmritiServer

PASSWORD = "browser passphrase 42"


@pytest.fixture(scope="module")
def server(database: Path) -> Iterator[SmritiServer]:
    url = sqlite_url(database)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "api",
            "users",
            "add",
            "grace",
            "--admin",
            "--password-stdin",
            "--database",
            url,
        ],
        input=PASSWORD + "\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=60,
    )
    with SmritiServer(url) as running:
        yield running


def sign_in(page: Page, server: SmritiServer, password: str = PASSWORD) -> None:
    page.fill("#login-name", "grace")
    page.fill("#login-password", password)
    page.click("#login-submit")


def test_the_notebook_sends_a_stranger_to_sign_in(page: Page, server: SmritiServer) -> None:
    page.goto(server.base_url + "/")
    expect(page).to_have_url(server.base_url + "/login.html?next=%2F")
    sign_in(page, server, "not the password")
    expect(page.locator("#login-error")).to_have_text("Wrong user name or password.")
    sign_in(page, server)
    expect(page).to_have_url(server.base_url + "/")
    expect(page.locator("#account-name")).to_have_text("grace")
    page.click("#sign-out")
    expect(page).to_have_url(server.base_url + "/login.html")
    page.goto(server.base_url + "/")
    expect(page).to_have_url(server.base_url + "/login.html?next=%2F")


def test_an_api_token_is_shown_once(page: Page, server: SmritiServer) -> None:
    page.goto(server.base_url + "/login.html")
    sign_in(page, server)
    expect(page.locator("#account-name")).to_have_text("grace")
    page.click("#tokens-button")
    page.fill("#token-name", "notebook script")
    page.check("#token-read-only")
    page.click("#token-create")
    secret = page.locator("#token-secret")
    expect(secret).to_have_text(__import__("re").compile(r"^smr_[A-Za-z0-9_-]{43}$"))
    shown = secret.text_content() or ""
    expect(page.locator(".token-list li").first).to_contain_text(
        f"notebook script · {shown[:10]}… · read-only"
    )
    page.get_by_role("button", name="Close").click()
    page.click("#tokens-button")
    expect(page.locator("#token-secret")).to_be_hidden()
    assert shown not in page.content()
