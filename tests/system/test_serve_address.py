"""Where `smriti serve` listens, and when it says so.

The "Smriti on http://…" line comes once the address is held, with the port
really listened on (0: a free one); a port already taken is exit status 5 with
one line, and no such announcement before it.
"""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time

import httpx
import pytest

from api import __version__, exits
from tests.support.servers import SmritiServer


@pytest.mark.parametrize("workers", [1, 2])
def test_a_port_in_use_is_refused_with_status_5_and_never_announced(
    database_url: str, workers: int
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = SmritiServer(database_url, workers=workers)
        server.port = taken.getsockname()[1]
        refused = server.failed_start()
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        exits.ADDRESS_IN_USE,
        "",
        f"smriti: Cannot listen on 127.0.0.1:{server.port}: Address already in use.\n",
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_port_0_announces_the_port_it_listens_on(database_url: str, workers: int) -> None:
    server = SmritiServer(database_url, workers=workers)
    server.port = 0
    process = subprocess.Popen(
        server.command(), env=server.environment(), stderr=subprocess.PIPE, text=True
    )
    # Whatever happens, the server is gone in 60 s (and its output then ends).
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        assert process.stderr is not None
        line = "?"
        while line and not line.startswith("Smriti on "):
            line = process.stderr.readline()
        announced = re.fullmatch(
            rf"Smriti on http://127\.0\.0\.1:(\d+)/ \(GraphiQL at /graphql\), database "
            rf".+, {workers} workers?\.\n",
            line,
        )
        assert announced is not None, line
        port = int(announced.group(1))
        assert port != 0
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "nothing listens on the announced port"
                time.sleep(0.1)
        assert (health.status_code, health.json()) == (
            200,
            {"status": "ok", "version": __version__},
        )
    finally:
        watchdog.cancel()
        process.terminate()
        process.communicate(timeout=30)
