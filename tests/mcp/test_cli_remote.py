"""The commands for scripts and agents against a running `smriti serve`
(SMRITI_URL and SMRITI_TOKEN): the same tools over /mcp, so the same JSON as
locally; a token's scope and validity decide, and the token is never shown.
And `smriti mcp --url`: a stdio server whose tools are the remote server's."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from api import exits
from tests.mcp.support import (
    PASSWORD,
    READING_TOOLS,
    SESSION_TOOLS,
    WRITING_TOOLS,
    graphql,
    http_agent,
    token,
)
from tests.mcp.support import smriti_process as smriti
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.mcp_results import outcome
from tests.support.servers import SmritiServer, add_user


async def lineage(server: SmritiServer, secret: str, space: str) -> tuple[list[str], Any]:
    """The space's checkpoints and branch heads, as GraphQL shows them."""
    found = await graphql(
        server,
        secret,
        f'{{ space(id: "{space}") {{ branches {{ name head {{ id }} }} '
        "lineage(first: 100) { edges { node { id } } } } }",
    )
    edges = found["space"]["lineage"]["edges"]
    return [e["node"]["id"] for e in edges], found["space"]["branches"]


async def test_against_a_server_the_commands_answer_as_they_do_locally(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    add_user(database_url, "alice", PASSWORD)  # the first account takes the data over
    alice = token(database_url, "alice")
    reader = token(database_url, "alice", "--read-only")
    space, c2 = key(built["space"]), key(built["main"][2]["id"])
    with SmritiServer(database_url) as server:
        remote = {"SMRITI_URL": server.base_url, "SMRITI_TOKEN": alice["token"]}
        for command in (
            ("spaces",),
            ("state", str(space), "--since", str(key(built["main"][0]["id"]))),
            ("search", "left"),
            ("checkpoint", "show", str(c2)),
            ("checkpoint", "list", "--space", str(space), "--branch", "alt"),
            ("merge", "--space", str(space), "--from", "alt", "--dry-run"),
        ):
            local = smriti(*command, "--json", "--database", database_url, "--user", "alice")
            assert local[0] == 0, local
            assert smriti(*command, "--json", env=remote) == local
        text = smriti("checkpoint", "show", str(c2), "--database", database_url, "--user", "alice")
        assert smriti("checkpoint", "show", str(c2), env=remote) == text

        # A write, as the token: GraphQL sees it.
        status, out, err = smriti("fork", str(c2), "--branch", "agent", "--json", env=remote)
        assert (status, err) == (0, "")
        session = json.loads(out)["sessionId"]
        status, out, _ = smriti(
            "checkpoint",
            "create",
            "--session",
            str(session),
            "--title",
            "A1",
            "--json",
            env=remote,
        )
        saved = json.loads(out)["checkpoint"]
        assert (status, saved["branchName"], saved["title"]) == (0, "agent", "A1")
        before = await lineage(server, alice["token"], built["space"])
        assert dict((b["name"], key(b["head"]["id"])) for b in before[1])["agent"] == saved["id"]

        # A read-only token reads, and its write is refused with nothing written.
        readonly = {**remote, "SMRITI_TOKEN": reader["token"]}
        assert smriti("spaces", "--json", env=readonly)[0] == 0
        for refused in (
            ("checkpoint", "create", "--session", str(session), "--title", "A2"),
            ("fork", str(c2)),
            ("merge", "--space", str(space), "--from", "agent"),
        ):
            status, out, err = smriti(*refused, env=readonly)
            assert (status, out) == (exits.REFUSED, ""), err
            assert err.startswith("smriti: ") and err.count("\n") == 1
            assert reader["token"] not in err
        assert await lineage(server, alice["token"], built["space"]) == before

        # A wrong token, and none: a clear error, the token never shown.
        wrong = "smr_" + "x" * 40
        status, out, err = smriti("spaces", env={**remote, "SMRITI_TOKEN": wrong})
        assert (status, out) == (exits.REFUSED, "")
        assert err == (
            f"smriti: The server at {server.base_url}/mcp refused the token in SMRITI_TOKEN "
            "(wrong, expired or revoked).\n"
        )
        assert smriti("spaces", "--url", server.base_url, env={"SMRITI_TOKEN": ""}) == (
            exits.REFUSED,
            "",
            f"smriti: The server at {server.base_url}/mcp needs an API token: set "
            "SMRITI_TOKEN (`smriti tokens create` makes one).\n",
        )
        assert smriti("checkpoint", "show", env=remote) == (
            exits.USAGE,
            "",
            "smriti: Give a checkpoint's number, or --space and --hash.\n",
        )
        # A tool's own error comes back with its exit status.
        assert smriti("checkpoint", "show", "999", env=remote) == (
            exits.NOT_FOUND,
            "",
            "smriti: No such checkpoint.\n",
        )


async def test_smriti_mcp_url_serves_the_remote_servers_tools_over_stdio(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    add_user(database_url, "alice", PASSWORD)
    reader = token(database_url, "alice", "--read-only")
    space = key(built["space"])
    with SmritiServer(database_url) as server:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "api", "mcp", "--url", server.base_url],
            env={**os.environ, "LITELLM_OFFLINE_MODE": "true", "SMRITI_TOKEN": reader["token"]},
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            first = await session.initialize()
            assert first.server_info.name == "smriti"
            tools = (await session.list_tools()).tools
            assert [tool.name for tool in tools] == READING_TOOLS + WRITING_TOOLS + SESSION_TOOLS
            listed = await session.call_tool("list_spaces", {})
            assert listed.is_error is False
            assert [(s["id"], s["name"]) for s in (outcome(listed) or {})["spaces"]] == [
                (space, "Lineage")
            ]
            refused = await session.call_tool("fork", {"checkpointId": key(built["main"][2]["id"])})
            assert refused.is_error is True
            assert (outcome(refused) or {})["error"]["code"] == "FORBIDDEN"
            resources = [r.uri for r in (await session.list_resources()).resources]
        async with http_agent(f"{server.base_url}/mcp", reader["token"]) as direct:
            assert resources == [r.uri for r in (await direct.list_resources()).resources]
            assert resources != []
    # Nothing listens on port 1.
    assert smriti("mcp", "--url", "http://127.0.0.1:1") == (
        exits.DATABASE,
        "",
        "smriti: Cannot reach a server at http://127.0.0.1:1/mcp.\n",
    )
