"""What a web page (or a careless client) can make `smriti serve` do over plain HTTP:
no stream from a GET, JSON for everything but a subscription, only its own Host names."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from httpx_ws import WebSocketUpgradeError, aconnect_ws

from api.store.database import sqlite_url
from tests.support.databases import TEST_DB
from tests.support.served import last_sequence, new_session, sqlite_server
from tests.support.servers import SmritiServer

# HTTP behaviour, the same on either database: the servers here use SQLite.
pytestmark = pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")

URQL_ACCEPT = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)
STREAM = """subscription($input: SendMessageInput!) { messageStream(input: $input) {
  __typename } }"""
SEND = """mutation($input: SendMessageInput!) { sendMessage(input: $input) {
  userTurn { sequenceNumber } errors { code } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmritiServer]:
    with sqlite_server(tmp_path_factory.mktemp("guards")) as running:
        yield running


# --- finding 3: streams -------------------------------------------------------------


@pytest.mark.parametrize(
    "accept", ["TEXT/EVENT-STREAM", "Text/Event-Stream", "text/event-stream", "*/*", None]
)
def test_a_get_never_starts_a_subscription_whatever_the_accept(
    server: SmritiServer, accept: str | None
) -> None:
    # A GET needs no CORS preflight: an EventSource or <img> on any site can send one.
    sid = new_session(server)
    variables = {"input": {"sessionId": sid, "content": "from a foreign page"}}
    headers = {"Accept": accept} if accept else {}
    response = httpx.get(
        server.graphql_url,
        params={"query": STREAM, "variables": json.dumps(variables)},
        headers=headers,
        timeout=30,
    )
    message = "Subscriptions are not allowed over GET: use a POST or a websocket."
    assert (response.status_code, response.json()) == (
        405,
        {"data": None, "errors": [{"message": message, "extensions": {"code": "BAD_REQUEST"}}]},
    )
    assert last_sequence(server, sid) == 0


def test_a_get_query_is_answered_with_json_though_accept_lists_a_stream(
    server: SmritiServer,
) -> None:
    response = httpx.get(
        server.graphql_url,
        params={"query": "{ providers { chatDefault } }"},
        headers={"Accept": URQL_ACCEPT},
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["data"] == {"providers": {"chatDefault": "offline/echo"}}


def test_a_mutation_is_answered_with_json_and_runs_once(server: SmritiServer) -> None:
    sid = new_session(server)
    response = httpx.post(
        server.graphql_url,
        json={"query": SEND, "variables": {"input": {"sessionId": sid, "content": "once"}}},
        headers={"Accept": URQL_ACCEPT},
        timeout=30,
    )
    assert response.headers["content-type"] == "application/json"
    assert response.json()["data"]["sendMessage"] == {
        "userTurn": {"sequenceNumber": 1},
        "errors": [],
    }
    assert last_sequence(server, sid) == 2


def test_a_posted_subscription_still_streams(server: SmritiServer) -> None:
    sid = new_session(server)
    response = httpx.post(
        server.graphql_url,
        json={"query": STREAM, "variables": {"input": {"sessionId": sid, "content": "Hi"}}},
        headers={"Accept": URQL_ACCEPT},
        timeout=30,
    )
    assert response.headers["content-type"] == "text/event-stream"
    assert "event: complete" in response.text
    assert last_sequence(server, sid) == 2


# --- finding 4: Host ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/graphql", "/healthz", "/styles.css"])
def test_a_rebound_name_is_refused_before_any_handler(server: SmritiServer, path: str) -> None:
    response = httpx.post(
        server.base_url + path,
        json={"query": "mutation { createSession(input: {}) { session { id } } }"},
        headers={"Host": f"attacker.example:{server.port}"},
    )
    assert (response.status_code, response.text) == (400, "Invalid host header")


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_names_are_served_on_any_port(server: SmritiServer, host: str) -> None:
    response = httpx.get(server.base_url + "/healthz", headers={"Host": f"{host}:{server.port}"})
    assert response.status_code == 200


async def test_a_websocket_to_a_rebound_name_is_refused_at_the_handshake(
    server: SmritiServer,
) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(WebSocketUpgradeError) as refused:
            async with aconnect_ws(
                server.graphql_url.replace("http://", "ws://"),
                http,
                subprotocols=["graphql-transport-ws"],
                headers={"Host": f"attacker.example:{server.port}"},
            ):
                pass
        assert refused.value.response.status_code == 400
        # The same handshake to this server's name is accepted.
        async with aconnect_ws(
            server.graphql_url.replace("http://", "ws://"),
            http,
            subprotocols=["graphql-transport-ws"],
        ) as ws:
            assert ws.subprotocol == "graphql-transport-ws"


def test_allowed_hosts_extend_the_loopback_names(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    database = tmp_path_factory.mktemp("allowed") / "smriti.sqlite3"
    env = {"SMRITI_ALLOWED_HOSTS": "smriti.lan"}
    with SmritiServer(sqlite_url(database), env=env) as lan:
        allowed = httpx.get(lan.base_url + "/healthz", headers={"Host": "smriti.lan"})
        other = httpx.get(lan.base_url + "/healthz", headers={"Host": "other.lan"})
    assert (allowed.status_code, other.status_code) == (200, 400)
