"""`smriti users …` and `smriti tokens …` on a database, as an operator runs them.

Exit codes (docs/architecture.md#exit-statuses): 0 ok, 2 usage, 3 database, 4 not found.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

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
        "Cleared the failed sign-ins of 1 name/address pairs.\n",
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


async def test_users_enable_delete_and_tokens_list_revoke(
    app: Starlette, database_url: str
) -> None:
    for name, role in (("ada", ["--admin"]), ("bob", [])):
        added = smriti(
            database_url, "users", "add", name, *role, "--password-stdin", stdin=PASSWORD
        )
        assert added.returncode == 0, added.stderr
    made = smriti(database_url, "tokens", "create", "--user", "BOB", "--name", "ci")
    assert made.returncode == 0, made.stderr
    listed = smriti(database_url, "tokens", "list", "--user", "bob", "--json")
    tokens = json.loads(listed.stdout)
    assert [(t["name"], t["prefix"], t["revokedAt"]) for t in tokens] == [
        ("ci", made.stdout.strip()[:10], None)
    ]
    assert made.stdout.strip() not in listed.stdout
    revoked = smriti(database_url, "tokens", "revoke", str(tokens[0]["id"]))
    assert (revoked.returncode, revoked.stderr) == (
        0,
        f"Revoked token {tokens[0]['id']} ({tokens[0]['prefix']}…, ci).\n",
    )
    again = json.loads(smriti(database_url, "tokens", "list", "--user", "bob", "--json").stdout)
    assert again[0]["revokedAt"] is not None

    assert smriti(database_url, "users", "disable", "bob").stderr == "Disabled bob.\n"
    users = json.loads(smriti(database_url, "users", "list", "--json").stdout)
    assert [(u["name"], u["admin"], u["disabled"]) for u in users] == [
        ("ada", True, False),
        ("bob", False, True),
    ]
    assert smriti(database_url, "users", "enable", "Bob").stderr == "Enabled bob.\n"
    last = smriti(database_url, "users", "disable", "ada")
    assert (last.returncode, last.stderr) == (
        2,
        "smriti: The account ada is the last enabled admin: make another admin first.\n",
    )
    deleted = smriti(database_url, "users", "delete", "bob")
    assert (deleted.returncode, deleted.stderr) == (
        0,
        "Deleted bob and their own spaces and sessions.\n",
    )
    users = json.loads(smriti(database_url, "users", "list", "--json").stdout)
    assert [u["name"] for u in users] == ["ada"]


async def test_exit_codes_say_what_went_wrong(
    app: Starlette, database_url: str, tmp_path: object
) -> None:
    for args in (
        ("users", "enable", "nobody"),
        ("users", "delete", "nobody"),
        ("users", "disable", "nobody"),
        ("tokens", "list", "--user", "nobody"),
        ("tokens", "revoke", "999"),
    ):
        missing = smriti(database_url, *args)
        assert missing.returncode == 4, (args, missing.stderr)
        assert missing.stderr in (
            "smriti: No user named 'nobody'.\n",
            "smriti: No API token with id 999.\n",
        )
    usage = smriti(database_url, "tokens", "revoke", "smr_x")
    assert (usage.returncode, usage.stderr) == (
        2,
        "smriti: A token's id is a number, as `smriti tokens list` shows, not 'smr_x'.\n",
    )
    from pathlib import Path

    not_a_database = Path(str(tmp_path)) / "notes.txt"
    not_a_database.write_text("not a database\n" * 100)
    broken = smriti(f"sqlite:///{not_a_database}", "users", "list")
    assert broken.returncode == 3, broken.stderr
    assert broken.stderr.startswith("smriti: ")


async def test_every_accounts_command_prints_json_with_its_documented_fields(
    app: Starlette, database_url: str
) -> None:
    def run_json(*args: str, stdin: str = "") -> Any:
        done = smriti(database_url, *args, "--json", stdin=stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def is_time(value: Any) -> bool:
        return isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None

    account_keys = ["name", "admin", "disabled", "createdAt"]
    ada = run_json("users", "add", "ada", "--admin", "--password-stdin", stdin=PASSWORD)
    assert list(ada) == [*account_keys, "adopted"]
    # Nothing was made without accounts in this database: nothing to adopt.
    assert (ada["name"], ada["admin"], ada["disabled"], ada["adopted"]) == (
        "ada",
        True,
        False,
        False,
    )
    assert is_time(ada["createdAt"])
    bob = run_json("users", "add", "bob", "--password-stdin", stdin=PASSWORD)
    assert (bob.pop("name"), bob.pop("admin"), bob.pop("adopted")) == ("bob", False, False)
    account = {"name": "bob", "admin": False, **bob}
    assert run_json("users", "disable", "BOB") == {**account, "disabled": True}
    assert run_json("users", "enable", "bob") == account
    assert (
        run_json("users", "passwd", "bob", "--password-stdin", stdin="other passphrase") == account
    )
    assert [u["name"] for u in run_json("users", "list")] == ["ada", "bob"]

    token_keys = [
        "id",
        "name",
        "prefix",
        "readOnly",
        "createdAt",
        "lastUsedAt",
        "expiresAt",
        "revokedAt",
    ]
    made = run_json(
        "tokens", "create", "--user", "bob", "--name", "ci", "--read-only", "--expires", "30d"
    )
    assert list(made) == [*token_keys, "user", "token"]
    assert (made["name"], made["readOnly"], made["user"], made["lastUsedAt"]) == (
        "ci",
        True,
        "bob",
        None,
    )
    assert made["token"].startswith(made["prefix"]) and made["token"].startswith("smr_")
    assert is_time(made["createdAt"]) and is_time(made["expiresAt"])
    listed = run_json("tokens", "list", "--user", "bob")
    assert listed == [{k: v for k, v in made.items() if k not in ("user", "token")}]
    revoked = run_json("tokens", "revoke", str(made["id"]))
    assert list(revoked) == token_keys
    assert revoked["id"] == made["id"] and is_time(revoked["revokedAt"])
    assert run_json("users", "delete", "bob") == account
    assert run_json("users", "lockouts") == []
    assert run_json("users", "lockouts", "--clear", "bob") == {"cleared": 0}
