"""`smriti serve`: one process, or `--workers N` sharing the port; when it is announced.

The "Smriti on http://…" line is printed once the address is held (one
process: once uvicorn listens; several: once the parent has bound the port
the workers share), so it never precedes a failed bind.

uvicorn's own multi-process mode binds one socket in the parent and hands it
to every worker. Each worker's event loop then accepts every connection
waiting when it wakes, so a burst of keep-alive connections lands mostly on
one worker (measured: 85% / 15% of the CPU for 32 clients on 2 workers). On
Linux each worker here binds a socket of its own to the same address with
SO_REUSEPORT instead, and the kernel spreads new connections over them by a
hash of the client's address and port. Elsewhere SO_REUSEPORT does not spread
connections, so uvicorn's shared socket is used.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, cast

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.loops.auto import auto_loop_factory
from uvicorn.supervisors import Multiprocess

from . import console, exits

# The app factory every worker calls (settings from the environment it inherits).
# Named from this package's name: `api` in a clone, `smriti` installed.
FACTORY = f"{__package__}.app:serve_app"
# The event loop factory every worker calls, first (see the function).
LOOP_FACTORY = f"{__name__}:loop_after_importing_the_app"
# Seconds a request still running at a stop may go on before uvicorn cancels it
# (a stream then saves what it received, marked interrupted): short enough that
# SIGTERM ends `smriti serve` within 2 s, as `docker stop` expects within 10.
GRACE_SECONDS = 1
# Called with the port, once the server holds it.
Announce = Callable[[int], None]


def default_workers(database_url: str) -> int:
    """One per core this process may run on, on PostgreSQL; one on SQLite.

    SQLite lets one writer in at a time, and the busy timeout makes the other
    processes wait by sleeping and retrying (no queue): the README's
    configuration table gives the measurement behind this default.
    """
    if database_url.startswith("sqlite:"):
        return 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_one(app: Any, host: str, port: int, announce: Announce, **options: Any) -> int:
    """Serve ``app`` in this process until a signal stops it; the exit status.

    ``announce`` is called with the port once the server listens.
    """
    try:
        if port:
            _free_port(host, port)  # a clear message and status before the app starts
    except OSError as exc:
        return _cannot_listen(host, port, exc)
    server = _AnnouncingServer(uvicorn.Config(app, host=host, port=port, **options), announce)
    try:
        server.run()
    except KeyboardInterrupt:  # Ctrl-C: uvicorn stopped gracefully, then raised it again
        pass
    except SystemExit as exc:
        if exc.code != STARTUP_FAILURE:
            raise
        if server.bind_failed:  # taken between the check above and uvicorn's bind
            return console.fail(exits.ADDRESS_IN_USE, f"Cannot listen on {host}:{port}.")
        return exits.DATABASE
    return exits.OK


def run(workers: int, host: str, port: int, announce: Announce, **options: Any) -> int:
    """Serve the factory's app in ``workers`` processes until a signal stops
    them all (each drains its own replies); the exit status. ``announce`` is
    called with the port once it is held, before the workers start."""
    config = uvicorn.Config(
        FACTORY, factory=True, loop=LOOP_FACTORY, host=host, port=port, workers=workers, **options
    )
    try:
        free = _free_port(host, port)
    except OSError as exc:
        return _cannot_listen(host, port, exc)
    if not sys.platform.startswith("linux"):
        config.port = free
        bound = config.bind_socket()
        announce(bound.getsockname()[1])
        supervisor = _Supervisor(config, sockets=[bound])
        supervisor.run()
        return _status(supervisor)
    try:
        # Bound, never listening: it holds the address while the workers run,
        # and names the port if ``port`` is 0.
        reserved = _reuse_port_socket(_family(host), host, free)
    except OSError as exc:
        return _cannot_listen(host, port, exc)
    with reserved:
        config.port = reserved.getsockname()[1]
        announce(config.port)
        share = _OwnSocket(_family(host), host, config.port)
        # Multiprocess pickles its "sockets" into each worker it starts (and
        # restarts): this one unpickles as a new socket of the worker's own.
        supervisor = _Supervisor(config, sockets=cast(list[socket.socket], [share]))
        supervisor.run()
    return _status(supervisor)


def _cannot_listen(host: str, port: int, exc: OSError) -> int:
    return console.fail(
        exits.ADDRESS_IN_USE, f"Cannot listen on {host}:{port}: {exc.strerror or exc}"
    )


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, calling ``announce`` once it listens (never before a
    failed bind), and remembering whether the bind is what failed."""

    def __init__(self, config: uvicorn.Config, announce: Announce) -> None:
        super().__init__(config)
        self.announce = announce
        self.bind_failed = False

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        except SystemExit:
            # The lifespan's own failure sets should_exit; a failed bind does not.
            self.bind_failed = not self.lifespan.should_exit
            raise
        if self.started:
            listening = self.servers[0].sockets[0]
            self.announce(listening.getsockname()[1])


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, passing SIGINT and SIGTERM on to the workers at once.

    uvicorn's own looks at the signals it queued every half second: up to 0.5 s
    of the 2 s a stop may take. Here the handler also wakes that wait. It sets
    the event from a thread of its own: a signal handler runs in the main
    thread, which may be holding the event's lock (inside ``Event.wait``).
    """

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        for stop in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop, self._stop)

    def _stop(self, _number: int, _frame: Any) -> None:
        threading.Thread(target=self.should_exit.set, name="stop", daemon=True).start()


def _status(supervisor: Multiprocess) -> int:
    """DATABASE if a worker could not start (the supervisor then stops), else OK:
    a worker's start-up opens the database, already checked by the parent."""
    failed = any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes)
    return exits.DATABASE if failed else exits.OK


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _free_port(host: str, port: int) -> int:
    """``port`` (or a free one for 0) if nothing holds it, a reuse-port group
    included: a second server on the port must fail, not share its connections."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host.strip("[]"), port))
        free: int = probe.getsockname()[1]
        return free


def _reuse_port_socket(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


class _OwnSocket:
    """Stands for a socket bound to (host, port) with SO_REUSEPORT, created
    where it is unpickled: in the worker process."""

    def __init__(self, family: socket.AddressFamily, host: str, port: int) -> None:
        self.address = (family, host, port)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _reuse_port_socket, self.address


def loop_after_importing_the_app() -> asyncio.AbstractEventLoop:
    """A worker's event loop (uvicorn's "auto" choice), once the app's modules are imported.

    uvicorn calls its loop factory in the worker after starting the thread
    that answers the parent's health checks and before it takes over SIGTERM.
    Imported here, the app's modules (2 s, more on a busy machine) no longer
    load under uvicorn's handler, which would let the import run to its end
    before the worker could stop: SIGTERM still ends the worker at once.
    """
    importlib.import_module(FACTORY.partition(":")[0])
    return auto_loop_factory(use_subprocess=True)()
