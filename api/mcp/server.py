"""The tools served with the official SDK: over stdio (`smriti mcp`) and over
streamable HTTP (/mcp in `smriti serve`).

Who calls is asked again at every tool call (``Caller``): over HTTP each call
is its own POST, whose credential api/mcp/http.py resolved; a token revoked
since is refused at its next call. A typed error becomes a tool error whose
text and structured content carry GraphQL's code and words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from .. import __version__
from ..domain.accounts import Actor
from ..errors import ErrorCode, SmritiError
from ..services.base import Services
from .tools import TOOLS as READING_TOOLS
from .writing import WRITING_TOOLS

TOOLS = (*READING_TOOLS, *WRITING_TOOLS)
BY_NAME = {tool.name: tool for tool in TOOLS}

# Who calls, from the request's context; None: refused (UNAUTHENTICATED).
Caller = Callable[[ServerRequestContext[Any, Any]], Awaitable[Actor | None]]

INSTRUCTIONS = (
    "Smriti keeps the conclusions of conversations as checkpoints (objective, summary, "
    "decisions, tasks, open questions) in spaces, with branches like git. Start with "
    "list_spaces, then list_checkpoints for where the work stands, search for what was "
    "decided, show_checkpoint for one in full. To continue from a checkpoint, fork it "
    "and save_checkpoint into the session fork gives you; preview_merge, then merge."
)


def tool_error(code: ErrorCode, message: str, field: str | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=f"{code.value}: {message}")],
        structured_content={"error": {"code": code.value, "message": message, "field": field}},
        is_error=True,
    )


def build_server(caller: Caller, services: Services) -> Server[Any]:
    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    title=tool.title,
                    description=tool.description,
                    input_schema=tool.input_schema,
                    output_schema=tool.output_schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=not tool.writes, open_world_hint=False
                    ),
                )
                for tool in TOOLS
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            return tool_error(ErrorCode.INVALID, f"No tool named {params.name[:100]!r}.")
        actor = await caller(ctx)
        if actor is None:
            return tool_error(ErrorCode.UNAUTHENTICATED, "Send `Authorization: Bearer smr_…`.")
        try:
            answer, text = await tool.run(services, actor, params.arguments or {})
        except SmritiError as exc:
            return tool_error(exc.code, exc.message, exc.field)
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=answer
        )

    return Server(
        "smriti",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(caller: Caller, services: Services) -> None:
    """Answer one client on stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(caller, services)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
