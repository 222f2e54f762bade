"""The HTTP edge: body limit, malformed bodies, Host names, headers on every response."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from httpx_ws import WebSocketUpgradeError, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from api import __version__
from api.app import create_app
from api.errors import ConfigError
from api.http.headers import WEBUI_POLICY
from api.settings import Settings, is_loopback
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session

SEND = """mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) {
  userTurn { sequenceNumber } errors { code } } }"""


async def post(gql: GraphQLClient, body: bytes, **headers: str) -> httpx.Response:
    return await gql.http.post(
        "/graphql", content=body, headers={"content-type": "application/json", **headers}
    )


def refused(message: str) -> dict[str, object]:
    """The body of a request refused before it ran."""
    return {"data": None, "errors": [{"message": message, "extensions": {"code": "BAD_REQUEST"}}]}


# --- bodies ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"query": "{ __typename \xff }"}', "The request body is not valid UTF-8."),
        (b"[" * 100_000 + b"]" * 100_000, "The request body is JSON nested too deeply."),
        (b"42", "The request body must be a JSON object."),
        (
            b'{"query": "{ __typename }"',
            "The request body is not valid JSON: Expecting ',' delimiter: "
            "line 1 column 27 (char 26)",
        ),
        (
            b'{"query": "{ __typename }", "operationName": {"a": 1}}',
            "The operation's `operationName` must be a string or null.",
        ),
    ],
)
async def test_a_malformed_body_is_a_400_that_says_why(
    gql: GraphQLClient, body: bytes, message: str
) -> None:
    response = await post(gql, body)
    # A GraphQL error response: GraphiQL and other clients read every answer as JSON.
    assert (response.status_code, response.json()) == (400, refused(message))


async def test_a_malformed_get_parameter_is_a_400(gql: GraphQLClient) -> None:
    response = await gql.http.get(
        "/graphql", params={"query": "{ __typename }", "variables": "[" * 5_000}
    )
    assert (response.status_code, response.json()) == (
        400,
        refused("The request body is JSON nested too deeply."),
    )


async def test_a_body_over_the_limit_is_refused_by_its_content_length(
    gql: GraphQLClient, settings: Settings
) -> None:
    limit = settings.body_limit
    assert limit == 6 * 1024 * 1024 + 64 * 1024
    response = await post(gql, b" " * (limit + 1))
    assert (response.status_code, response.text) == (413, "Content Too Large")


async def test_a_streamed_body_is_refused_once_it_passes_the_limit(
    gql: GraphQLClient, settings: Settings
) -> None:
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(100):  # 100 MiB if it were all read
            sent += 1
            yield b" " * (1024 * 1024)

    response = await gql.http.post(
        "/graphql", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert (response.status_code, response.text) == (413, "Content Too Large")
    assert sent <= settings.body_limit // (1024 * 1024) + 2


async def test_the_largest_message_fits_at_its_worst_json_escaping(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    content = "é" * (1024 * 1024 // 2)  # exactly max_content_bytes of UTF-8
    body = json.dumps({"query": SEND, "variables": {"s": sid, "c": content}}).encode()
    assert len(body) > 3 * 1024 * 1024  # "\u00e9": 6 bytes for 2

    response = await post(gql, body)

    assert response.json()["data"]["sendMessage"] == {
        "userTurn": {"sequenceNumber": 1},
        "errors": [],
    }


def test_the_environment_sets_the_body_limit() -> None:
    env = {"SMRITI_MAX_BODY_BYTES": "2048"}
    assert Settings.from_environment(env, database_url="sqlite://:memory:").body_limit == 2048


# --- Host -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("localhost", 200),
        ("LOCALHOST:8000", 200),
        ("127.0.0.1:1234", 200),
        ("[::1]:8000", 200),
        ("smriti.test", 200),  # listed in allowed_hosts by conftest
        ("rebound.example", 400),
        ("rebound.example:8000", 400),
        ("localhost.rebound.example", 400),
        ("127.0.0.2", 400),
    ],
)
async def test_only_loopback_and_allowed_names_are_served(
    gql: GraphQLClient, host: str, status: int
) -> None:
    for path in ("/healthz", "/", "/graphql"):
        response = await gql.http.get(path, headers={"Host": host, "Accept": "text/html"})
        assert response.status_code == status, path


async def test_a_websocket_to_another_host_is_refused_before_the_upgrade(
    settings: Settings,
) -> None:
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=ASGIWebSocketTransport(app=app), base_url="http://rebound.example"
        ) as http,
    ):
        with pytest.raises(WebSocketUpgradeError) as refused:
            async with aconnect_ws("/graphql", http, subprotocols=["graphql-transport-ws"]):
                pass
    assert refused.value.response.status_code == 400


async def test_bound_to_all_interfaces_any_host_is_served(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, bound_to_loopback=False, allowed_hosts=()))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://smriti.lan"
        ) as http,
    ):
        assert (await http.get("/healthz")).status_code == 200


def test_a_malformed_allowed_host_stops_start_up(settings: Settings) -> None:
    with pytest.raises(ConfigError) as raised:
        create_app(dataclasses.replace(settings, allowed_hosts=("smriti.*",)))
    assert raised.value.message == (
        "SMRITI_ALLOWED_HOSTS: 'smriti.*': a wildcard must be '*' or like '*.example.com'."
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("smriti.lan", False),
    ],
)
def test_serve_tells_the_settings_whether_it_is_bound_to_loopback(
    host: str, loopback: bool
) -> None:
    assert is_loopback(host) is loopback
    env = {"SMRITI_ALLOWED_HOSTS": "a.lan, *.b.lan"}
    settings = Settings.from_environment(env, database_url="sqlite://:memory:", host=host)
    assert (settings.bound_to_loopback, settings.allowed_hosts) == (loopback, ("a.lan", "*.b.lan"))


# --- headers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/styles.css"),
        ("GET", "/app.js"),
        ("GET", "/healthz"),
        ("POST", "/graphql"),
        ("GET", "/no-such-file"),
    ],
)
async def test_every_response_forbids_sniffing_and_framing(
    gql: GraphQLClient, method: str, path: str
) -> None:
    response = await gql.http.request(method, path, json={"query": "{ __typename }"})
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-security-policy"] == WEBUI_POLICY
    assert "frame-ancestors 'none'" in WEBUI_POLICY
    assert "default-src 'self'" in WEBUI_POLICY


# --- which operations stream ------------------------------------------------------

URQL_ACCEPT = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)
STREAM = """subscription($s: ID!) { messageStream(input: {sessionId: $s, content: "Hi"}) {
  __typename } }"""


async def test_a_subscription_without_a_stream_transport_is_a_406(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    response = await gql.http.post(
        "/graphql",
        json={"query": STREAM, "variables": {"s": sid}},
        headers={"Accept": "application/json"},
    )
    assert (response.status_code, response.json()) == (
        406,
        refused(
            "A subscription is a stream: send it with `Accept: text/event-stream` "
            "(graphql-sse) or over a websocket (graphql-transport-ws)."
        ),
    )
    assert (await gql(TURNS, s=sid))["session"]["lastSequenceNumber"] == 0


async def test_a_mutation_is_answered_with_json_whatever_else_accept_lists(
    gql: GraphQLClient,
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    response = await gql.http.post(
        "/graphql",
        json={"query": SEND, "variables": {"s": sid, "c": "once"}},
        headers={"Accept": URQL_ACCEPT},
    )
    assert response.headers["content-type"] == "application/json"
    assert response.json()["data"]["sendMessage"] == {
        "userTurn": {"sequenceNumber": 1},
        "errors": [],
    }
    assert (await gql(TURNS, s=sid))["session"]["lastSequenceNumber"] == 2


TURNS = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        ("text/event-stream", "text/event-stream"),  # graphql-sse's client
        ("text/event-stream; charset=utf-8", "text/event-stream"),
        ("text/event-stream, application/json;q=0", "text/event-stream"),
        ("text/event-stream, */*;q=0.1", "application/json"),  # JSON will do
        (URQL_ACCEPT, "application/json"),
        ("application/json", "application/json"),
    ],
)
async def test_a_mutation_asked_for_as_an_event_stream_only_is_one_event_then_complete(
    gql: GraphQLClient, accept: str, media_type: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    response = await gql.http.post(
        "/graphql",
        json={"query": SEND, "variables": {"s": sid, "c": "once"}},
        headers={"Accept": accept},
    )

    result = {
        "data": {"sendMessage": {"userTurn": {"sequenceNumber": 1}, "errors": []}},
        "extensions": {"cost": {"nodes": 102, "limit": 50_000}},
    }
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    if media_type == "application/json":
        assert response.json() == result
    else:
        assert response.text == (
            f"event: next\r\ndata: {json.dumps(result, separators=(',', ':'))}\r\n\r\n"
            "event: complete\r\ndata: \r\n\r\n"
        )
    assert (await gql(TURNS, s=sid))["session"]["lastSequenceNumber"] == 2


async def test_healthz_answers_ok_with_the_version(gql: GraphQLClient) -> None:
    response = await gql.http.get("/healthz")
    assert (response.status_code, response.json()) == (
        200,
        {"status": "ok", "version": __version__},
    )


@pytest.mark.parametrize(
    ("params", "location"),
    [
        (
            {"query": "subscription { x }", "variables": '{"a": 1}', "operationName": "X"},
            "/graphql?q=subscription%20%7B%20x%20%7D&variables=%7B%22a%22%3A%201%7D",
        ),
        (
            {"query": "{ __typename }", "headers": "{}"},
            "/graphql?q=%7B%20__typename%20%7D&headers=%7B%7D",
        ),
    ],
)
async def test_a_browser_opening_a_graphiql_link_is_sent_to_graphiql_with_it(
    gql: GraphQLClient, params: dict[str, str], location: str
) -> None:
    # GraphiQL's page reads its document from `q` (and percent-decodes it, `+` included).
    response = await gql.http.get(
        "/graphql", params=params, headers={"Accept": "text/html,*/*;q=0.8"}
    )
    assert (response.status_code, response.headers["location"]) == (303, location)


async def test_a_get_query_that_does_not_ask_for_html_is_run(gql: GraphQLClient) -> None:
    response = await gql.http.get("/graphql", params={"query": "{ __typename }"})
    assert (response.status_code, response.json()["data"]) == (200, {"__typename": "Query"})
