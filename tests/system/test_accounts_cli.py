"""`smriti users …` and `smriti tokens …` on a database, as an operator runs them.

Exit codes (DESIGN.md §9): 0 ok, 2 usage, 3 database, 4 not found.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.settings import Settings
from tests.accounts.world import BASE_URL, PASSWORD


def smriti(
    database_url: str, *args: str, stdin: str | bytes = ""
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "api", *args, "--database", database_url],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=60,
        check=False,
        env={"LITELLM_OFFLINE_MODE": "true", "PATH": "/usr/bin:/bin", **_pythonpath()},
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _pythonpath() -> dict[str, str]:
    import os

    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Starlette]:
    """The database migrated, by an app that stays up for in-process requests."""
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


async def test_an_operator_sees_and_clears_failed_sign_ins(
    app: Starlette, database_url: str
) -> None:
    assert (
        smriti(database_url, "users", "add", "ada", "--password-stdin", stdin=PASSWORD).returncode
        == 0
    )
    for address, name in (
        ("198.51.100.1", "ada"),
        ("198.51.100.1", "ADA"),
        ("198.51.100.2", "bob"),
    ):
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            wrong = await http.post(
                "/auth/login",
                json={"name": name, "password": "a wrong guess"},
                headers={"Origin": BASE_URL},
            )
            assert wrong.status_code == 401
    listed = smriti(database_url, "users", "lockouts", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["name"], r["address"], r["failures"]) for r in rows] == [
        ("bob", "198.51.100.2", 1),
        ("ada", "198.51.100.1", 2),
    ]
    by_name = smriti(database_url, "users", "lockouts", "--clear", "Ada")
    assert (by_name.returncode, by_name.stderr) == (
        0,
        "cleared the failed sign-ins of 1 name/address pairs\n",
    )
    by_address = smriti(database_url, "users", "lockouts", "--clear", "198.51.100.2", "--json")
    assert (by_address.returncode, json.loads(by_address.stdout)) == (0, {"cleared": 1})
    assert smriti(database_url, "users", "lockouts").stdout == ""


async def test_a_password_that_is_not_utf8_is_a_clear_error(
    app: Starlette, database_url: str
) -> None:
    added = smriti(
        database_url, "users", "add", "ada", "--password-stdin", stdin=b"caf\xe9 au lait\n"
    )
    assert (added.returncode, added.stdout, added.stderr) == (
        2,
        "",
        "smriti: The password on standard input is not UTF-8 text; nothing was changed.\n",
    )
    spaces = smriti(database_url, "users", "add", "ada", "--password-stdin", stdin=" " * 12 + "\n")
    assert (spaces.returncode, spaces.stderr) == (2, "smriti: A password is more than spaces.\n")
    hidden = smriti(database_url, "users", "add", "a\u200bda", "--password-stdin", stdin=PASSWORD)
    assert hidden.returncode == 2
    assert hidden.stderr.startswith("smriti: A user name is 1 to 100 letters")
