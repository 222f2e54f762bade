"""The tools' published schemas, read from the server's own declarations (no
server started): portable to hosts that map a field to one type, the
checkpoint's fields those of the registry, and each tool's arguments those of
the GraphQL operation it mirrors, in the exported schema (schema.graphql)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLInputObjectType, GraphQLSchema, build_schema, get_named_type

from api.domain.types import CONTENT_FIELDS, CONTENT_LIST_FIELDS
from api.errors import InputError
from api.mcp.server import BY_NAME, TOOLS

SCHEMA = Path(__file__).resolve().parents[2] / "schema.graphql"


NULL = {"type": "null"}
# What makes a schema check anything (the MCP Inspector's lint warns on one without).
CONSTRAINING = {"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref"}


def subschemas(node: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any]]]:
    found = [(f"{path}/properties/{n}", one) for n, one in node.get("properties", {}).items()]
    found += [
        (f"{path}/{k}/{i}", one)
        for k in ("anyOf", "oneOf")
        for i, one in enumerate(node.get(k, []))
    ]
    found += [
        (f"{path}/{k}", node[k])
        for k in ("items", "additionalProperties")
        if isinstance(node.get(k), dict)
    ]
    return found  # fmt: skip


def unportable(node: dict[str, Any], *, answer: bool, path: str = "") -> list[str]:
    """Where a schema has a list of types; a union with null (an answer's field
    may be null only as `anyOf` branches of one type each); no check at all."""
    found: list[str] = []
    if isinstance(node.get("type"), list):
        found.append(f"{path}: type {node['type']}")
    for key in ("anyOf", "oneOf"):
        branches = node.get(key, [])
        single = all(isinstance(one.get("type"), str) for one in branches)
        if NULL in branches and not (answer and key == "anyOf" and single):
            found.append(f"{path}: {key} with null")
    if not CONSTRAINING & set(node):
        found.append(f"{path}: no type")
    for where, one in subschemas(node, path):
        found += unportable(one, answer=answer, path=where)
    return found


def test_the_walk_finds_what_it_looks_for() -> None:
    items = {"anyOf": [{"type": "integer"}, NULL]}
    nested = {"type": "object", "properties": {"a": {"type": "array", "items": items}}}
    assert unportable({"type": ["string", "null"]}, answer=True) == [": type ['string', 'null']"]
    assert unportable(nested, answer=False) == ["/properties/a/items: anyOf with null"]
    assert unportable(nested, answer=True) == []
    assert unportable({"anyOf": [{"minimum": 1}, NULL]}, answer=True) == [
        ": anyOf with null",
        "/anyOf/0: no type",
    ]
    assert unportable({"oneOf": [{"type": "integer"}, NULL]}, answer=True) == [": oneOf with null"]
    assert unportable({"type": "object", "properties": {"b": {}}}, answer=True) == [
        "/properties/b: no type"
    ]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_every_schema_is_single_typed(tool: Any) -> None:
    assert unportable(tool.input_schema, answer=False) == []
    assert unportable(tool.output_schema, answer=True) == []


def test_an_optional_argument_is_not_required_and_has_one_type() -> None:
    fork = BY_NAME["fork"].input_schema
    assert fork["required"] == ["checkpointId"]
    assert fork["properties"]["branch"] == {"type": "string"}
    settings = BY_NAME["update_session_settings"].input_schema["properties"]["settings"]
    assert settings["properties"]["temperature"] == {"type": "number", "minimum": 0, "maximum": 2}
    assert settings["properties"]["stop"] == {
        "type": "array",
        "items": {"type": "string", "maxLength": 100},
        "maxItems": 4,
    }
    assert BY_NAME["list_spaces"].input_schema["properties"]["first"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 50,
    }


def test_a_nullable_answer_is_its_type_or_null() -> None:
    state = BY_NAME["space_state"].output_schema
    assert state["properties"]["headId"] == {"anyOf": [{"type": "integer", "minimum": 1}, NULL]}
    assert "headId" in state["required"]
    sent = BY_NAME["send_message"].output_schema["properties"]
    finish = ["STOP", "LENGTH", "CONTENT_FILTER", "TOOL_CALLS", "INTERRUPTED", "LOST_CONNECTION"]
    assert sent["finishReason"] == {"anyOf": [{"type": "string", "enum": [*finish, "OTHER"]}, NULL]}
    assert sent["reply"] == {"anyOf": [sent["userTurn"], NULL]}


def test_the_checkpoint_fields_are_the_registrys() -> None:
    names = [f.name for f in CONTENT_FIELDS]
    saving = BY_NAME["save_checkpoint"].input_schema["properties"]
    assert [name for name in saving if name in names] == names == list(saving)[3:]
    checkpoint = BY_NAME["show_checkpoint"].output_schema["properties"]["checkpoint"]
    assert [n for n in checkpoint["properties"] if n in names] == names
    compared = BY_NAME["compare_checkpoints"].output_schema["required"]
    assert compared == ["a", "b", *(f.name for f in CONTENT_LIST_FIELDS), "commonAncestor"]
    lists = BY_NAME["preview_merge"].output_schema["properties"]["lists"]["properties"]
    assert list(lists) == [f.name for f in CONTENT_LIST_FIELDS]


@pytest.mark.parametrize(
    ("tool", "arguments", "message", "field"),
    [
        ("list_spaces", {"first": 0}, "`first` is a whole number from 1 to 100.", "first"),
        ("list_spaces", {"first": "5"}, "`first` is a whole number from 1 to 100.", "first"),
        ("show_checkpoint", {"checkpointId": True}, "`checkpointId` is a positive whole number.", "checkpointId"),
        ("verify_lineage", {}, "`spaceId` is required.", "spaceId"),
        ("verify_lineage", {"spaceId": None}, "`spaceId` is required.", "spaceId"),
        ("fork", {"checkpointId": 1, "branch": 7}, "`branch` is a string.", "branch"),
        ("search", {"query": "a", "kinds": ["turn", "x"]}, "`kinds` is a list of turn, checkpoint, session, space.", "kinds"),
        ("search", {"query": "a", "kinds": []}, "`kinds` is a list of turn, checkpoint, session, space.", "kinds"),
        ("space_state", {"spaceId": 1, "since": "yesterday"}, "`since` is a checkpoint id or an ISO 8601 time.", "since"),
        ("save_checkpoint", {"sessionId": 1, "tasks": "one"}, "`tasks` is a list of strings.", "tasks"),
        ("save_checkpoint", {"sessionId": 1, "dryRun": 1}, "`dryRun` is true or false.", "dryRun"),
        ("send_message", {"sessionId": 1, "content": "x", "context": {"memoryScope": "ALL"}}, "`context.memoryScope` is LATEST_1 or LATEST_3.", "context.memoryScope"),
        ("send_message", {"sessionId": 1, "content": "x", "context": {"spaceId": 0}}, "`context.spaceId` is a positive whole number.", "context.spaceId"),
        ("send_message", {"sessionId": 1, "content": "x", "context": 3}, "`context` is an object.", "context"),
        ("send_message", {"sessionId": 1, "content": "x", "context": {"colour": 1}}, "Unknown argument `context.colour`.", "context.colour"),
        ("update_session_settings", {"sessionId": 1, "settings": {"topP": float("inf")}}, "`settings.topP` is a finite number.", "settings.topP"),
        ("merge", {"spaceId": 1, "into": "main", "fromId": 2, "title": "t", "resolutions": [{"field": "decisions", "item": "x"}]}, "A resolution is {field: one of decisions, tasks, openQuestions, entities, item, keep} or {field, item, take: INTO or FROM}.", "resolutions"),
    ],
)  # fmt: skip
def test_a_mistake_names_its_field(
    tool: str, arguments: dict[str, Any], message: str, field: str
) -> None:
    with pytest.raises(InputError) as raised:
        BY_NAME[tool].arguments.parse(arguments)
    assert (raised.value.message, raised.value.field) == (message, field)


# --- parity with GraphQL ---------------------------------------------------------

# Each tool and the GraphQL fields it mirrors ("Type.field"): their arguments, an
# `input` argument read as its fields, together are the GraphQL side.
MIRRORS: dict[str, list[str]] = {
    "list_spaces": ["Query.spaces"],
    "space_state": [],
    "search": ["Query.search"],
    "show_checkpoint": ["Query.checkpoint", "Query.checkpointByHash"],
    "list_checkpoints": ["Query.space", "Space.lineage"],
    "compare_checkpoints": ["Query.compareCheckpoints"],
    "verify_lineage": ["Query.verifyLineage"],
    "create_space": ["Mutation.createSpace"],
    "fork": ["Mutation.forkSession"],
    "save_checkpoint": ["Mutation.createCheckpoint"],
    "preview_merge": ["Query.previewMerge"],
    "merge": ["Mutation.mergeCheckpoints"],
    "start_session": ["Mutation.createSession"],
    "send_message": ["Mutation.sendMessage"],
    "show_session": ["Query.session", "Session.turns"],
    "update_session_settings": ["Mutation.updateSession"],
    "branch_session": ["Mutation.forkSession"],
    "regenerate": ["Mutation.regenerate"],
    "edit_and_resend": ["Mutation.editAndResend"],
    "continue_reply": ["Mutation.continueReply"],
}
NO_CURSOR = "a tool answers the first page and says whether there is more; no cursors"
FIRST_PAGE_ONLY = {"after": NO_CURSOR}
# The same argument under another name: (tool, MCP path) → (GraphQL path, why).
RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("show_checkpoint", "checkpointId"): ("id", "one tool serves both queries: `id` alone would not say whose"),
    ("list_checkpoints", "spaceId"): ("id", "the space's id, a tool has no parent object to select from"),
    ("fork", "branch"): ("branchName", "published so before this table; agents' calls keep working"),
    ("preview_merge", "fromId"): ("from", "published so before this table; agents' calls keep working"),
    ("merge", "fromId"): ("from", "published so before this table; agents' calls keep working"),
    ("show_session", "sessionId"): ("id", "a tool has no parent object: the id says whose"),
    ("show_session", "lastTurns"): ("last", "the tool reads only the last turns; the name says so"),
    ("update_session_settings", "sessionId"): ("id", "a tool has no parent object: the id says whose"),
}  # fmt: skip
# Only on one side, and why.
MCP_ONLY: dict[tuple[str, str], str] = {
    (
        "space_state",
        "spaceId",
    ): "space_state renders a brief for a prompt; GraphQL serves its parts",
    ("space_state", "branch"): "as spaceId",
    ("space_state", "since"): "as spaceId",
    (
        "list_checkpoints",
        "branch",
    ): "one branch's line; Space.lineage is every branch, oldest first",
    (
        "save_checkpoint",
        "dryRun",
    ): "checked, not saved: GraphQL clients draft in the web UI instead",
    ("save_checkpoint", "markdown"): "the export's Markdown, which a model writes as it reads it",
}
GRAPHQL_ONLY: dict[tuple[str, str], str] = {
    ("list_spaces", "after"): NO_CURSOR,
    ("search", "after"): NO_CURSOR,
    ("list_checkpoints", "after"): NO_CURSOR,
    ("show_session", "first"): "the tool reads the last turns only",
    ("show_session", "after"): NO_CURSOR,
    ("show_session", "before"): NO_CURSOR,
    ("fork", "atTurnId"): "forkSession at a turn is branch_session: one tool a use, each its own required argument",
    ("branch_session", "checkpointId"): "forkSession from a checkpoint is fork",
    ("branch_session", "branchName"): "a conversation branch is no lineage branch: it has no name",
    **{("save_checkpoint", key): "items with ids, for a client that edits items in place; a tool's texts keep their ids by text" for key in ("decisionItems", "taskItems", "openQuestionItems", "entityItems")},
    ("save_checkpoint", "sourceTurnRange"): "the turns the web UI drafted the checkpoint from",
    ("preview_merge", "draftWithModel"): "a tool asks no model: its warnings are the heuristic's",
    ("merge", "resolutions.itemId"): "a tool names a conflict by its text, as preview_merge shows it",
    **{("update_session_settings", key): "this tool sets instructions and parameters; the rest of a session is its owner's to arrange" for key in ("title", "memoryScope", "model", "visibility", "pinned", "archived", "tags")},
}  # fmt: skip


def graphql_arguments(schema: GraphQLSchema, fields: list[str]) -> dict[str, Any]:
    """name → the input object type it takes (None for a scalar or an enum)."""
    found: dict[str, Any] = {}
    for path in fields:
        type_name, field_name = path.split(".")
        for name, argument in schema.get_type(type_name).fields[field_name].args.items():  # type: ignore[union-attr]
            named = get_named_type(argument.type)
            if name == "input" and isinstance(named, GraphQLInputObjectType):
                for inner, value in named.fields.items():
                    inner_type = get_named_type(value.type)
                    found[inner] = (
                        inner_type if isinstance(inner_type, GraphQLInputObjectType) else None
                    )
            else:
                found[name] = named if isinstance(named, GraphQLInputObjectType) else None
    return found


def mcp_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """name → its object's schema (None for any other type); a list of objects as its items."""
    found: dict[str, Any] = {}
    for name, value in schema["properties"].items():
        inner = value.get("items", value)
        found[name] = inner if inner.get("type") == "object" else None
    return found


def differences(
    tool: str, mcp: dict[str, Any], graphql: dict[str, Any], prefix: str = ""
) -> tuple[set[str], set[str]]:
    """The MCP paths with no GraphQL argument and the GraphQL paths with no tool
    argument, once the renames are applied; objects compared field by field."""
    renamed = {m: g for (t, m), (g, _) in RENAMED.items() if t == tool}
    mcp_only: set[str] = set()
    matched: set[str] = set()
    for name, nested in mcp.items():
        path = prefix + name
        other = renamed.get(path, path).removeprefix(prefix)
        if other not in graphql:
            mcp_only.add(path)
            continue
        matched.add(other)
        if nested is not None and graphql[other] is not None:
            inner = {n: None for n in graphql[other].fields}
            more_mcp, more_graphql = differences(tool, mcp_arguments(nested), inner, f"{path}.")
            mcp_only |= more_mcp
            matched |= {f"{other}.{n}" for n in inner} - more_graphql
    graphql_only = {prefix + n for n in graphql if n not in matched}
    if prefix == "":
        graphql_only |= {
            f"{n}.{inner}"
            for n, nested in graphql.items()
            if n in matched and nested is not None
            for inner in nested.fields
            if f"{n}.{inner}" not in matched
        }
    return mcp_only, graphql_only


def test_each_tool_takes_its_graphql_operations_arguments() -> None:
    schema = build_schema(SCHEMA.read_text())
    assert list(MIRRORS) == [tool.name for tool in TOOLS]
    for tool in TOOLS:
        mcp_only, graphql_only = differences(
            tool.name,
            mcp_arguments(tool.input_schema),
            graphql_arguments(schema, MIRRORS[tool.name]),
        )
        assert mcp_only == {m for t, m in MCP_ONLY if t == tool.name}, tool.name
        assert graphql_only == {g for t, g in GRAPHQL_ONLY if t == tool.name}, tool.name


def test_send_message_takes_graphqls_context() -> None:
    schema = build_schema(SCHEMA.read_text())
    context = BY_NAME["send_message"].input_schema["properties"]["context"]
    assert list(context["properties"]) == list(schema.get_type("ContextInput").fields)  # type: ignore[union-attr]
    assert context["properties"]["memoryScope"]["enum"] == ["LATEST_1", "LATEST_3"]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_every_argument_says_what_it_is(tool: Any) -> None:
    """A value no argument takes (a list holding a list) is refused in the
    field's own words, never pydantic's; the required others well given."""
    schema = tool.input_schema
    sample = {"integer": 1, "string": "x", "object": {}}
    given = {n: sample[schema["properties"][n]["type"]] for n in schema["required"]}
    tool.arguments.parse(given)
    for name in schema["properties"]:
        with pytest.raises(InputError) as raised:
            tool.arguments.parse({**given, name: [[]]})
        assert raised.value.field == name, name
        assert raised.value.message.startswith((f"`{name}` is ", "A resolution is {")), name
