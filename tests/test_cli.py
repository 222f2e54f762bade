"""`smriti` as scripts run it: exit statuses, help, usage errors, missing databases.

Each command runs as a process (`python -m api …`), as a script would run it.
None of these needs a server; the few that need a database make their own.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from api import __version__, exits
from api.settings import Settings
from api.store.database import sqlite_url

PASSWORD = "a long passphrase 7f3c"


def smriti(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )


def test_each_exit_status_means_one_thing_and_smriti_help_lists_them() -> None:
    statuses = (
        exits.OK,
        exits.VERIFICATION_FAILED,
        exits.USAGE,
        exits.DATABASE,
        exits.NOT_FOUND,
        exits.ADDRESS_IN_USE,
        exits.REFUSED,
        exits.CONFLICT,
    )
    assert statuses == (0, 1, 2, 3, 4, 5, 6, 7)
    shown = smriti("--help")
    assert shown.returncode == 0
    listed = shown.stdout.split("exit status:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split(maxsplit=1)[0] for line in listed.splitlines()] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
    ]
    assert "  5  address in use: serve cannot listen on --host/--port\n" in shown.stdout


def test_smriti_version() -> None:
    shown = smriti("--version")
    assert (shown.returncode, shown.stdout) == (0, f"smriti {__version__}\n")


def test_serve_help_explains_its_options_and_lists_every_environment_variable() -> None:
    shown = smriti("serve", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "--host HOST The address to listen on (default: 127.0.0.1" in text
    assert "--port PORT The port to listen on, 0 to 65535 (default: 8000" in text
    assert (
        "--log-level LEVEL How much the server logs: critical, error, warning, info, "
        "debug, trace (default: info)." in text
    )
    read = set(re.findall(r"SMRITI_[A-Z_]+", inspect.getsource(Settings.from_environment)))
    environment = shown.stdout.split("environment (a flag wins over its variable):\n", 1)[1]
    listed = [line.split()[0] for line in environment.splitlines() if line.startswith("  SMRITI_")]
    assert sorted(listed) == sorted(read)
    assert {"SMRITI_DATABASE_URL", "SMRITI_PRELOAD_PROVIDERS", "SMRITI_WORKERS"} <= read


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (("--port", "99999"), "smriti: Argument --port: a port is from 0 to 65535, not 99999.\n"),
        (("--port", "-1"), "smriti: Argument --port: a port is from 0 to 65535, not -1.\n"),
        (("--port", "http"), "smriti: Argument --port: a port is a whole number, not 'http'.\n"),
        (
            ("--log-level", "foo"),
            "smriti: Argument --log-level: one of critical, error, warning, info, debug, "
            "trace, not 'foo'.\n",
        ),
    ],
)
def test_a_bad_port_or_log_level_is_a_usage_error_before_anything_runs(
    tmp_path: Path, argument: tuple[str, str], message: str
) -> None:
    database = tmp_path / "never.sqlite3"
    # A server that started anyway would still be listening at the timeout.
    refused = smriti("serve", *argument, "--database", sqlite_url(database), timeout=30)
    assert (refused.returncode, refused.stdout) == (exits.USAGE, "")
    assert refused.stderr.startswith("usage: smriti serve [-h] [--host HOST] [--port PORT]")
    assert refused.stderr.endswith("]\n" + message)
    assert list(tmp_path.iterdir()) == []  # no migration ran, no file was made


# Every command that only reads the database; `users add` and `import` add data.
READERS = [
    ("verify",),
    ("export",),
    ("export", "--format", "markdown", "--session", "1"),
    ("users", "list"),
    ("users", "lockouts"),
    ("users", "disable", "ada"),
    ("users", "enable", "ada"),
    ("users", "delete", "ada"),
    ("users", "passwd", "ada", "--password-stdin"),
    ("tokens", "list", "--user", "ada"),
    ("tokens", "create", "--user", "ada", "--name", "ci"),
    ("tokens", "revoke", "1"),
]


@pytest.mark.database_neutral
@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_a_command_that_reads_refuses_a_database_that_does_not_exist(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = tmp_path / "typo" / "smriti.sqlite3"
    refused = smriti(*command, "--database", sqlite_url(path), stdin=PASSWORD + "\n")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        exits.DATABASE,
        "",
        f"smriti: No database at {path}: this command does not create one "
        "(`smriti serve`, `smriti users add` and `smriti import` do).\n",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.database_neutral
def test_the_commands_that_add_data_create_the_database(tmp_path: Path) -> None:
    first = tmp_path / "accounts" / "smriti.sqlite3"
    added = smriti(
        "users", "add", "ada", "--password-stdin", "--database", sqlite_url(first), stdin=PASSWORD
    )
    assert (added.returncode, added.stderr) == (0, "Added user ada.\n")
    assert first.is_file()
    document = tmp_path / "empty.json"
    document.write_text(
        json.dumps({"format": "smriti-export", "version": 1, "spaces": [], "sessions": []})
    )
    second = tmp_path / "imported" / "smriti.sqlite3"
    imported = smriti("import", str(document), "--database", sqlite_url(second))
    assert imported.returncode == 0, imported.stderr
    assert second.is_file()
