"""Helpers the MCP tests share: the SDK's client on either transport, a tool
call that must succeed, tokens and GraphQL over HTTP, the tool lists, and the
queries several modules check the tools against."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from api.graphql.core import ids
from tests.support.graphql import GraphQLClient
from tests.support.mcp_results import outcome
from tests.support.servers import SmritiServer

PASSWORD = "correct horse battery"


READING_TOOLS = [
    "list_spaces",
    "space_state",
    "search",
    "show_checkpoint",
    "list_checkpoints",
    "compare_checkpoints",
    "verify_lineage",
]
WRITING_TOOLS = [
    "create_space",
    "fork",
    "save_checkpoint",
    "preview_merge",
    "merge",
    "start_session",
    "send_message",
]
# A session read, its settings set, its conversation branched or continued.
SESSION_TOOLS = [
    "show_session",
    "update_session_settings",
    "branch_session",
    "regenerate",
    "edit_and_resend",
    "continue_reply",
]


CHECKPOINT = """query($c: ID!) { checkpoint(id: $c) {
  hash title objective summary decisions tasks branchName
  parent { id } mergeParent { id } author { name viaToken } } }"""

PREVIEW = """query($s: ID!, $into: String!, $from: ID!) {
  previewMerge(input: {spaceId: $s, into: $into, from: $from}) {
    fastForward upToDate conflictCount ours { id } theirs { id } commonAncestor { id }
    decisions { items { text origin } conflicts { text origin } }
    tasks { items { text origin } conflicts { text origin } } } }"""


COUNTS = """query($s: ID!) { space(id: $s) { branches { name head { id } }
  lineage(first: 100) { edges { node { id } } } } }"""


def smriti(database_url: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "api", *args, "--database", database_url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def token(database_url: str, user: str, *scope: str) -> dict[str, Any]:
    made = smriti(
        database_url, "tokens", "create", "--user", user, "--name", "agent", "--json", *scope
    )
    return dict(json.loads(made))


@asynccontextmanager
async def http_agent(url: str, secret: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with (
        # A first model call loads LiteLLM in the server: more than httpx's 5 s on a busy machine.
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def graphql(server: SmritiServer, secret: str, query: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            server.graphql_url,
            json={"query": query},
            headers={"Authorization": f"Bearer {secret}"},
        )
    body = answer.json()
    assert "errors" not in body, body
    return dict(body["data"])


@asynccontextmanager
async def agent(
    database_url: str, transport: str = "stdio", providers: Path | None = None
) -> AsyncIterator[ClientSession]:
    """The SDK's client on `smriti mcp` (stdio) or `smriti serve`'s /mcp (http);
    ``providers``: the providers.yaml the server uses (default: the bundled one)."""
    if transport == "http":
        with SmritiServer(database_url, providers=providers) as server:
            async with (
                streamable_http_client(f"{server.base_url}/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session
        return
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "api", "mcp", "--database", database_url],
        env={
            **os.environ,
            "LITELLM_OFFLINE_MODE": "true",
            **({"SMRITI_PROVIDERS_FILE": str(providers)} if providers else {}),
        },
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, **arguments: Any) -> Any:
    result = await session.call_tool(name, arguments)
    assert result.is_error is False, result.content
    return outcome(result)


async def run(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    assert result.is_error is False, result.content
    return outcome(result)


def gid(kind: str, number: int) -> str:
    return ids.encode(kind, number)


async def counts(gql: GraphQLClient, space: str) -> tuple[int, dict[str, str]]:
    found = (await gql(COUNTS, s=space))["space"]
    heads = {b["name"]: b["head"]["id"] for b in found["branches"]}
    return len(found["lineage"]["edges"]), heads


def smriti_process(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Any:
    """`smriti ARGS` as a process: (exit status, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "api", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true", **(env or {})},
    )
    return done.returncode, done.stdout, done.stderr
