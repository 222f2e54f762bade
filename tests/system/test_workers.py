"""`smriti serve --workers 2`: several processes, one database, one numbering.

Each test checks, from /proc, that both workers really spent CPU on the
requests (every worker listens on its own SO_REUSEPORT socket, and the kernel
spreads connections over them by the client's port): a test whose requests
all reached one worker would prove nothing about two.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from api import exits
from api.app import serve_app
from api.runtime import SERVE_FLAGS_VARIABLE
from api.store.database import sqlite_url
from tests.support.fake_openai import FakeOpenAI
from tests.support.served_sessions import write_providers_file
from tests.support.servers import STARTED, SmritiServer
from tests.support.streams import STREAM, graphql_ws, sse_events

SEND = """mutation($s: ID!, $c: String!, $k: String) {
  sendMessage(input: {sessionId: $s, content: $c, idempotencyKey: $k}) {
    userTurn { sequenceNumber content } assistantTurn { sequenceNumber } errors { code } } }"""
CREATE = "mutation { createSession(input: {}) { session { id } } }"
CREATE_LAB = 'mutation { createSession(input: {model: "lab/my-model"}) { session { id } } }'
TURNS = """query($s: ID!, $after: String) { session(id: $s) { lastSequenceNumber
  turns(first: 100, after: $after) { edges { node { sequenceNumber role content } }
  pageInfo { hasNextPage endCursor } } } }"""
MIGRATIONS = sorted(
    path.stem for path in (Path(__file__).parents[2] / "api" / "store" / "migrations").glob("0*.py")
)


async def post(http: httpx.AsyncClient, server: SmritiServer, query: str, **variables: Any) -> Any:
    response = await http.post(server.graphql_url, json={"query": query, "variables": variables})
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def new_session(server: SmritiServer) -> str:
    async with httpx.AsyncClient(timeout=60) as http:
        sid: str = (await post(http, server, CREATE))["createSession"]["session"]["id"]
        return sid


async def every_turn(server: SmritiServer, sid: str) -> tuple[int, list[dict[str, Any]]]:
    """lastSequenceNumber and every turn, page by page."""
    found: list[dict[str, Any]] = []
    after = None
    async with httpx.AsyncClient(timeout=60) as http:
        while True:
            session = (await post(http, server, TURNS, s=sid, after=after))["session"]
            found += [edge["node"] for edge in session["turns"]["edges"]]
            if not session["turns"]["pageInfo"]["hasNextPage"]:
                return session["lastSequenceNumber"], found
            after = session["turns"]["pageInfo"]["endCursor"]


async def on_both_workers(server: SmritiServer, work: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``work``; assert that each of the two workers spent at least a tenth
    of the CPU time the workers spent on it."""
    before = server.cpu_seconds()
    assert len(before) == 2, server.printed()
    result = await work()
    spent = {pid: seconds - before[pid] for pid, seconds in server.cpu_seconds().items()}
    total = sum(spent.values())
    assert all(seconds >= total / 10 for seconds in spent.values()), spent
    return result


async def send(server: SmritiServer, sid: str, content: str, key: str | None = None) -> Any:
    """One send on a connection of its own (the kernel picks the worker per connection)."""
    async with httpx.AsyncClient(timeout=120) as http:
        return (await post(http, server, SEND, s=sid, c=content, k=key))["sendMessage"]


async def test_32_clients_x_4_sends_on_two_workers_number_turns_1_to_256(
    database_url: str,
) -> None:
    with SmritiServer(database_url, workers=2) as server:
        sid = await new_session(server)

        async def client(number: int) -> list[Any]:
            async with httpx.AsyncClient(timeout=120) as http:
                return [
                    (await post(http, server, SEND, s=sid, c=f"{number}.{i}", k=None))[
                        "sendMessage"
                    ]
                    for i in range(4)
                ]

        results = await on_both_workers(
            server, lambda: asyncio.gather(*(client(n) for n in range(32)))
        )
        last, turns = await every_turn(server, sid)

    assert [r["errors"] for rs in results for r in rs] == [[]] * 128
    assert [t["sequenceNumber"] for t in turns] == list(range(1, 257))
    assert last == 256
    assert sorted(t["content"] for t in turns if t["role"] == "USER") == sorted(
        f"{n}.{i}" for n in range(32) for i in range(4)
    )


async def test_a_key_sent_at_once_to_both_workers_writes_one_user_turn(
    database_url: str,
) -> None:
    with SmritiServer(database_url, workers=2) as server:
        sid = await new_session(server)
        keys = [f"key-{k}" for k in range(4)]
        results = await on_both_workers(
            server,
            lambda: asyncio.gather(
                *(send(server, sid, f"once {key}", key) for key in keys for _ in range(16))
            ),
        )
        _, turns = await every_turn(server, sid)

    users = [t for t in turns if t["role"] == "USER"]
    assert sorted(t["content"] for t in users) == [f"once {key}" for key in keys]
    # ... and one reply to each: the losers of the race return the winner's.
    assert len(turns) == 2 * len(keys)
    assert {r["assistantTurn"]["sequenceNumber"] for r in results} == {
        t["sequenceNumber"] for t in turns if t["role"] == "ASSISTANT"
    }
    by_key = {
        key: {r["userTurn"]["sequenceNumber"] for r in results[i * 16 : (i + 1) * 16]}
        for i, key in enumerate(keys)
    }
    assert by_key == {
        key: {next(t["sequenceNumber"] for t in users if t["content"] == f"once {key}")}
        for key in keys
    }


async def test_a_key_sent_at_once_to_two_servers_writes_one_user_turn(database_url: str) -> None:
    """The same, with certainty about the processes: the database enforces the key."""
    with (
        SmritiServer(database_url, workers=1) as first,
        SmritiServer(database_url, workers=1) as second,
    ):
        sid = await new_session(first)
        results = await asyncio.gather(
            *(send(server, sid, "once", "the-key") for _ in range(8) for server in (first, second))
        )
        _, turns = await every_turn(second, sid)

    assert {r["userTurn"]["sequenceNumber"] for r in results} == {1}
    assert [t["content"] for t in turns if t["role"] == "USER"] == ["once"]


async def test_a_key_sent_at_once_to_two_servers_asks_the_provider_once(
    database_url: str, tmp_path: Path
) -> None:
    """The requests that did not write the turn wait for the answer of the one
    that asks, whichever server it is on, instead of asking the provider again."""
    with FakeOpenAI() as fake:
        fake.delay(1.5)  # every request arrives while the first is asking
        fake.reply("Once.")
        providers = write_providers_file(tmp_path, fake)
        with (
            SmritiServer(database_url, workers=1, providers=providers) as first,
            SmritiServer(database_url, workers=1, providers=providers) as second,
        ):
            async with httpx.AsyncClient(timeout=60) as http:
                created = await post(http, first, CREATE_LAB)
            sid = created["createSession"]["session"]["id"]
            results = await asyncio.gather(
                *(
                    send(server, sid, "once", "the-key")
                    for _ in range(4)
                    for server in (first, second)
                )
            )
            _, turns = await every_turn(second, sid)

    assert [(r["userTurn"]["sequenceNumber"], r["assistantTurn"]) for r in results] == [
        (1, {"sequenceNumber": 2})
    ] * 8
    assert [(t["role"], t["content"]) for t in turns] == [("USER", "once"), ("ASSISTANT", "Once.")]
    assert len(fake.requests) == 1


async def test_streams_over_websockets_and_sse_on_two_workers(database_url: str) -> None:
    with SmritiServer(database_url, workers=2) as server:
        # Sixteen streams of a long echo: enough connections that the kernel gives
        # each worker some, and enough pieces that each worker's share shows in
        # /proc's 10 ms CPU ticks (eight short ones once left a worker at 0.0 s).
        sids = [await new_session(server) for _ in range(16)]
        words = " ".join(f"word{i}" for i in range(200))

        async def websocket(sid: str) -> list[str]:
            async with (
                httpx.AsyncClient(timeout=60) as http,
                graphql_ws(http, server.graphql_url) as ws,
            ):
                await ws.subscribe("1", {"sessionId": sid, "content": f"Hello {words}"})
                events = (await ws.events("1"))["1"]
            return [e["__typename"] for e in events]

        async def sse(sid: str) -> list[str]:
            body = {
                "query": STREAM,
                "variables": {"input": {"sessionId": sid, "content": f"Hi {words}"}},
            }
            async with httpx.AsyncClient(timeout=60) as http:
                response = await http.post(
                    server.graphql_url, json=body, headers={"Accept": "text/event-stream"}
                )
            return [
                data["data"]["messageStream"]["__typename"]
                for event, data in sse_events(response.text)
                if event == "next"
            ]

        streams = await on_both_workers(
            server,
            lambda: asyncio.gather(
                *(websocket(sid) for sid in sids[:8]), *(sse(sid) for sid in sids[8:])
            ),
        )
        saved = [await every_turn(server, sid) for sid in sids]

    for names in streams:
        assert names[0] == "StreamUserTurn"
        assert set(names[1:-1]) == {"StreamDelta"}
        assert names[-1] == "StreamAssistantTurn"
    assert [(last, [t["role"] for t in turns]) for last, turns in saved] == [
        (2, ["USER", "ASSISTANT"])
    ] * 16


async def test_the_parent_migrates_once_and_sigterm_stops_every_worker(
    empty_database_url: str,
) -> None:
    database_url = empty_database_url
    server = SmritiServer(database_url, workers=2)
    with server:
        pids = server.worker_pids()
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        status = await asyncio.to_thread(server.process.wait, 30)
        output = server.printed()

    assert status == 0
    assert output.count("Applied the migrations ") == 1
    assert f"Applied the migrations {', '.join(MIGRATIONS)} to " in output
    assert len(pids) == 2
    for pid in pids:
        assert f"Finished server process [{pid}]" in output
        assert not Path(f"/proc/{pid}").exists()
    assert output.count("Application shutdown complete.") == 2
    # A second server on the now migrated database starts and applies nothing.
    with SmritiServer(database_url, workers=2) as again:
        pass
    assert "Applied the migrations" not in again.output
    assert again.output.count("Application startup complete.") == 2


async def test_two_servers_started_together_on_a_new_database_both_start(
    empty_database_url: str,
) -> None:
    """Only one applies the migrations; the other waits for it, then finds none to apply."""
    database_url = empty_database_url
    first = SmritiServer(database_url, workers=1)
    second = SmritiServer(database_url, workers=1)
    # Both starts are waited for, and both servers stopped, even if one failed.
    started = await asyncio.gather(
        asyncio.to_thread(first.__enter__),
        asyncio.to_thread(second.__enter__),
        return_exceptions=True,
    )
    first.__exit__(None, None, None)
    second.__exit__(None, None, None)

    assert started == [first, second], [first.output, second.output]
    outputs = [first.output, second.output]
    assert sum(o.count("Applied the migrations ") for o in outputs) == 1
    assert all(o.count("Application startup complete.") == 1 for o in outputs)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "smriti: SMRITI_WORKERS must be at least 1, not 0.\n"),
        ("two", "smriti: SMRITI_WORKERS must be a whole number, not 'two'.\n"),
    ],
)
def test_a_bad_worker_count_is_refused(database_url: str, value: str, message: str) -> None:
    refused = SmritiServer(database_url, env={"SMRITI_WORKERS": value}).failed_start()
    assert (refused.returncode, refused.stderr) == (2, message)


def test_workers_default_to_the_cores_on_postgresql_and_one_on_sqlite(database_url: str) -> None:
    cores = len(os.sched_getaffinity(0))
    expected = 1 if database_url.startswith("sqlite:") else cores
    with SmritiServer(database_url, workers=None) as server:
        wait_for_startups(server, expected)
    assert server.output.count("Application startup complete.") == expected
    assert f", {expected} worker{'s' if expected > 1 else ''}.\n" in server.output


def test_smriti_workers_sets_the_count(database_url: str) -> None:
    with SmritiServer(database_url, env={"SMRITI_WORKERS": "2"}) as server:
        wait_for_startups(server, 2)
    assert server.output.count(STARTED) == 2


def wait_for_startups(server: SmritiServer, workers: int) -> None:
    """Not told the count, SmritiServer waits for one worker to start; a stop
    ends a worker still starting at once: wait (30 s at most) for ``workers``."""
    deadline = time.monotonic() + 30
    while server.printed().count(STARTED) < workers and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_port_held_by_another_multi_worker_server_is_refused(database_url: str) -> None:
    """Its reuse-port group must not take in a second server (test_serve_address.py
    has the plain port in use)."""
    with SmritiServer(database_url, workers=2) as running:
        clash = SmritiServer(database_url, workers=2)
        clash.port = running.port
        refused = clash.failed_start()
    assert (refused.returncode, refused.stderr) == (
        exits.ADDRESS_IN_USE,
        f"smriti: Cannot listen on 127.0.0.1:{running.port}: Address already in use.\n",
    )


async def test_serve_app_builds_a_worker_that_does_not_migrate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The factory each worker calls leaves even an unmigrated database alone."""
    path = tmp_path / "never-migrated.sqlite3"
    monkeypatch.setenv(SERVE_FLAGS_VARIABLE, json.dumps({"database_url": sqlite_url(path)}))
    application = serve_app()
    async with application.router.lifespan_context(application):
        pass
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == []


def test_every_worker_checks_the_host_with_the_settings_it_was_given(database_url: str) -> None:
    """Sixteen connections of their own (all on one worker: 1 chance in 2**15):
    a foreign name is refused, a name from SMRITI_ALLOWED_HOSTS is served."""
    env = {"SMRITI_ALLOWED_HOSTS": "smriti.lan"}
    with SmritiServer(database_url, workers=2, env=env) as server:
        url = f"{server.base_url}/healthz"
        foreign = [httpx.get(url, headers={"Host": "evil.example"}).status_code for _ in range(16)]
        allowed = [httpx.get(url, headers={"Host": "smriti.lan"}).status_code for _ in range(16)]
    assert (foreign, allowed) == ([400] * 16, [200] * 16)


async def test_every_worker_asks_for_credentials_with_auth_accounts(database_url: str) -> None:
    # The --auth flag reaches the workers (they build their settings from the
    # parent's flags): an anonymous request is refused by each of them.
    with SmritiServer(database_url, workers=2, args=("--auth", "accounts")) as server:

        async def anonymous() -> list[int]:
            async def one() -> int:
                async with httpx.AsyncClient(timeout=60) as http:
                    response = await http.post(server.graphql_url, json={"query": CREATE})
                    return response.status_code

            return list(await asyncio.gather(*(one() for _ in range(200))))

        statuses = await on_both_workers(server, anonymous)
    assert set(statuses) == {401}
