"""A checkpoint's content fields are written once (api/domain/types.py) and every
layer holds exactly them: the domain value, the table, the hash, the export and
its JSON Schema, and the GraphQL types."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

from graphql import GraphQLInputObjectType, GraphQLObjectType

from api.domain import export_format, hashing
from api.domain.types import (
    CONTENT_FIELDS,
    CONTENT_LIST_FIELDS,
    CONTENT_TEXT_FIELDS,
    CheckpointContent,
    Space,
)
from api.graphql.schema import build_schema
from api.store import models
from tests.domain.builders import T0, checkpoint

ATTRS = [f.attr for f in CONTENT_FIELDS]
NAMES = [f.name for f in CONTENT_FIELDS]
LIST_NAMES = [f.name for f in CONTENT_LIST_FIELDS]
EXPORT_SCHEMA = json.loads((Path(__file__).parent.parent / "docs/export.schema.json").read_text())

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
    assert NAMES == [
        "title",
        "objective",
        "summary",
        "decisions",
        "tasks",
        "openQuestions",
        "entities",
    ]
    # The content fields, then the items' identities (not a field of their own).
    assert [f.name for f in dataclasses.fields(CheckpointContent)] == [*ATTRS, "item_ids"]
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
