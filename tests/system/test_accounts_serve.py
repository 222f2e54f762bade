"""Accounts through `smriti serve` and the `smriti users` / `smriti tokens` commands.

The refusal to serve beyond loopback without an account; the first account
taking over the data made without accounts; a token used by the `gql` client
over HTTP and websocket; a browser sign-in. Afterwards neither the token nor
the password is anywhere in the server's output or the database file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import websockets
from gql import Client, GraphQLRequest
from gql.transport.httpx import HTTPXAsyncTransport
from gql.transport.websockets import WebsocketsTransport
from websockets.typing import Subprotocol

from api.store.database import sqlite_url
from tests.support.served import new_session
from tests.support.servers import SmritiServer

pytestmark = pytest.mark.database_neutral

PASSWORD = "a long passphrase 7f3c"
STREAM = """subscription Stream($input: SendMessageInput!) { messageStream(input: $input) {
  __typename } }"""
WHO = "query { viewer { name isAdmin tokenName } }"


def smriti(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"LITELLM_OFFLINE_MODE": "true", "PATH": "/usr/bin:/bin"},
    )


def test_serving_beyond_loopback_without_an_account_is_refused(tmp_path: Path) -> None:
    server = SmritiServer(sqlite_url(tmp_path / "db.sqlite3"), args=("--host", "0.0.0.0"))
    refused = server.failed_start()
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "smriti: Serving on 0.0.0.0 needs an account: create the first with "
        "`smriti users add NAME --admin` (same --database), then start again."
    ]


async def test_a_token_over_http_and_websocket_and_no_secret_is_kept(tmp_path: Path) -> None:
    db_file = tmp_path / "db.sqlite3"
    url = sqlite_url(db_file)
    # Data made before accounts existed...
    with SmritiServer(url) as local:
        sid = new_session(local)
    # ...belongs to the first account.
    added = smriti(
        "users",
        "add",
        "ada",
        "--admin",
        "--password-stdin",
        "--database",
        url,
        stdin=PASSWORD + "\n",
    )
    assert added.returncode == 0, added.stderr
    assert "ada now owns the spaces and sessions made without accounts" in added.stderr
    created = smriti(
        "tokens", "create", "--user", "ada", "--name", "ci", "--expires", "30d", "--database", url
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("smr_") and len(token) >= 4 + 43
    assert token not in created.stderr
    # The lineage tools now need to be told whose data.
    unnamed = smriti("export", "--database", url)
    assert (unnamed.returncode, unnamed.stderr) == (
        2,
        "smriti: This database has accounts: say whose data with --user NAME.\n",
    )
    exported = smriti("export", "--user", "ada", "--session", sid, "--database", url)
    assert exported.returncode == 0, exported.stderr
    listed = smriti("users", "list", "--database", url)
    assert listed.stdout.split("\t")[:2] == ["ada", "admin"]

    bearer = {"Authorization": f"Bearer {token}"}
    with SmritiServer(url) as server:
        # Without the token: 401 and a top-level error.
        anonymous = httpx.post(server.graphql_url, json={"query": WHO})
        assert anonymous.status_code == 401
        assert anonymous.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}

        transport = HTTPXAsyncTransport(url=server.graphql_url, headers=bearer, timeout=60)
        async with Client(transport=transport) as session:
            who = await session.execute(GraphQLRequest(WHO))
            mine = await session.execute(
                GraphQLRequest(
                    "query($s: ID!) { session(id: $s) { id } }", variable_values={"s": sid}
                )
            )
        assert who == {"viewer": {"name": "ada", "isAdmin": True, "tokenName": "ci"}}
        assert mine == {"session": {"id": sid}}

        ws_url = server.graphql_url.replace("http://", "ws://")
        ws = WebsocketsTransport(url=ws_url, init_payload={"Authorization": f"Bearer {token}"})
        async with Client(transport=ws) as session:
            events = [
                result["messageStream"]["__typename"]
                async for result in session.subscribe(
                    GraphQLRequest(
                        STREAM,
                        variable_values={"input": {"sessionId": sid, "content": "over ws"}},
                    )
                )
            ]
        assert events[0] == "StreamUserTurn" and events[-1] == "StreamAssistantTurn"

        # A websocket without a valid token is closed with 4401 (graphql-transport-ws).
        async with websockets.connect(
            ws_url, subprotocols=[Subprotocol("graphql-transport-ws")]
        ) as raw:
            await raw.send(
                json.dumps(
                    {"type": "connection_init", "payload": {"Authorization": "Bearer smr_nope"}}
                )
            )
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await raw.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401

        # A browser: a wrong password, then the right one, then sign-out.
        origin = {"Origin": server.base_url}
        with httpx.Client(base_url=server.base_url, headers=origin) as browser:
            wrong = browser.post("/auth/login", json={"name": "ada", "password": "nope nope"})
            assert (wrong.status_code, wrong.json()) == (
                401,
                {"error": "Wrong user name or password."},
            )
            signed = browser.post("/auth/login", json={"name": "ada", "password": PASSWORD})
            assert signed.status_code == 200
            assert "HttpOnly" in signed.headers["set-cookie"]
            assert "SameSite=lax" in signed.headers["set-cookie"]
            viewer = browser.post("/graphql", json={"query": WHO})
            assert viewer.json()["data"]["viewer"]["name"] == "ada"
            # A cookie without this server's Origin writes nothing.
            foreign = browser.post(
                "/graphql",
                json={"query": 'mutation { createSpace(input: {name: "x"}) { space { id } } }'},
                headers={"Origin": "http://evil.example"},
            )
            assert foreign.status_code == 403
            assert browser.post("/auth/logout").status_code == 200
            assert browser.post("/graphql", json={"query": WHO}).status_code == 401

    for leaked in (token, PASSWORD):
        assert leaked not in server.output
        for path in db_file.parent.iterdir():
            assert leaked.encode() not in path.read_bytes(), (path, "holds a secret")


def test_the_users_commands(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "db.sqlite3")
    short = smriti("users", "add", "bo", "--password-stdin", "--database", url, stdin="short\n")
    assert (short.returncode, short.stderr) == (
        2,
        "smriti: A password has at least 8 characters.\n",
    )
    assert smriti("users", "add", "bo", "--database", url, stdin=PASSWORD + "\n").returncode == 0
    again = smriti("users", "add", "bo", "--database", url, stdin=PASSWORD + "\n")
    assert (again.returncode, again.stderr) == (2, "smriti: There is already a user named 'bo'.\n")
    changed = smriti("users", "passwd", "bo", "--database", url, stdin="another passphrase\n")
    assert (changed.returncode, changed.stderr) == (0, "New password set for bo.\n")
    assert smriti("users", "disable", "bo", "--database", url).returncode == 0
    listed = smriti("users", "list", "--database", url)
    assert listed.stdout.split("\t")[:2] == ["bo", "disabled"]
    refused = smriti("tokens", "create", "--user", "bo", "--name", "x", "--database", url)
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2,
        "",
        "smriti: The account bo is disabled.\n",
    )
    missing = smriti("users", "disable", "nobody", "--database", url)
    assert (missing.returncode, missing.stderr) == (4, "smriti: No user named 'nobody'.\n")
    expiry = smriti(
        "tokens", "create", "--user", "bo", "--name", "x", "--expires", "soon", "--database", url
    )
    assert (expiry.returncode, expiry.stderr) == (
        2,
        "smriti: --expires is a number of days like 30d, not 'soon'.\n",
    )
