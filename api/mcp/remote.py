"""A running Smriti server's tools, reached with the SDK's streamable HTTP client.

For `smriti spaces … --url` (one command, a call or two) and `smriti mcp --url`
(a stdio server whose tools, resources and prompts are the remote server's,
forwarded). The token travels only in the Authorization header: no message
here names it, and no exception text that could carry it is shown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import mcp_types as types
from mcp import ClientSession, MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from ..errors import InputError, SmritiError

# Long enough for a merge on a busy server; a connection that hangs still ends.
TIMEOUT_SECONDS = 60.0


class Unreachable(Exception):
    """The server cannot be reached, or does not answer as a Smriti server."""


class Refused(Exception):
    """The server refused the credential (HTTP 401 or 403): no, a wrong, expired
    or revoked token, or a browser origin it does not trust."""


def endpoint(url: str) -> str:
    """The server's /mcp: ``url`` may name the server or its /mcp already."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"--url is a server's address like http://127.0.0.1:8000, not {url[:80]!r}.",
            field="url",
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/mcp"):
        path += "/mcp"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    found = [error]
    cause = error.__cause__ or error.__context__
    return found + (_leaves(cause) if cause is not None and cause is not error else [])


def _explained(error: BaseException, url: str, token: str | None, statuses: list[int]) -> Exception:
    """What went wrong with the connection, in words that never hold the token.
    The SDK words an HTTP error as "Server returned an error response" only:
    the statuses the client saw (``statuses``) say which it was."""
    import httpx2

    if refused := [status for status in statuses if status in (401, 403)]:
        if not token:
            return Refused(
                f"The server at {url} needs an API token: set SMRITI_TOKEN "
                "(`smriti tokens create` makes one)."
            )
        if refused[-1] == 403:
            return Refused(f"The server at {url} refused the request (HTTP 403).")
        return Refused(
            f"The server at {url} refused the token in SMRITI_TOKEN (wrong, expired or revoked)."
        )
    if failed := [status for status in statuses if status >= 400]:
        return Unreachable(f"The server at {url} answered HTTP {failed[-1]}.")
    if any(isinstance(leaf, httpx2.TransportError) for leaf in _leaves(error)):
        return Unreachable(f"Cannot reach a server at {url}.")
    return Unreachable(f"The server at {url} did not answer as a Smriti server.")


@asynccontextmanager
async def connected(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """An initialised client session with the server at ``url`` (its /mcp);
    ``Unreachable`` or ``Refused`` if there is none to be had."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    where = endpoint(url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    statuses: list[int] = []

    async def seen(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    try:
        async with (
            httpx2.AsyncClient(
                headers=headers, timeout=TIMEOUT_SECONDS, event_hooks={"response": [seen]}
            ) as http,
            streamable_http_client(where, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            try:
                await session.initialize()
            except Exception as exc:
                raise _explained(exc, where, token, statuses) from None
            yield session
    except (Unreachable, Refused, SmritiError):
        raise
    except Exception as exc:
        # The transport's task group wraps what failed in it (an HTTP error
        # comes as the SDK's MCPError); anything else is not the connection's.
        if (statuses and statuses[-1] >= 400) or any(
            isinstance(leaf, MCPError | httpx2.HTTPError) for leaf in _leaves(exc)
        ):
            raise _explained(exc, where, token, statuses) from None
        raise


async def call(
    session: ClientSession, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """One tool call (an MCPError if the server refuses the request itself)."""
    result = await session.call_tool(name, arguments)
    if not isinstance(result, types.CallToolResult):
        raise Unreachable(f"The server answered {name} with no tool result.")
    return result


async def forward_stdio(url: str, token: str | None) -> None:
    """Serve the remote server's tools, resources and prompts over stdio,
    each request forwarded as it comes (and authorised there, when it runs)."""
    from mcp.server.stdio import stdio_server

    async with connected(url, token) as remote:
        first = await remote.initialize()

        async def list_tools(
            _ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await remote.list_tools(params=params)

        async def call_tool(
            _ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            return await call(remote, params.name, dict(params.arguments or {}))

        async def list_resources(
            _ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return await remote.list_resources(params=params)

        async def list_resource_templates(
            _ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return await remote.list_resource_templates(params=params)

        async def read_resource(
            _ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return await remote.read_resource(params.uri)

        async def list_prompts(
            _ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListPromptsResult:
            return await remote.list_prompts(params=params)

        async def get_prompt(
            _ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
        ) -> types.GetPromptResult:
            return await remote.get_prompt(params.name, params.arguments)

        server: Server[Any] = Server(
            first.server_info.name,
            version=first.server_info.version,
            instructions=first.instructions,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_resource_templates,
            on_read_resource=read_resource,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
