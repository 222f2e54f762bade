"""/mcp in `smriti serve`, with the SDK's own client over streamable HTTP.

Accounts mode: each call is authorised by its bearer token when it runs (a
token revoked mid-session is refused at its next call). Local mode: the same
Host and Origin checks as /graphql.
"""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from mcp import MCPError

from tests.mcp.support import PASSWORD, graphql, smriti, token
from tests.mcp.support import http_agent as agent
from tests.support.lineage import key
from tests.support.mcp_results import outcome
from tests.support.servers import SmritiServer, add_user

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


async def test_tokens_see_their_users_spaces_and_a_revoked_one_is_refused_at_its_next_call(
    database_url: str,
) -> None:
    add_user(database_url, "alice", PASSWORD)
    add_user(database_url, "bob", PASSWORD)
    alice, bob = token(database_url, "alice"), token(database_url, "bob")
    reader = token(database_url, "alice", "--read-only")
    with SmritiServer(database_url) as server:
        url = f"{server.base_url}/mcp"
        made = await graphql(
            server,
            alice["token"],
            'mutation { createSpace(input: {name: "Plans"}) { space { id } } }',
        )
        space = key(made["createSpace"]["space"]["id"])
        spaces = await graphql(server, alice["token"], "{ spaces { edges { node { id name } } } }")
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(url, json=PING, headers=MCP_HEADERS)
        assert anonymous.status_code == 401
        assert anonymous.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        async with agent(url, bob["token"]) as session:
            assert outcome(await session.call_tool("list_spaces", {})) == {
                "spaces": [],
                "hasMore": False,
            }
            other = await session.call_tool("verify_lineage", {"spaceId": space})
            assert outcome(other) == {
                "error": {"code": "NOT_FOUND", "message": "No such space.", "field": "spaceId"}
            }
        async with agent(url, reader["token"]) as session:
            listed = outcome(await session.call_tool("list_spaces", {}))
            assert [(s["id"], s["name"]) for s in listed["spaces"]] == [
                (key(e["node"]["id"]), e["node"]["name"]) for e in spaces["spaces"]["edges"]
            ]
        async with agent(url, alice["token"]) as session:
            first = await session.call_tool("verify_lineage", {"spaceId": space})
            assert outcome(first) == {"ok": True, "checked": 0, "firstBroken": None}
            smriti(database_url, "tokens", "revoke", str(alice["id"]))
            with pytest.raises(MCPError):
                await session.call_tool("list_spaces", {})
        async with httpx.AsyncClient() as http:
            revoked = await http.post(
                url,
                json=PING,
                headers={**MCP_HEADERS, "Authorization": f"Bearer {alice['token']}"},
            )
        assert revoked.status_code == 401


async def test_local_mode_checks_host_and_origin_as_graphql_does(database_url: str) -> None:
    with SmritiServer(database_url) as server:
        url = f"{server.base_url}/mcp"
        async with agent(url, None) as session:
            listed = await session.call_tool("list_spaces", {})
            assert outcome(listed) == {"spaces": [], "hasMore": False}
        async with httpx.AsyncClient() as http:
            rebound = await http.post(url, json=PING, headers={**MCP_HEADERS, "Host": "evil.test"})
            foreign = await http.post(
                url, json=PING, headers={**MCP_HEADERS, "Origin": "https://evil.test"}
            )
            own = await http.post(
                url, json=PING, headers={**MCP_HEADERS, "Origin": server.base_url}
            )
    assert rebound.status_code == 400
    assert foreign.status_code == 403
    assert foreign.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert (own.status_code, own.json()["result"]) == (200, {})


def test_the_app_imports_no_sdk_until_mcp_is_asked() -> None:
    """The SDK costs each worker about half a second and 31 MB: only at its first /mcp."""
    script = (
        "import sys, api.app, api.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == "[]\n"
