"""``python -m bench.abuse --db sqlite|postgres [--seconds 60] [--clients 200]``

Careless and hostile clients against ``smriti serve``, on loopback, for a bounded time.

Most clients open ``messageStream`` streams (Server-Sent Events and websockets,
mixed) and drop them: 0-20 ms after asking, after the first piece, after sending
``complete``, or after waiting without ever reading. The others send ordinary
``sendMessage`` calls on the same sessions, and their latency is what the storm
costs a well-behaved client. Afterwards:

* **freeze**: a read and a send must each answer within a few seconds;
* **integrity**, read from the database once the server has stopped: every
  session's turns are numbered 1..N with no gap (N = its ``last_sequence_number``),
  and every user turn a ``sendMessage`` response reported is stored, once, with
  the sequence number it was given.

Exit status: 0 when the server never froze and nothing was lost or misnumbered,
1 when one of those fails, 2 when the run itself fails.
"""

from __future__ import annotations

import os

# Before anything imports LiteLLM: it must never reach for the network.
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import time
import traceback
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import asyncpg  # type: ignore[import-untyped]
import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from api.settings import DEFAULT_PROVIDERS_FILE
from api.store.database import sqlite_path
from bench.databases import temporary_database
from bench.report import RESULTS_DIR
from bench.streaming import smriti_serve

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
SESSIONS = 20  # the clients share these, so streams and sends contend on each
SENDER_SHARE = 5  # one client in five sends normally; the rest drop streams
# A dropping client waits this long on average between streams: 200 clients then
# offer about 80 streams a second, which this 2-core machine serves without
# queueing for seconds. Unpaced, the server saturates, the disconnects arrive
# before the handlers even start, and the drops stop landing mid-write.
DROPPER_PAUSE = 8.0
SENDER_PAUSE = 1.0  # the same for a client sending normal messages
OP_TIMEOUT = 10.0  # no single operation may take longer (a frozen server hits this)
FREEZE_LIMIT = 5.0  # after the storm, a read and a send must answer within this
SETTLE_SECONDS = 15.0  # for replies still being saved when the storm ends
MS = 1000.0

CREATE = """mutation($title: String!) { createSession(input: {title: $title}) {
  session { id } errors { code message } } }"""
SEND = """mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) {
  userTurn { sequenceNumber content } assistantTurn { sequenceNumber }
  errors { code message } } }"""
READ = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"
STREAM = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
  __typename ... on StreamDelta { delta } } }"""
DROPS = ("at-once", "first-piece", "never-read", "complete")  # how a stream is dropped


@dataclass
class Tally:
    send_ms: list[float] = field(default_factory=list)
    # (session title, sequence number, content) of each user turn a send reported.
    accepted: list[tuple[str, int, str]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    streams: Counter[str] = field(default_factory=Counter)  # "sse at-once" -> count
    started: float = 0.0  # time.monotonic() when the storm began
    answered_at: float = 0.0  # seconds into the storm of the last answered send


@dataclass(frozen=True)
class Target:
    base: str  # http://127.0.0.1:port
    sessions: list[tuple[str, str]]  # (GraphQL id, unique title)

    @property
    def host_port(self) -> tuple[str, int]:
        parts = urlsplit(self.base)
        return parts.hostname or "127.0.0.1", parts.port or 80


# --- the clients -----------------------------------------------------------------


async def normal_send(http: httpx.AsyncClient, target: Target, tally: Tally, label: str) -> None:
    sid, title = random.choice(target.sessions)
    content = f"normal {label} {uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    try:
        response = await http.post(
            "/graphql", json={"query": SEND, "variables": {"s": sid, "c": content}}
        )
    except httpx.TimeoutException:
        tally.errors["send: no answer within 10 s"] += 1
        return
    except httpx.TransportError as exc:
        tally.errors[f"send: {type(exc).__name__}"] += 1
        return
    tally.send_ms.append((time.perf_counter() - started) * MS)
    tally.answered_at = time.monotonic() - tally.started
    if response.status_code != 200:
        tally.errors[f"send: HTTP {response.status_code}"] += 1
        return
    body = response.json()
    if body.get("errors"):
        tally.errors[f"send: top-level error {body['errors'][0].get('message')!r}"] += 1
        return
    payload = body["data"]["sendMessage"]
    turn = payload.get("userTurn")
    if turn:
        tally.accepted.append((title, turn["sequenceNumber"], turn["content"]))
    for error in payload.get("errors") or []:
        tally.errors[f"send: {error['code']}"] += 1


def subscription(sid: str) -> dict[str, Any]:
    content = f"dropped {uuid.uuid4().hex[:8]}"
    return {"query": STREAM, "variables": {"input": {"sessionId": sid, "content": content}}}


async def sse_drop(target: Target, drop: str) -> None:
    """A graphql-sse request over a raw socket, so the drop lands exactly when chosen."""
    host, port = target.host_port
    reader, writer = await asyncio.open_connection(host, port)
    try:
        body = json.dumps(subscription(random.choice(target.sessions)[0])).encode()
        head = (
            f"POST /graphql HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()
        if drop == "first-piece":
            while b"StreamDelta" not in await reader.readline():
                if reader.at_eof():
                    break
        elif drop == "never-read":
            await asyncio.sleep(random.uniform(0.05, 0.5))
        else:  # at once ("complete" has no SSE form: the same as dropping)
            await asyncio.sleep(random.uniform(0, 0.020))
    finally:
        writer.transport.abort()


async def ws_drop(target: Target, drop: str) -> None:
    url = target.base.replace("http://", "ws://") + "/graphql"
    ws: ClientConnection = await connect(
        url,
        subprotocols=[Subprotocol("graphql-transport-ws")],
        open_timeout=OP_TIMEOUT,
        close_timeout=0.1,
        max_queue=None,
    )
    try:
        await ws.send(json.dumps({"type": "connection_init"}))
        await ws.recv()  # connection_ack
        message = {
            "id": "1",
            "type": "subscribe",
            "payload": subscription(random.choice(target.sessions)[0]),
        }
        await ws.send(json.dumps(message))
        if drop == "first-piece":
            while "StreamDelta" not in str(await ws.recv()):
                pass
        elif drop == "complete":
            await asyncio.sleep(random.uniform(0, 0.020))
            await ws.send(json.dumps({"id": "1", "type": "complete"}))
        elif drop == "never-read":
            await asyncio.sleep(random.uniform(0.05, 0.5))
        else:
            await asyncio.sleep(random.uniform(0, 0.020))
    finally:
        ws.transport.abort()


async def dropper(target: Target, tally: Tally, number: int, deadline: float, pause: float) -> None:
    transport = "sse" if number % 2 else "ws"
    await asyncio.sleep(random.uniform(0, pause))  # not all at once
    while time.monotonic() < deadline:
        drop = random.choice(DROPS)
        tally.streams[f"{transport} {drop}"] += 1
        try:
            opened = sse_drop(target, drop) if transport == "sse" else ws_drop(target, drop)
            await asyncio.wait_for(opened, OP_TIMEOUT)
        except TimeoutError:
            tally.errors[f"{transport} stream: no answer within 10 s"] += 1
        except Exception as exc:  # every failure is a figure of the report
            tally.errors[f"{transport} stream: {type(exc).__name__}"] += 1
        await asyncio.sleep(random.uniform(0.25, 1.75) * pause)


async def sender(
    http: httpx.AsyncClient, target: Target, tally: Tally, number: int, deadline: float
) -> None:
    sent = 0
    while time.monotonic() < deadline:
        await normal_send(http, target, tally, f"{number}-{sent}")
        sent += 1
        await asyncio.sleep(random.uniform(0.5, 1.5) * SENDER_PAUSE)


# --- after the storm ---------------------------------------------------------------


async def froze(http: httpx.AsyncClient, target: Target) -> list[str]:
    """What did not answer within FREEZE_LIMIT (empty: the server is alive)."""
    stuck = []
    sid, _ = target.sessions[0]
    checks = [("a read", READ, {"s": sid}), ("a send", SEND, {"s": sid, "c": "after the storm"})]
    for label, query, variables in checks:
        try:
            response = await http.post(
                "/graphql", json={"query": query, "variables": variables}, timeout=FREEZE_LIMIT
            )
            if response.status_code != 200 or response.json().get("errors"):
                stuck.append(f"{label} failed: HTTP {response.status_code} {response.text[:200]}")
        except httpx.TimeoutException:
            stuck.append(f"{label} did not answer within {FREEZE_LIMIT:g} s")
        except httpx.TransportError as exc:
            stuck.append(f"{label} failed: {type(exc).__name__}")
    return stuck


async def settle(http: httpx.AsyncClient, target: Target) -> None:
    """Wait until no session's last sequence number moves (replies being saved)."""
    previous = None
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        numbers = []
        for sid, _ in target.sessions:
            body = (
                await http.post("/graphql", json={"query": READ, "variables": {"s": sid}})
            ).json()
            numbers.append(body["data"]["session"]["lastSequenceNumber"])
        if numbers == previous:
            return
        previous = numbers
        await asyncio.sleep(0.5)


async def stored_rows(url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(session id, title, last_sequence_number) and (session id, sequence, role, content)."""
    sessions_sql = "SELECT id, title, last_sequence_number FROM session"
    turns_sql = "SELECT session_id, sequence_number, role, content FROM turn"
    path = sqlite_path(url)
    if path is not None:
        with sqlite3.connect(path) as db:
            return db.execute(sessions_sql).fetchall(), db.execute(turns_sql).fetchall()
    conn = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1))
    try:
        sessions = [tuple(r) for r in await conn.fetch(sessions_sql)]
        return sessions, [tuple(r) for r in await conn.fetch(turns_sql)]
    finally:
        await conn.close()


def integrity(
    sessions: list[tuple[Any, ...]], turns: list[tuple[Any, ...]], tally: Tally
) -> list[str]:
    """Every problem found in the stored rows (empty: nothing lost, nothing misnumbered)."""
    problems = []
    numbers: dict[Any, list[int]] = {}
    for session_id, sequence, _, _ in turns:
        numbers.setdefault(session_id, []).append(sequence)
    for session_id, title, last in sessions:
        found = sorted(numbers.get(session_id, []))
        if found != list(range(1, last + 1)):
            missing = sorted(set(range(1, last + 1)) - set(found))
            extra = sorted(n for n in set(found) if found.count(n) > 1 or n > last)
            problems.append(
                f"session {title!r}: {len(found)} turns, last_sequence_number {last}, "
                f"missing {missing[:10]}, duplicate or beyond {extra[:10]}"
            )
    ids = {title: session_id for session_id, title, _ in sessions}
    users = Counter((sid, seq, content) for sid, seq, role, content in turns if role == "USER")
    for title, sequence, content in tally.accepted:
        count = users[(ids.get(title), sequence, content)]
        if count != 1:
            problems.append(
                f"accepted user turn {content!r} (session {title!r}, #{sequence}) "
                f"stored {count} times"
            )
    return problems


# --- the run ------------------------------------------------------------------------


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[q - 1]


async def run(database: str, seconds: float, clients: int, pause: float) -> int:
    tally = Tally()
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    async with temporary_database(database) as url:
        async with (
            smriti_serve(url, DEFAULT_PROVIDERS_FILE) as base,
            httpx.AsyncClient(base_url=base, timeout=OP_TIMEOUT, limits=limits) as http,
        ):
            sessions = []
            for n in range(SESSIONS):
                title = f"abuse {n} {uuid.uuid4().hex[:6]}"
                body = (
                    await http.post(
                        "/graphql", json={"query": CREATE, "variables": {"title": title}}
                    )
                ).json()
                sessions.append((body["data"]["createSession"]["session"]["id"], title))
            target = Target(base, sessions)
            await normal_send(http, target, Tally(), "warm-up")  # loads LiteLLM in the server
            print(f"storm: {clients} clients for {seconds:g} s on {database} ({base})", flush=True)
            tally.started = time.monotonic()
            deadline = tally.started + seconds
            tasks = [
                sender(http, target, tally, n, deadline)
                if n % SENDER_SHARE == 0
                else dropper(target, tally, n, deadline, pause)
                for n in range(clients)
            ]
            await asyncio.gather(*tasks)
            stuck = await froze(http, target)
            if not stuck:
                await settle(http, target)
        # The server has stopped (SIGTERM: in-flight replies saved); read what it left.
        problems = integrity(*(await stored_rows(url)), tally)
    return report(database, seconds, clients, tally, stuck, problems)


def report(
    database: str, seconds: float, clients: int, tally: Tally, stuck: list[str], problems: list[str]
) -> int:
    sends = sorted(tally.send_ms)
    p50, p99 = percentile(sends, 50), percentile(sends, 99)
    load = os.getloadavg()[0]
    print(f"\nabuse benchmark: {database}, {clients} clients, {seconds:g} s, load {load:.2f}")
    print(f"streams dropped per second: {sum(tally.streams.values()) / seconds:.0f}")
    print(f"streams opened and dropped: {sum(tally.streams.values())}")
    for kind, count in sorted(tally.streams.items()):
        print(f"  {kind:24}{count:8d}")
    print(f"normal sendMessage answered: {len(sends)}, accepted user turns: {len(tally.accepted)}")
    print(f"  latency during the storm: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(f"errors: {sum(tally.errors.values())}")
    for kind, count in tally.errors.most_common():
        print(f"  {kind:48}{count:8d}")
    if tally.answered_at:
        print(f"  last send answered {tally.answered_at:.1f} s into the storm")
    alive = "server answered after the storm"
    intact = "every session numbered 1..N, every accepted user turn stored"
    checks = [
        (not stuck, alive if not stuck else "server froze: " + "; ".join(stuck)),
        (not problems, intact if not problems else f"{len(problems)} integrity problems"),
    ]
    for problem in problems[:20]:
        print(f"  {problem}")
    for passed, label in checks:
        print(f"{'PASS' if passed else 'FAIL'}  {label}")
    RESULTS_DIR.mkdir(exist_ok=True)
    document = {
        "database": database,
        "seconds": seconds,
        "clients": clients,
        "sends": len(sends),
        "send_p50_ms": p50,
        "send_p99_ms": p99,
        "accepted": len(tally.accepted),
        "streams": dict(tally.streams),
        "errors": dict(tally.errors),
        "last_send_answered_s": tally.answered_at,
        "froze": stuck,
        "problems": problems,
    }
    (RESULTS_DIR / f"abuse-{database}.json").write_text(json.dumps(document, indent=2) + "\n")
    return EXIT_OK if all(passed for passed, _ in checks) else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.abuse", description=__doc__)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument(
        "--pause",
        type=float,
        default=DROPPER_PAUSE,
        help="mean seconds a dropping client waits between streams",
    )
    parser.add_argument("--seed", type=int, default=None, help="for a repeatable mix of drops")
    args = parser.parse_args(argv)
    if args.seed is not None:
        random.seed(args.seed)
    try:
        return asyncio.run(run(args.db, args.seconds, args.clients, args.pause))
    except Exception:
        traceback.print_exc()
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
