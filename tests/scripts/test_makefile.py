"""The Makefile's test targets, run with a stand-in for the venv's Python.

The stand-in prints what it was asked to run and exits with the status the test
chose for that pass, so the targets' own logic is what is tested: both passes
run, at the same time, each with --durations; the target fails when either fails
(pytest's exit 5, "no tests ran", included); `make test-fast` is the SQLite-only
inner loop.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.databases import TEST_DB
from tests.support.repository import REPOSITORY_ROOT

pytestmark = [
    pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass"),
    pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make"),
]

# The SQLite pass waits (30 s at most) for a file the PostgreSQL pass writes: it
# finds it only when both run at once.
STAND_IN = """#!/usr/bin/env bash
echo "$SMRITI_TEST_DB pass: $*"
if [[ $SMRITI_TEST_DB == postgres ]]; then
    touch "$MARKS/postgres-started"
    exit "${POSTGRES_EXIT:-0}"
fi
for _ in $(seq 300); do
    [[ -e $MARKS/postgres-started ]] && { echo "alongside the PostgreSQL pass"; break; }
    sleep 0.1
done
exit "${SQLITE_EXIT:-0}"
"""


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A venv whose python is the stand-in, installed as far as make can tell."""
    root = tmp_path / "venv"
    (root / "bin").mkdir(parents=True)
    python = root / "bin" / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    stamp = root / ".installed-dev"
    stamp.touch()
    later = time.time() + 3600  # newer than the lock files, whatever their dates
    os.utime(stamp, (later, later))
    (tmp_path / "marks").mkdir()
    return root


def make(venv: Path, target: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPOSITORY_ROOT), target, f"VENV={venv}"],
        env={**os.environ, "MARKS": str(venv.parent / "marks"), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_both_passes_run_at_once_with_durations_and_both_outputs(venv: Path) -> None:
    done = make(venv, "test-both")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "sqlite pass: -m pytest --durations=25" in lines
    assert "alongside the PostgreSQL pass" in lines
    assert "==> SQLite pass: exit 0; PostgreSQL pass: exit 0; its output:" in lines
    # The PostgreSQL pass's output comes last, whole, so its summary closes the log.
    assert lines[-1] == "postgres pass: -m pytest --durations=25"


@pytest.mark.parametrize(
    ("sqlite", "postgres"), [("1", "0"), ("0", "1"), ("5", "0"), ("0", "5"), ("2", "1")]
)
def test_the_target_fails_when_either_pass_fails_or_runs_no_test(
    venv: Path, sqlite: str, postgres: str
) -> None:
    done = make(venv, "test-both", SQLITE_EXIT=sqlite, POSTGRES_EXIT=postgres)
    assert done.returncode != 0
    lines = done.stdout.splitlines()
    # Both ran to the end, whichever failed.
    assert f"==> SQLite pass: exit {sqlite}; PostgreSQL pass: exit {postgres}; its output:" in (
        lines
    )
    assert lines[-1] == "postgres pass: -m pytest --durations=25"


def test_make_test_fast_runs_domain_store_and_api_on_sqlite_only(venv: Path) -> None:
    (venv.parent / "marks" / "postgres-started").touch()  # the stand-in need not wait
    done = make(venv, "test-fast")
    assert done.returncode == 0, done.stderr
    assert "sqlite pass: -m pytest tests/domain tests/store tests/api" in done.stdout.splitlines()
    assert "postgres pass" not in done.stdout
