"""Third-party JavaScript clients, unmodified and at their default settings, against
`smriti serve`: urql, Apollo Client, graphql-ws and graphql-sse.

They are installed at exact versions (tests/clients/js/package-lock.json, checked
by integrity hash) with `npm ci` into a git-ignored node_modules; the tests skip
only when node/npm are missing or the npm registry cannot be reached.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_DB
from tests.support.served import last_sequence, new_session, sqlite_server
from tests.support.servers import SmritiServer

# HTTP behaviour, the same on either database: the servers here use SQLite.
pytestmark = pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")

CLIENTS = Path(__file__).resolve().parent.parent / "clients" / "js"
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")
URQL_ACCEPT = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)
APOLLO_ACCEPT = "application/graphql-response+json,application/json;q=0.9"
JSON_OK = {"status": 200, "contentType": "application/json"}


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


def run(clients: Path, server: SmritiServer, client: str) -> tuple[str, dict[str, Any]]:
    """A new session, the client's run on it, and what the client printed."""
    sid = new_session(server)
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


def test_graphql_sse(node_clients: Path, server: SmritiServer) -> None:
    sid, result = run(node_clients, server, "graphql-sse")

    assert_streamed(result["subscription"])
    assert result["requests"] == [
        {"method": "POST", "accept": "text/event-stream", "status": 200,
         "contentType": "text/event-stream"}
    ]  # fmt: skip
    assert last_sequence(server, sid) == 2
