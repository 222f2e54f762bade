"""`smriti serve` with a database it cannot use: one line, exit status 3, at once.

Before, each of these left the server at "Waiting for application startup" for
good (deaf to SIGTERM), so `failed_start` would time out.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.servers import UNPRIVILEGED, SmritiServer, free_port

EXIT_DATABASE = 3


def refused(url: str, *, prefix: tuple[str, ...] = ()) -> str:
    """The server's whole output, after checking it exited with status 3 on its own."""
    done = SmritiServer(url, prefix=prefix).failed_start(timeout=30)
    assert (done.returncode, done.stdout) == (EXIT_DATABASE, "")
    return done.stderr


def test_a_file_of_random_bytes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "random.sqlite3"
    path.write_bytes(bytes(range(256)) * 16)
    assert refused(f"sqlite:///{path}") == (
        f"smriti: Cannot open the database {path}: file is not a database.\n"
    )


def test_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    path = folder / "smriti.sqlite3"
    try:
        assert refused(f"sqlite:///{path}", prefix=UNPRIVILEGED) == (
            f"smriti: Cannot open the database {path}: unable to open database file: "
            f"the directory {folder} is not writable.\n"
        )
    finally:
        folder.chmod(stat.S_IRWXU)
    assert not path.exists()


def test_a_read_only_database_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "smriti.sqlite3"
    with SmritiServer(f"sqlite:///{path}"):
        pass  # a real, migrated database
    before = path.read_bytes()
    path.chmod(stat.S_IRUSR)
    assert refused(f"sqlite:///{path}", prefix=UNPRIVILEGED) == (
        f"smriti: The database {path} is read-only (attempt to write a readonly database); "
        f"Smriti must be able to write to the file and to its directory {tmp_path}.\n"
    )
    assert path.read_bytes() == before


def test_a_file_where_the_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a directory")
    assert refused(f"sqlite:///{tmp_path}/data/smriti.sqlite3") == (
        f"smriti: Cannot create the directory {tmp_path}/data: a file is in the way.\n"
    )


@pytest.mark.parametrize("slashes", ["///", "////"])
def test_both_absolute_spellings_open_that_file_and_say_which(tmp_path: Path, slashes: str) -> None:
    path = tmp_path / "nested" / "smriti.sqlite3"
    server = SmritiServer(f"sqlite:{slashes}{str(path).lstrip('/')}")
    with server:
        pass
    assert path.is_file()
    assert path.stat().st_size > 0
    assert (
        f"Smriti on http://127.0.0.1:{server.port}/ (GraphiQL at /graphql), "
        f"database SQLite file {path}, 1 worker.\n"
    ) in server.output


def test_an_unreachable_postgresql_server_is_refused() -> None:
    port = free_port()  # nothing listens there
    url = f"postgres://smriti:secret-pw@127.0.0.1:{port}/smriti"
    assert refused(url) == (
        f"smriti: Cannot open the database postgres://smriti:***@127.0.0.1:{port}/smriti: "
        f"[Errno 111] Connect call failed ('127.0.0.1', {port}).\n"
    )


def test_a_bad_numeric_setting_stops_serve_with_one_line(tmp_path: Path) -> None:
    server = SmritiServer(
        f"sqlite:///{tmp_path / 's.sqlite3'}", env={"SMRITI_MAX_WINDOW_TURNS": "ten"}
    )
    done = server.failed_start(timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "smriti: SMRITI_MAX_WINDOW_TURNS must be a whole number, not 'ten'.\n",
    )
