"""Run the real `smriti serve` in a subprocess for system tests."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from api.exits import ADDRESS_IN_USE

# A command prefix that runs a server without root's rights over files (a user
# namespace with no mapped ids), so file permissions hold even in a root container.
UNPRIVILEGED: tuple[str, ...] = ("unshare", "--user") if os.geteuid() == 0 else ()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def add_user(database_url: str, name: str, password: str, *, admin: bool = False) -> None:
    """``smriti users add NAME [--admin] --password-stdin`` on that database, as a user would."""
    role = ["--admin"] if admin else []
    command = [sys.executable, "-m", "api", "users", "add", name, *role, "--password-stdin"]
    subprocess.run(
        [*command, "--database", database_url],
        input=password + "\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=60,
    )


PORT_ATTEMPTS = 3


class PortTaken(RuntimeError):
    """The picked port was taken by someone else before the server could bind it."""


# uvicorn prints this once per worker process when its lifespan has started.
STARTED = "Application startup complete."


class SmritiServer:
    """``smriti serve`` on 127.0.0.1 and a free port, stopped on exit."""

    def __init__(
        self,
        database_url: str,
        *,
        providers: Path | None = None,
        env: dict[str, str] | None = None,
        prefix: tuple[str, ...] = (),
        python: str = sys.executable,
        workers: int | None = 1,
        args: tuple[str, ...] = (),
        program: tuple[str, ...] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.prefix = prefix  # e.g. UNPRIVILEGED: run the server without root's rights
        self.python = python  # the environment Smriti is installed in
        # How Smriti is started: `python -m api` from the repository, unless an
        # installed `smriti` is named (run from ``cwd``, elsewhere than the repository).
        self.program = program or (python, "-m", "api")
        self.cwd = cwd
        self.database_url = database_url
        self.providers = providers
        self.env = env or {}
        # --workers: one unless a test asks for more, or for None: the server's own
        # default (one per core on PostgreSQL, a process importing the whole app
        # per core at every start, which only the tests of that default need).
        # SMRITI_WORKERS in ``env`` is left to say the count, as a test of it wants.
        self.workers = None if "SMRITI_WORKERS" in self.env else workers
        self.args = args  # more `smriti serve` options, e.g. ("--host", "0.0.0.0")
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.output = ""  # everything the server printed, once it has stopped

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def graphql_url(self) -> str:
        return f"{self.base_url}/graphql"

    def command(self) -> list[str]:
        command = [
            *self.prefix,
            *self.program,
            "serve",
            "--port",
            str(self.port),
            "--database",
            self.database_url,
            "--log-level",
            "debug",
        ]
        if self.providers:
            command += ["--providers", str(self.providers)]
        if self.workers is not None:
            command += ["--workers", str(self.workers)]
        return command + list(self.args)

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "LITELLM_OFFLINE_MODE": "true",
            # Tests want the offline echo at once; a test of the pace sets its own.
            "SMRITI_OFFLINE_STREAM_DELAY_MS": "0",
            # LiteLLM loads at the first call that needs it, not at every start:
            # the preload cost each server ~2.7 s of CPU, most of the suite's
            # server starts (a test of the preload sets "1").
            "SMRITI_PRELOAD_PROVIDERS": "0",
            **self.env,
        }

    def failed_start(self, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a server that is expected to refuse to start; its exit and output.
        A server that starts anyway is still listening at ``timeout`` (TimeoutExpired)."""
        return subprocess.run(
            self.command(),
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.cwd,
        )

    def __enter__(self) -> SmritiServer:
        # The port was free when it was picked; another server of the suite (the two
        # passes run side by side) may take it before this one binds. `smriti serve`
        # says so with its own status, and then another free port is tried.
        for _ in range(PORT_ATTEMPTS - 1):
            try:
                return self._start()
            except PortTaken:
                self.port = free_port()
        return self._start()

    def _start(self) -> SmritiServer:
        command = self.command()
        env = self.environment()
        # A file, not a pipe: a chatty server must never block on a full pipe.
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed on a failed start or in __exit__)
        self.process = subprocess.Popen(
            command, env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.cwd
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if (status := self.process.poll()) is not None:
                self._log.seek(0)
                printed = self._log.read().decode()
                self._log.close()
                self._log = None
                self.output = printed
                if status == ADDRESS_IN_USE:
                    raise PortTaken(printed)
                raise RuntimeError(f"smriti serve exited: {printed}")
            try:
                healthy = httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200
            except httpx.TransportError:
                healthy = False
            # Every worker, not just the first to answer, has finished its start-up.
            if healthy and self.printed().count(STARTED) >= (self.workers or 1):
                return self
            time.sleep(0.1)
        self.__exit__(None, None, None)
        raise TimeoutError("smriti serve did not start in 30 s")

    def printed(self) -> str:
        """What the running server has printed so far."""
        if self._log is None:
            return self.output
        # pread: the server shares this file's offset, which a seek would move.
        fd = self._log.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def worker_pids(self) -> list[int]:
        """The process ids of the server's workers, as uvicorn announces them."""
        return [int(pid) for pid in re.findall(r"Started server process \[(\d+)\]", self.printed())]

    def cpu_seconds(self) -> dict[int, float]:
        """Each worker's CPU time so far (user + system, from /proc), by process id."""
        return {pid: cpu_seconds(pid) for pid in self.worker_pids()}

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.seek(0)
            self.output = self._log.read().decode(errors="replace")
            self._log.close()
            self._log = None
