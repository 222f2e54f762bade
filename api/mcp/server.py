"""The tools served with the official SDK: over stdio (`smriti mcp`) and over
streamable HTTP (/mcp in `smriti serve`).

Who calls is asked again at every tool call (``Caller``): over HTTP each call
is its own POST, whose credential api/mcp/http.py resolved; a token revoked
since is refused at its next call. A typed error becomes a tool error whose
text and structured content carry GraphQL's code and words.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST

from .. import __version__
from ..domain.accounts import Actor
from ..domain.brief import continuation_prompt
from ..errors import ErrorCode, SmritiError
from ..services.base import Services
from . import resources
from .branches import BRANCH_TOOLS
from .conversation import CONVERSATION_TOOLS
from .session import SESSION_TOOLS
from .tool import Tool, ToolFailure
from .tools import TOOLS as READING_TOOLS
from .writing import WRITING_TOOLS

TOOLS: tuple[Tool[Any], ...] = (
    *READING_TOOLS,
    *WRITING_TOOLS,
    *CONVERSATION_TOOLS,
    *SESSION_TOOLS,
    *BRANCH_TOOLS,
)
BY_NAME = {tool.name: tool for tool in TOOLS}
_T = TypeVar("_T")
CONTINUE = "continue_from_checkpoint"
# The JSON-RPC error MCP names for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002

# Who calls, from the request's context; None: refused (UNAUTHENTICATED).
Caller = Callable[[ServerRequestContext[Any, Any]], Awaitable[Actor | None]]

INSTRUCTIONS = (
    "Smriti keeps the conclusions of conversations as checkpoints (objective, summary, "
    "decisions, tasks, open questions) in spaces, with branches like git. Start with "
    "list_spaces, then list_checkpoints for where the work stands, search for what was "
    "decided, show_checkpoint for one in full. To continue from a checkpoint, fork it "
    "and save_checkpoint into the session fork gives you; preview_merge, then merge. "
    "start_session and send_message hold a conversation with a model through Smriti; "
    "show_session reads one (its turns' ids, its branches), and regenerate, "
    "edit_and_resend, branch_session and continue_reply branch or continue it."
)


# Where a tool error's machine-readable part travels: the result's `_meta`, not its
# structuredContent, which is the tool's result and must match its output schema (the
# MCP Inspector checks it even on an error; the SDK clients do not).
ERROR_META = "smriti/error"
DONE_META = "smriti/done"


def tool_error(
    code: ErrorCode, message: str, field: str | None = None, done: dict[str, Any] | None = None
) -> types.CallToolResult:
    """A tool error: ``CODE: message`` for the model to read, and GraphQL's error
    object ({code, message, field}) under `_meta` for a program; ``done`` (what was
    written before the error: send_message's kept user turn) beside it, and in the
    text as JSON."""
    text = f"{code.value}: {message}"
    meta: dict[str, Any] = {ERROR_META: {"code": code.value, "message": message, "field": field}}
    if done:
        text += "\n" + json.dumps(done, ensure_ascii=False)
        meta[DONE_META] = done
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True, _meta=meta)


def error_of(result: types.CallToolResult) -> dict[str, Any] | None:
    """The GraphQL error object a tool error carries (None for a result)."""
    if not result.is_error:
        return None
    found = (result.meta or {}).get(ERROR_META)
    return found if isinstance(found, dict) else None


def done_of(result: types.CallToolResult) -> dict[str, Any]:
    """What a failed tool call wrote before it failed (empty when nothing)."""
    found = (result.meta or {}).get(DONE_META)
    return found if isinstance(found, dict) else {}


async def _answering(work: Awaitable[_T]) -> _T:
    """A typed error as a JSON-RPC error (resources have no tool errors):
    GraphQL's code and field in its data, its words as the message."""
    try:
        return await work
    except SmritiError as exc:
        number = RESOURCE_NOT_FOUND if exc.code is ErrorCode.NOT_FOUND else INVALID_PARAMS
        raise MCPError(number, exc.message, {"code": exc.code.value, "field": exc.field}) from None


async def call_tool_as(
    services: Services, actor: Actor, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """One tool call as ``actor``: what a client gets, a typed error as a tool error.
    The server answers with it, and so does `smriti spaces` and its kin locally."""
    tool = BY_NAME.get(name)
    if tool is None:
        return tool_error(ErrorCode.INVALID, f"No tool named {name[:100]!r}.")
    try:
        answer, text = await tool.call(services, actor, arguments)
    except SmritiError as exc:
        return tool_error(exc.code, exc.message, exc.field)
    except ToolFailure as failure:
        error = failure.error
        return tool_error(error.code, error.message, error.field, failure.done)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=answer)


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
        if params.name not in BY_NAME:
            return tool_error(ErrorCode.INVALID, f"No tool named {params.name[:100]!r}.")
        actor = await caller(ctx)
        if actor is None:
            return tool_error(ErrorCode.UNAUTHENTICATED, "Send `Authorization: Bearer smr_…`.")
        return await call_tool_as(services, actor, params.name, params.arguments or {})

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        actor = await _actor(ctx)
        found = await _answering(resources.listed(actor))
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=name, mime_type=resources.MARKDOWN)
                for uri, name in found
            ]
        )

    async def list_resource_templates(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=resources.CHECKPOINT_TEMPLATE,
                    name="checkpoint",
                    description="A checkpoint of a space you read, as Markdown.",
                    mime_type=resources.MARKDOWN,
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        actor = await _actor(ctx)
        text = await _answering(resources.read(actor, params.uri))
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=params.uri, mime_type=resources.MARKDOWN, text=text)
            ]
        )

    async def _actor(ctx: ServerRequestContext[Any, Any]) -> Actor:
        actor = await caller(ctx)
        if actor is None:
            raise MCPError(
                INVALID_REQUEST,
                "Send `Authorization: Bearer smr_…`.",
                {"code": ErrorCode.UNAUTHENTICATED.value, "field": None},
            )
        return actor

    async def list_prompts(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=CONTINUE,
                    title="Continue from a checkpoint",
                    description="Where a branch of a space stands (space_state's brief), "
                    "framed for a model that takes the work over.",
                    arguments=[
                        types.PromptArgument(name="spaceId", required=True),
                        types.PromptArgument(name="branch", description='Default "main".'),
                        types.PromptArgument(
                            name="since", description="A checkpoint id or an ISO 8601 time."
                        ),
                    ],
                )
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        actor = await _actor(ctx)
        if params.name != CONTINUE:
            raise MCPError(INVALID_PARAMS, f"No prompt named {params.name[:100]!r}.")
        given = dict(params.arguments or {})
        args: dict[str, Any] = {k: v for k, v in given.items() if k in ("branch", "since")}
        for name in ("spaceId", "since"):
            if given.get(name, "").isdecimal():
                args[name] = int(given[name])
        args.setdefault("spaceId", given.get("spaceId"))
        _, brief = await _answering(BY_NAME["space_state"].call(services, actor, args))
        return types.GetPromptResult(
            description="Continue from the head of the branch.",
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(text=continuation_prompt(brief))
                )
            ],
        )

    return Server(
        "smriti",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_stdio(caller: Caller, services: Services) -> None:
    """Answer one client on stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(caller, services)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
