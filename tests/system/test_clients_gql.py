"""Python's `gql` client, unmodified, against `smriti serve`: its HTTP transport
(httpx) and its websockets transport (which offers both websocket protocols; the
server picks graphql-transport-ws)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gql import Client, GraphQLRequest
from gql.transport.httpx import HTTPXAsyncTransport
from gql.transport.websockets import WebsocketsTransport

from tests.support.databases import TEST_DB
from tests.support.served import last_sequence, new_session, sqlite_server
from tests.support.servers import SmritiServer

# HTTP behaviour, the same on either database: the servers here use SQLite.
pytestmark = pytest.mark.skipif(TEST_DB != "sqlite", reason="runs in the SQLite pass")

SEND = """mutation Send($input: SendMessageInput!) { sendMessage(input: $input) {
  userTurn { sequenceNumber content } assistantTurn { sequenceNumber } errors { code } } }"""
STREAM = """subscription Stream($input: SendMessageInput!) { messageStream(input: $input) {
  __typename } }"""
QUERY = "query Providers { providers { chatDefault } }"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmritiServer]:
    with sqlite_server(tmp_path_factory.mktemp("gql")) as running:
        yield running


def message(sid: str, content: str) -> dict[str, Any]:
    return {"input": {"sessionId": sid, "content": content}}


async def test_gql_over_http(server: SmritiServer) -> None:
    sid = new_session(server)
    # httpx's default 5 s timeout: the first message of a process waits for LiteLLM's
    # import (token counting), which can take longer on a busy machine.
    transport = HTTPXAsyncTransport(url=server.graphql_url, timeout=60)
    async with Client(transport=transport) as session:
        query = await session.execute(GraphQLRequest(QUERY))
        sent = await session.execute(GraphQLRequest(SEND, variable_values=message(sid, "from gql")))
    assert query == {"providers": {"chatDefault": "offline/echo"}}
    assert sent == {
        "sendMessage": {
            "userTurn": {"sequenceNumber": 1, "content": "from gql"},
            "assistantTurn": {"sequenceNumber": 2},
            "errors": [],
        }
    }
    assert last_sequence(server, sid) == 2


async def test_gql_over_websockets(server: SmritiServer) -> None:
    sid = new_session(server)
    url = server.graphql_url.replace("http://", "ws://")
    transport = WebsocketsTransport(url=url)
    async with Client(transport=transport) as session:
        query = await session.execute(GraphQLRequest(QUERY))
        events = [
            result["messageStream"]["__typename"]
            async for result in session.subscribe(
                GraphQLRequest(STREAM, variable_values=message(sid, "streamed to gql"))
            )
        ]
    assert transport.subprotocol == "graphql-transport-ws"
    assert query == {"providers": {"chatDefault": "offline/echo"}}
    assert events[0] == "StreamUserTurn"
    assert set(events[1:-1]) == {"StreamDelta"}
    assert events[-1] == "StreamAssistantTurn"
    assert last_sequence(server, sid) == 2
