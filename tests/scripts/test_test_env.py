"""scripts/test-env, the set-up step of `make test`, on a fresh clone.

Nothing is assumed to be running: the script starts its own PostgreSQL on a free
port and removes it afterwards, whatever the command's outcome.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.databases import TEST_DB
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import UNPRIVILEGED

SCRIPT = REPOSITORY_ROOT / "scripts" / "test-env"
STARTED = re.compile(
    r"^test-env: PostgreSQL [\d.]+ for this run on 127\.0\.0\.1:(\d+) \((\S+), owner (\S+)\)$", re.M
)
# Asks the server it was given which port it listens on.
ASK_PORT = (
    "import asyncio, asyncpg, os\n"
    "async def main():\n"
    "    url = os.environ['SMRITI_TEST_PG_URL'].replace('postgres://', 'postgresql://')\n"
    "    conn = await asyncpg.connect(url)\n"
    "    print(await conn.fetchval(\"select current_setting('port')\"))\n"
    "    await conn.close()\n"
    "asyncio.run(main())\n"
)

pytestmark = pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone, with the script as it is in this working tree."""
    target = tmp_path_factory.mktemp("fresh") / "smriti"
    subprocess.run(["git", "clone", "-q", str(REPOSITORY_ROOT), str(target)], check=True)
    shutil.copy2(SCRIPT, target / "scripts" / "test-env")
    return target


def run(
    clone: Path, *command: str, prefix: tuple[str, ...] = (), **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SMRITI_TEST_PG_URL"}
    return subprocess.run(
        [*prefix, str(clone / "scripts" / "test-env"), *command],
        cwd=clone,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_a_throwaway_postgresql_serves_the_command_and_is_removed(clone: Path) -> None:
    done = run(clone, sys.executable, "-c", ASK_PORT)
    assert done.returncode == 0, done.stderr
    started = STARTED.search(done.stderr)
    assert started, done.stderr
    port, cluster, owner = int(started[1]), Path(started[2]), started[3]
    assert done.stdout == f"{port}\n"  # the command reached the cluster the script started
    assert port != 5432
    assert owner == ("postgres" if os.geteuid() == 0 else os.environ.get("USER", owner))
    assert done.stderr.endswith(f"test-env: PostgreSQL on port {port} stopped and removed\n")
    assert not cluster.exists()
    assert not listening(port)


def test_the_cluster_is_removed_when_the_command_fails(clone: Path) -> None:
    done = run(clone, "sh", "-c", "exit 7")
    assert done.returncode == 7
    started = STARTED.search(done.stderr)
    assert started, done.stderr
    assert not Path(started[2]).exists()
    assert not listening(int(started[1]))


def test_a_server_named_by_smriti_test_pg_url_is_used_and_nothing_started(clone: Path) -> None:
    url = "postgres://someone@127.0.0.1:6543/elsewhere"
    done = run(clone, "sh", "-c", 'echo "$SMRITI_TEST_PG_URL"', SMRITI_TEST_PG_URL=url)
    assert (done.returncode, done.stdout) == (0, url + "\n")
    assert done.stderr == "test-env: using the PostgreSQL server at SMRITI_TEST_PG_URL\n"


def test_without_root_and_without_a_server_it_stops_with_the_command_to_run(clone: Path) -> None:
    done = run(clone, "sh", "-c", "echo ran", prefix=UNPRIVILEGED, PG_BINDIR="/nonexistent")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "test-env: the tests need a PostgreSQL server (initdb, pg_ctl); run:  "
        "sudo apt-get install postgresql (or set SMRITI_TEST_PG_URL to a server of yours)\n"
    )


def browser_run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Collect and run one browser module as if Chromium were not installed."""
    plugin = tmp_path / "no_chromium.py"
    plugin.write_text(
        "from pathlib import Path\nimport tests.browser.support as support\n"
        "support.CHROMIUM = Path('/nonexistent/chromium')\n"
    )
    inherited = {k: v for k, v in os.environ.items() if k != "SMRITI_TEST_SKIP_BROWSER"}
    environment = {**inherited, "PYTHONPATH": f"{tmp_path}:{REPOSITORY_ROOT}", **env}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no_chromium", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/browser/test_workspace.py"],
        cwd=REPOSITORY_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_browser_tests_without_chromium_stop_the_run_with_the_command(tmp_path: Path) -> None:
    done = browser_run(tmp_path)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert done.stderr == (
        "ERROR: the browser tests need /nonexistent/chromium: run  sudo apt-get install "
        "chromium  (or set SMRITI_TEST_SKIP_BROWSER=1 to skip them)\n\n"
    )


def test_browser_tests_are_skipped_only_when_asked(tmp_path: Path) -> None:
    done = browser_run(tmp_path, SMRITI_TEST_SKIP_BROWSER="1")
    assert done.returncode == pytest.ExitCode.OK
    assert "/nonexistent/chromium is not installed and SMRITI_TEST_SKIP_BROWSER=1" in done.stdout
    assert re.search(r"^\d+ skipped in ", done.stdout, re.M), done.stdout
