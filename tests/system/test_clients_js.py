"""Third-party JavaScript clients, unmodified and at their default settings, against
`smriti serve`: urql, Apollo Client, graphql-ws and graphql-sse.

They are installed at exact versions (tests/clients/js/package-lock.json, checked
by integrity hash) with `npm ci` into a git-ignored node_modules; the tests skip
only when node/npm are missing or the npm registry cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.databases import TEST_DB
from tests.support.fake_openai import FakeOpenAI
from tests.support.node_clients import OFFLINE
from tests.support.served import last_sequence, new_session, sqlite_server
from tests.support.served_sessions import write_providers_file
from tests.support.servers import SmritiServer

# HTTP behaviour, the same on either database: the servers here use SQLite.
pytestmark = pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")

CLIENTS = Path(__file__).resolve().parent.parent / "clients" / "js"
URQL_ACCEPT = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)
APOLLO_ACCEPT = "application/graphql-response+json,application/json;q=0.9"
JSON_OK = {"status": 200, "contentType": "application/json"}
SSE_POST = {"method": "POST", "accept": "text/event-stream", "status": 200,
            "contentType": "text/event-stream"}  # fmt: skip
TURNS = """query($s: ID!) { session(id: $s) { lastSequenceNumber
  turns(first: 100) { edges { node { role content } } } } }"""


@pytest.fixture(scope="module")
def node_clients() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    done = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=CLIENTS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        if any(code in done.stderr for code in OFFLINE):
            pytest.skip(f"the npm registry is unreachable: {done.stderr.strip()[-300:]}")
        raise AssertionError(f"npm ci failed:\n{done.stderr}")
    return CLIENTS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmritiServer]:
    with sqlite_server(tmp_path_factory.mktemp("clients")) as running:
        yield running


def run(
    clients: Path, server: SmritiServer, client: str, sid: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The client's run on session ``sid`` (a new one by default), and what it printed."""
    sid = sid or new_session(server)
    done = subprocess.run(
        ["node", "clients.mjs", client, server.graphql_url, sid],
        cwd=clients,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return sid, result


def saved_turns(server: SmritiServer, sid: str) -> list[tuple[str, str]]:
    """Every turn the session holds in the database, as (role, content)."""
    body = httpx.post(server.graphql_url, json={"query": TURNS, "variables": {"s": sid}}).json()
    session = body["data"]["session"]
    turns = [(e["node"]["role"], e["node"]["content"]) for e in session["turns"]["edges"]]
    assert session["lastSequenceNumber"] == len(turns)
    return turns


def assert_streamed(events: list[str]) -> None:
    """The user's turn, the reply piece by piece, the saved reply."""
    assert events[0] == "StreamUserTurn"
    assert set(events[1:-1]) == {"StreamDelta"}
    assert events[-1] == "StreamAssistantTurn"


def test_urql_with_its_defaults_queries_by_get_and_mutates_once(
    node_clients: Path, server: SmritiServer
) -> None:
    sid, result = run(node_clients, server, "urql")

    assert result["query"] == {"providers": {"chatDefault": "offline/echo"}}
    assert result["mutation"] == {
        "sendMessage": {
            "userTurn": {"sequenceNumber": 1, "content": "from urql"},
            "assistantTurn": {"sequenceNumber": 2},
            "errors": [],
        }
    }
    # Its Accept lists text/event-stream; it is answered with JSON all the same.
    assert result["requests"] == [
        {"method": "GET", "accept": URQL_ACCEPT, **JSON_OK},
        {"method": "POST", "accept": URQL_ACCEPT, **JSON_OK},
    ]
    assert last_sequence(server, sid) == 2  # one user turn, one reply: sent once


def twenty_sessions_of_100_turns(server: SmritiServer) -> None:
    """A space "Team" holding 20 sessions of 100 turns each, brought in as an
    export (one exchange sent, exported, multiplied, imported): sending 1,000
    messages would take most of the test's time."""

    def gql(query: str, **variables: Any) -> Any:
        body = httpx.post(
            server.graphql_url, json={"query": query, "variables": variables}, timeout=60
        ).json()
        assert "errors" not in body, body
        return body["data"]

    space = gql('mutation { createSpace(input: {name: "Team"}) { space { id } } }')
    space_id = space["createSpace"]["space"]["id"]
    session = gql(
        "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }", s=space_id
    )["createSession"]["session"]["id"]
    gql(
        'mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "hi"}) '
        "{ errors { code } } }",
        s=session,
    )
    exported = gql(
        "query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }",
        s=space_id,
    )["exportSpace"]["document"]
    document = json.loads(exported)
    [template] = document["spaces"][0]["sessions"]
    user, reply = template["turns"]
    sessions = []
    for n in range(20):
        turns = []
        for number in range(1, 101):
            turn = user if number % 2 else {**reply, "replyToSequence": number - 1}
            turns.append(
                {
                    **turn,
                    "id": n * 100 + number,
                    "sequenceNumber": number,
                    "content": f"{n}.{number}",
                }
            )
        sessions.append(
            {**template, "id": n + 1, "title": f"Session {n}", "turns": turns,
             "lastSequenceNumber": 100}
        )  # fmt: skip
    document["spaces"][0]["sessions"] = sessions
    gql("mutation($s: ID!) { deleteSpace(input: {id: $s}) { errors { code } } }", s=space_id)
    imported = gql(
        "mutation($d: String!) { importSpace(input: {document: $d}) { created errors { code } } }",
        d=json.dumps(document),
    )
    assert imported["importSpace"] == {"created": 1, "errors": []}


def test_urql_with_its_defaults_gets_the_sidebar_of_20_sessions_of_100_turns_by_get(
    node_clients: Path, tmp_path: Path
) -> None:
    with sqlite_server(tmp_path) as served:
        twenty_sessions_of_100_turns(served)
        _, result = run(node_clients, served, "urql-sidebar", sid="none")

    # GET has the limit POST has: the web UI's sidebar counts 10,400 (100 spaces
    # x 100 sessions, at their `first`, and the pinned list of 100 with each one's
    # space), well over the 1,000 GET had.
    sidebar = result["sidebar"]
    assert sidebar["cost"] == {"nodes": 10_400, "limit": 50_000}
    [team] = sidebar["data"]["spaces"]["edges"]
    assert team["node"]["name"] == "Team"
    assert sorted(e["node"]["title"] for e in team["node"]["sessions"]["edges"]) == sorted(
        f"Session {n}" for n in range(20)
    )
    assert sidebar["data"]["sessions"] == {"edges": []}
    recent = result["recent"]
    assert recent["cost"] == {"nodes": 2_020, "limit": 50_000}
    sessions = [e["node"] for e in recent["data"]["sessions"]["edges"]]
    assert sorted(s["title"] for s in sessions) == sorted(f"Session {n}" for n in range(20))
    assert all(
        [t["node"]["sequenceNumber"] for t in s["turns"]["edges"]] == list(range(1, 101))
        for s in sessions
    )
    assert result["requests"] == [
        {"method": "GET", "accept": URQL_ACCEPT, **JSON_OK},
        {"method": "GET", "accept": URQL_ACCEPT, **JSON_OK},
    ]


def test_apollo_client_over_http_and_graphql_ws(node_clients: Path, server: SmritiServer) -> None:
    sid, result = run(node_clients, server, "apollo")

    assert result["query"] == {
        "providers": {"__typename": "Providers", "chatDefault": "offline/echo"}
    }
    assert result["mutation"]["sendMessage"]["userTurn"] == {
        "__typename": "Turn",
        "sequenceNumber": 1,
        "content": "from apollo",
    }
    assert_streamed(result["subscription"])
    assert result["requests"] == [
        {"method": "POST", "accept": APOLLO_ACCEPT, **JSON_OK},
        {"method": "POST", "accept": APOLLO_ACCEPT, **JSON_OK},
    ]
    assert last_sequence(server, sid) == 4  # the mutation's two turns, the stream's two


def test_graphql_ws(node_clients: Path, server: SmritiServer) -> None:
    sid, result = run(node_clients, server, "graphql-ws")

    assert result["query"] == {"providers": {"chatDefault": "offline/echo"}}
    assert_streamed(result["subscription"])
    assert result["requests"] == []
    assert last_sequence(server, sid) == 2


def test_graphql_sse_with_its_defaults_streams_every_operation_and_runs_each_once(
    node_clients: Path, server: SmritiServer
) -> None:
    sid, result = run(node_clients, server, "graphql-sse")

    # A query and a mutation are one `next` event each, then `complete`: the
    # client does not take them for broken streams and send them again.
    assert result["query"] == [
        {
            "data": {"providers": {"chatDefault": "offline/echo"}},
            "extensions": {"cost": {"nodes": 1, "limit": 50_000}},
        }
    ]
    assert result["mutation"] == [
        {
            "data": {
                "sendMessage": {
                    "userTurn": {"sequenceNumber": 1, "content": "from graphql-sse"},
                    "assistantTurn": {"sequenceNumber": 2},
                    "errors": [],
                }
            },
            "extensions": {"cost": {"nodes": 103, "limit": 50_000}},
        }
    ]
    assert_streamed(result["subscription"])
    assert result["requests"] == [SSE_POST, SSE_POST, SSE_POST]  # one POST each, no retry
    roles = [
        (role, content if role == "USER" else "…") for role, content in saved_turns(server, sid)
    ]
    assert roles == [
        ("USER", "from graphql-sse"),
        ("ASSISTANT", "…"),
        ("USER", "streamed over graphql-sse"),
        ("ASSISTANT", "…"),
    ]


def test_graphql_sse_gets_a_refused_document_once(node_clients: Path, server: SmritiServer) -> None:
    sid, result = run(node_clients, server, "graphql-sse-refused")

    assert result["refused"] == [
        [
            "Expected value of type 'SendMessageInput' to include required field 'sessionId', "
            "found: {  }.",
            "Expected value of type 'SendMessageInput' to include required field 'content', "
            "found: {  }.",
            "Cannot query field 'nope' on type 'SendMessagePayload'.",
        ]
    ]
    assert result["requests"] == [SSE_POST]
    assert saved_turns(server, sid) == []


@asynccontextmanager
async def first_connection_cut(port: int) -> AsyncIterator[int]:
    """A TCP proxy to 127.0.0.1:``port`` (its own port yielded). The first
    connection's request reaches the server, then the connection is reset before
    any answer: the answer is lost on the way back, as on a flaky network. Later
    connections pass through."""
    connections = 0
    upstreams: list[asyncio.StreamWriter] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def handle(client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        server, to_server = await asyncio.open_connection("127.0.0.1", port)
        upstreams.append(to_server)
        if connections > 1:
            await asyncio.gather(pipe(client, to_server), pipe(server, to_client))
            return
        head = await client.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        to_server.write(head + await client.readexactly(length))
        await to_server.drain()
        to_client.transport.abort()  # the server still answers; nobody reads it

    proxy = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield proxy.sockets[0].getsockname()[1]
    finally:
        proxy.close()
        for writer in upstreams:
            writer.close()


async def test_graphql_sse_sending_a_mutation_again_after_a_cut_runs_it_once(
    node_clients: Path, tmp_path: Path
) -> None:
    with FakeOpenAI() as fake:
        # The answer takes longer than the client waits before it sends again
        # (1.3 to 4 s), so the second POST arrives while the first is running.
        fake.delay(4.5)
        fake.reply("Only once.")
        providers = write_providers_file(tmp_path, fake)
        with SmritiServer(f"sqlite://{tmp_path / 'smriti.sqlite3'}", providers=providers) as served:
            create = 'mutation { createSession(input: {model: "lab/my-model"}) { session { id } } }'
            created = httpx.post(served.graphql_url, json={"query": create}).json()
            sid = created["data"]["createSession"]["session"]["id"]
            async with first_connection_cut(served.port) as port:
                node = await asyncio.create_subprocess_exec(
                    "node", "clients.mjs", "graphql-sse-retried",
                    f"http://127.0.0.1:{port}/graphql", sid,
                    cwd=node_clients, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )  # fmt: skip
                out, err = await asyncio.wait_for(node.communicate(), 120)
            assert node.returncode == 0, err.decode()
            result = json.loads(out)
            turns = saved_turns(served, sid)

    assert [r["contentType"] for r in result["requests"]] == ["text/event-stream"]
    assert result["mutation"][0]["data"]["sendMessage"] == {
        "userTurn": {"sequenceNumber": 1, "content": "sent once"},
        "assistantTurn": {"sequenceNumber": 2},
        "errors": [],
    }
    assert turns == [("USER", "sent once"), ("ASSISTANT", "Only once.")]
    assert len(fake.requests) == 1  # the provider was asked once
