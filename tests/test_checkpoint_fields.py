"""A checkpoint's content fields are written once (api/domain/types.py) and every
layer holds exactly them: the domain value, the table, the hash, the export and
its JSON Schema, the GraphQL types, the chat prompt, the web UI and the MCP tools.
A list field added to the registry (in a fresh interpreter, before any layer is
imported) reaches every layer with nothing else changed."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    FieldNode,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLObjectType,
    Visitor,
    parse,
    validate,
    visit,
)
from graphql import build_schema as graphql_build_schema
from mcp import ClientSession, StdioServerParameters, stdio_client

from api.domain import export_format, hashing
from api.domain.prompt import render_checkpoint_block
from api.domain.types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    CONTENT_TEXT_FIELDS,
    CheckpointContent,
    ItemIds,
    Space,
)
from api.graphql.schema import build_schema
from api.store import models
from tests.domain.builders import T0, checkpoint
from tests.support.graphql import GraphQLClient

ATTRS = [f.attr for f in CONTENT_FIELDS]
NAMES = [f.name for f in CONTENT_FIELDS]
LIST_NAMES = [f.name for f in CONTENT_LIST_FIELDS]
LIST_ATTRS = ["decisions", "tasks", "open_questions", "entities"]
ITEM_NAMES = ["decisionItems", "taskItems", "openQuestionItems", "entityItems"]
MEMBERS = ["DECISIONS", "TASKS", "OPEN_QUESTIONS", "ENTITIES"]
ROOT = Path(__file__).resolve().parent.parent
WEBUI = ROOT / "webui"
EXPORT_SCHEMA = json.loads((ROOT / "docs/export.schema.json").read_text())

FULL = CheckpointContent(
    title="T",
    objective="O",
    summary="S",
    decisions=("d",),
    tasks=("t",),
    open_questions=("q",),
    entities=("e",),
)


def test_the_tuple_is_the_content_in_display_order() -> None:
    assert [f.attr for f in CONTENT_LIST_FIELDS] == LIST_ATTRS
    assert [f.item_name for f in CONTENT_LIST_FIELDS] == [
        "decisionItems",
        "taskItems",
        "openQuestionItems",
        "entityItems",
    ]
    assert [f.item_attr for f in CONTENT_LIST_FIELDS] == [
        "decision_items",
        "task_items",
        "open_question_items",
        "entity_items",
    ]
    assert [f.member for f in CONTENT_LIST_FIELDS] == [
        "DECISIONS",
        "TASKS",
        "OPEN_QUESTIONS",
        "ENTITIES",
    ]
    assert NAMES == [
        "title",
        "objective",
        "summary",
        "decisions",
        "tasks",
        "openQuestions",
        "entities",
    ]
    # The text fields, the lists (one per list field), then the items' identities.
    assert [f.name for f in dataclasses.fields(CheckpointContent)] == [
        "title",
        "objective",
        "summary",
        "lists",
        "item_ids",
    ]
    assert [attr for attr, _ in FULL.lists] == LIST_ATTRS
    assert [attr for attr, _ in ItemIds().lists] == LIST_ATTRS
    assert (*CONTENT_TEXT_FIELDS, *CONTENT_LIST_FIELDS) == CONTENT_FIELDS


def test_every_layer_reads_and_writes_every_field() -> None:
    assert FULL.columns() == {
        "title": "T",
        "objective": "O",
        "summary": "S",
        "decisions": ["d"],
        "tasks": ["t"],
        "open_questions": ["q"],
        "entities": ["e"],
    }
    assert FULL.by_name()["openQuestions"] == ["q"]
    assert CheckpointContent.from_columns(FULL.columns()) == FULL
    assert set(ATTRS) <= set(models.Checkpoint._meta.fields_map)
    encoded = json.loads(
        hashing.canonical_encoding(
            FULL,
            space_id=1,
            parent_hash=None,
            created_at=datetime(2024, 1, 1, tzinfo=UTC),
            branch_name="main",
            author_agent="user",
        )
    )
    assert {k: encoded[k] for k in NAMES} == FULL.by_name()
    saved = checkpoint(1, body=FULL)
    export = export_format.Export(
        spaces=(
            export_format.SpaceExport(
                space=Space(
                    id=10, name="S", description="", owner_id=1, created_at=T0, updated_at=T0
                ),
                hash_space_id=10,
                branches=(export_format.Branch("main", 1, T0, T0),),
                checkpoints=(saved,),
                sessions=(),
            ),
        ),
        sessions=(),
    )
    document = export_format.to_document(export, exported_at=T0)
    written = document["spaces"][0]["checkpoints"][0]
    assert {k: written[k] for k in NAMES} == FULL.by_name()
    assert export_format.from_document(document).spaces[0].checkpoints[0].content == FULL
    defined = EXPORT_SCHEMA["$defs"]["checkpoint"]
    assert set(NAMES) <= set(defined["required"]) and set(NAMES) <= set(defined["properties"])


def test_the_graphql_types_hold_every_field() -> None:
    types = build_schema()._schema.type_map
    for name in ("Checkpoint", "CheckpointDraft"):
        graphql_type = types[name]
        assert isinstance(graphql_type, GraphQLObjectType)
        assert set(NAMES) <= set(graphql_type.fields), name
    created = types["CreateCheckpointInput"]
    assert isinstance(created, GraphQLInputObjectType)
    assert set(NAMES) <= set(created.fields)
    for name in ("CarriedState", "Comparison", "MergePreview"):
        graphql_type = types[name]
        assert isinstance(graphql_type, GraphQLObjectType)
        assert set(LIST_NAMES) <= set(graphql_type.fields), name


def test_the_chat_prompt_shows_each_list_field_under_its_heading() -> None:
    # Entities are left out of the chat prompt (the registry says prompt=None).
    assert render_checkpoint_block([checkpoint(1, body=FULL)]) == (
        "You are continuing a conversation.\n\n"
        "Checkpoint [1] \u2014 T (0228f80)\n"
        "Objective: O\nSummary:\nS\n"
        "Key Decisions:\n- d\nOpen Tasks:\n- t\nOpen Questions:\n- q"
    )


TODAY_IN_THE_UI = [
    {
        "name": "decisions",
        "label": "Decisions",
        "items": "decisionItems",
        "member": "DECISIONS",
        "done": None,
    },
    {"name": "tasks", "label": "Tasks", "items": "taskItems", "member": "TASKS", "done": "Done"},
    {
        "name": "openQuestions",
        "label": "Open questions",
        "items": "openQuestionItems",
        "member": "OPEN_QUESTIONS",
        "done": "Resolved",
    },
    {
        "name": "entities",
        "label": "Entities",
        "items": "entityItems",
        "member": "ENTITIES",
        "done": None,
    },
]
# The documents of webui/api.js that name the list fields.
UI_DOCUMENTS = ("COMPARE", "PREVIEW_MERGE", "DRAFT_CHECKPOINT", "CREATE_CHECKPOINT")


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    return found


def ui_as_served(node: str, module: str, directory: Path) -> dict[str, Any]:
    """webui/api.js beside ``module`` as /checkpoint-fields.js, as the browser
    loads them: the fields it learnt and its GraphQL documents."""
    for name in ("api.js", "stream.js"):
        shutil.copy(WEBUI / name, directory / name)
    (directory / "checkpoint-fields.js").write_text(module)
    script = (
        f'import * as api from "{(directory / "api.js").as_uri()}";\n'
        f'import {{ LIST_FIELDS }} from "{(directory / "checkpoint-fields.js").as_uri()}";\n'
        f"const names = {json.dumps(UI_DOCUMENTS)};\n"
        "const documents = Object.fromEntries(names.map((name) => [name, api[name]]));\n"
        "process.stdout.write(JSON.stringify({ fields: LIST_FIELDS, documents }));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def selected(document: str, field: str) -> list[str]:
    """The names selected under ``field`` (the first one of that name) of a document."""
    found: list[str] = []

    class Finder(Visitor):
        def enter_field(self, node: FieldNode, *_: object) -> None:
            if node.name.value == field and not found and node.selection_set is not None:
                found.extend(
                    s.name.value for s in node.selection_set.selections if isinstance(s, FieldNode)
                )

    visit(parse(document), Finder())
    return found


async def test_the_web_ui_learns_the_fields_from_the_served_module(
    gql: GraphQLClient, node: str, tmp_path: Path
) -> None:
    response = await gql.http.get("/checkpoint-fields.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    ui = ui_as_served(node, response.text, tmp_path)
    assert ui["fields"] == TODAY_IN_THE_UI
    documents = ui["documents"]
    schema = build_schema()._schema
    for name in UI_DOCUMENTS:
        assert validate(schema, parse(documents[name])) == [], name
    compared = selected(documents["COMPARE"], "compareCheckpoints")
    assert compared == ["a", "b", "commonAncestor", *LIST_NAMES]
    carried = selected(documents["DRAFT_CHECKPOINT"], "carried")
    assert carried == ["checkpoint", "objective", *LIST_NAMES, *ITEM_NAMES]


async def test_the_mcp_checkpoint_tool_takes_exactly_the_registry_fields(
    database_url: str,
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "api", "mcp", "--database", database_url],
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    saving = tools["save_checkpoint"].input_schema["properties"]
    # Besides the fields (and, if given, their items with ids): the session,
    # the dry run and the whole checkpoint as Markdown.
    others = {"sessionId", "dryRun", "markdown"}
    assert {name for name in saving if name not in others | set(ITEM_NAMES)} == set(NAMES)


# Run in a fresh interpreter: one list field more in the registry, before any
# layer that reads it is imported; what each layer then makes of it, as JSON.
ADD_A_FIELD = """
import json, sys
from datetime import UTC, datetime

from api.domain import types

risks = types.ContentField("risks", "risks", "Risks", "What could go wrong.", done="Mitigated")
types.CONTENT_LIST_FIELDS = (*types.CONTENT_LIST_FIELDS, risks)
types.CONTENT_FIELDS = (*types.CONTENT_TEXT_FIELDS, *types.CONTENT_LIST_FIELDS)

from api.domain import export_format, hashing
from api.domain.extraction import EXTRACTION_INSTRUCTIONS, parse_draft
from api.domain.prompt import render_checkpoint_block
from api.domain.types import ChatMessage, CheckpointContent, ItemIds
from api.graphql.schema import export_schema
from api.http.checkpoint_fields import module_text
from api.providers.offline import extract_draft
from tests.domain.builders import checkpoint

def encoded(content):
    return json.loads(hashing.canonical_encoding(
        content, space_id=1, parent_hash=None, created_at=datetime(2024, 1, 1, tzinfo=UTC),
        branch_name="main", author_agent="user"))

plain = CheckpointContent("T", tasks=("t",), item_ids=ItemIds(tasks=("i1",)))
risky = CheckpointContent(
    "T", tasks=("t",), risks=("Flood",), item_ids=ItemIds(tasks=("i1",), risks=("i2",)))
transcript = "[USER #1]\\nWe decided to fly."
drafted = extract_draft(
    [ChatMessage("system", EXTRACTION_INSTRUCTIONS), ChatMessage("user", transcript)])
with open("tests/data/export-before-item-ids.json") as older:
    imported = export_format.from_document(json.load(older)).spaces[0].checkpoints
print(json.dumps({
    "imported": [
        [c.content.risks, hashing.checkpoint_hash(c.content, space_id=1, parent_hash=None,
            created_at=c.created_at, branch_name=c.branch_name, author_agent=c.author_agent)]
        for c in imported
    ],
    "prompt": render_checkpoint_block([checkpoint(1, body=risky)]),
    "extraction": EXTRACTION_INSTRUCTIONS,
    "drafted": list(json.loads(drafted)),
    "parsed": list(parse_draft(drafted).risks),
    "plain": encoded(plain),
    "risky": encoded(risky),
    "ui": module_text(),
    "schema": export_schema(),
}))
"""


@pytest.fixture(scope="module")
def with_risks() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", ADD_A_FIELD],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_an_added_list_field_reaches_the_prompts_and_the_hash(with_risks: dict[str, Any]) -> None:
    assert with_risks["prompt"].endswith("Open Tasks:\n- t\nRisks:\n- Flood")
    assert (
        '"decisions", "tasks", "openQuestions", "entities" and "risks" (each a list of strings).'
        in with_risks["extraction"]
    )
    assert with_risks["extraction"].endswith('"openQuestions": [], "entities": [], "risks": []}')
    # The offline model drafts every field, the new one empty.
    assert with_risks["drafted"] == [*NAMES, "risks"]
    assert with_risks["parsed"] == []
    # Content without the new field hashes as it did before the field existed.
    plain = with_risks["plain"]
    assert "risks" not in plain and plain["itemIds"] == {
        "decisions": [],
        "tasks": ["i1"],
        "openQuestions": [],
        "entities": [],
    }
    today = hashing.canonical_encoding(
        CheckpointContent("T", tasks=("t",), item_ids=ItemIds(tasks=("i1",))),
        space_id=1,
        parent_hash=None,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
        branch_name="main",
        author_agent="user",
    )
    assert plain == json.loads(today)
    assert with_risks["risky"]["risks"] == ["Flood"]
    # An export written before the field existed imports, the field empty, and
    # its checkpoints hash as they did.
    older = json.loads((ROOT / "tests/data/export-before-item-ids.json").read_text())
    imported = export_format.from_document(older).spaces[0].checkpoints
    assert with_risks["imported"] == [
        [
            [],
            hashing.checkpoint_hash(
                c.content,
                space_id=1,
                parent_hash=None,
                created_at=c.created_at,
                branch_name=c.branch_name,
                author_agent=c.author_agent,
            ),
        ]
        for c in imported
    ]
    assert with_risks["risky"]["itemIds"]["risks"] == ["i2"]


def test_an_added_list_field_reaches_every_graphql_type(with_risks: dict[str, Any]) -> None:
    schema = graphql_build_schema(with_risks["schema"])
    values = [*LIST_NAMES, "risks"]
    items = [*ITEM_NAMES, "riskItems"]

    def names(type_name: str) -> list[str]:
        graphql_type = schema.type_map[type_name]
        assert isinstance(graphql_type, GraphQLObjectType | GraphQLInputObjectType)
        return list(graphql_type.fields)

    shown = names("Checkpoint")
    start = shown.index("title")
    assert shown[start : start + 13] == ["title", "objective", "summary", *values, *items]
    assert names("CheckpointDraft")[:8] == [*NAMES, "risks"]
    assert names("CarriedState") == ["checkpoint", "objective", *values, *items]
    assert names("CreateCheckpointInput") == [
        "sessionId",
        *NAMES,
        "risks",
        *items,
        "sourceTurnRange",
    ]
    assert names("Comparison") == ["a", "b", *values, "commonAncestor"]
    assert names("MergePreview")[6:11] == values
    listed = schema.type_map["CheckpointListField"]
    assert isinstance(listed, GraphQLEnumType)
    assert list(listed.values) == [*MEMBERS, "RISKS"]
    checkpoint_type = schema.type_map["Checkpoint"]
    assert isinstance(checkpoint_type, GraphQLObjectType)
    assert checkpoint_type.fields["risks"].description == "What could go wrong."
    assert checkpoint_type.fields["riskItems"].description == (
        "`risks` with each item's identity (the same order)."
    )
    # The phrase "all four fields" counts them.
    merge_preview = schema.type_map["MergePreview"]
    assert isinstance(merge_preview, GraphQLObjectType)
    assert merge_preview.fields["conflictCount"].description == (
        "Conflicts over all five fields: how many are left to decide."
    )


def test_an_added_list_field_reaches_the_web_ui(
    with_risks: dict[str, Any], node: str, tmp_path: Path
) -> None:
    ui = ui_as_served(node, with_risks["ui"], tmp_path)
    assert ui["fields"] == [
        *TODAY_IN_THE_UI,
        {
            "name": "risks",
            "label": "Risks",
            "items": "riskItems",
            "member": "RISKS",
            "done": "Mitigated",
        },
    ]
    schema = graphql_build_schema(with_risks["schema"])
    for name in UI_DOCUMENTS:
        assert validate(schema, parse(ui["documents"][name])) == [], name
    compared = selected(ui["documents"]["COMPARE"], "compareCheckpoints")
    assert compared == ["a", "b", "commonAncestor", *LIST_NAMES, "risks"]
    merged = selected(ui["documents"]["PREVIEW_MERGE"], "previewMerge")
    assert [name for name in merged if name in {*LIST_NAMES, "risks"}] == [*LIST_NAMES, "risks"]
