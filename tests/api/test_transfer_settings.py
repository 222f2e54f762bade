"""Settings survive export and import: a space's defaults, a session's own,
and on each reply those it was asked with; older exports, without them, still
import; settings out of bounds are refused with the path at fault."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, create_space, send

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
EXPORT = """query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }"""
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } created errors { code message field } } }"""
UPDATE_SESSION = """mutation($input: UpdateSessionInput!) { updateSession(input: $input) {
  errors { code } } }"""
UPDATE_SPACE = """mutation($input: UpdateSpaceInput!) { updateSpace(input: $input) {
  errors { code } } }"""
ALL = "settings { instructions temperature topP maxOutputTokens stop }"
READ = f"""query($s: ID!) {{ space(id: $s) {{ {ALL} sessions(first: 10) {{ edges {{ node {{
  {ALL} turns(first: 10) {{ edges {{ node {{ role {ALL} }} }} }} }} }} }} }} }}"""
NONE = dict.fromkeys(("instructions", "temperature", "topP", "maxOutputTokens", "stop"))


async def space_with_settings(gql: GraphQLClient) -> str:
    space = await create_space(gql, "Tuned")
    sid = (await create_session(gql, spaceId=space))["id"]
    await gql(UPDATE_SPACE, input={"id": space, "settings": {"instructions": "Be brief."}})
    await gql(UPDATE_SESSION, input={"id": sid, "settings": {"temperature": 0.4, "stop": ["#"]}})
    await send(gql, sid, "hello")
    return space


async def read(gql: GraphQLClient, space: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(READ, s=space))["space"]
    return found


async def document_of(gql: GraphQLClient, space: str) -> dict[str, Any]:
    text = (await gql(EXPORT, s=space))["exportSpace"]["document"]
    document: dict[str, Any] = json.loads(text)
    return document


async def import_(gql: GraphQLClient, document: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    return result


async def test_settings_are_exported_and_imported(gql: GraphQLClient) -> None:
    space = await space_with_settings(gql)
    original = await read(gql, space)
    assert original["settings"] == {**NONE, "instructions": "Be brief."}
    session = original["sessions"]["edges"][0]["node"]
    assert session["settings"] == {**NONE, "temperature": 0.4, "stop": ["#"]}
    asked = {**NONE, "instructions": "Be brief.", "temperature": 0.4, "stop": ["#"]}
    assert [(t["node"]["role"], t["node"]["settings"]) for t in session["turns"]["edges"]] == [
        ("USER", None),
        ("ASSISTANT", asked),
    ]
    document = await document_of(gql, space)
    jsonschema.validate(document, SCHEMA)
    exported_space = document["spaces"][0]
    assert exported_space["settings"] == {"instructions": "Be brief."}
    assert exported_space["sessions"][0]["turns"][1]["settings"] == {
        "instructions": "Be brief.",
        "temperature": 0.4,
        "stop": ["#"],
    }
    # Imported beside the original (another creation time: a new space).
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"

    imported = await import_(gql, document)

    assert imported["errors"] == [], imported
    copied = [s["id"] for s in imported["spaces"]]
    assert len(copied) == 1
    assert await read(gql, copied[0]) == original


async def test_an_export_without_settings_imports_with_none(gql: GraphQLClient) -> None:
    space = await space_with_settings(gql)
    document = await document_of(gql, space)
    older = copy.deepcopy(document)
    item = older["spaces"][0]
    del item["settings"]
    for session in item["sessions"]:
        del session["settings"]
        for turn in session["turns"]:
            del turn["settings"]
    jsonschema.validate(older, SCHEMA)
    await gql("mutation($id: ID!) { deleteSpace(input: {id: $id}) { deletedId } }", id=space)

    imported = await import_(gql, older)

    assert imported["errors"] == [], imported
    found = await read(gql, imported["spaces"][0]["id"])
    assert found["settings"] == NONE
    session = found["sessions"]["edges"][0]["node"]
    assert session["settings"] == NONE
    assert [t["node"]["settings"] for t in session["turns"]["edges"]] == [None, None]


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"temperature": 3}, "temperature"),
        ({"topP": "high"}, "topP"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"colour": "blue"}, "colour"),
    ],
)
async def test_settings_out_of_bounds_are_refused_with_the_path(
    gql: GraphQLClient, given: dict[str, Any], field: str
) -> None:
    space = await space_with_settings(gql)
    document = await document_of(gql, space)
    document["spaces"][0]["sessions"][0]["turns"][1]["settings"] = given
    await gql("mutation($id: ID!) { deleteSpace(input: {id: $id}) { deletedId } }", id=space)

    refused = await import_(gql, document)

    assert refused["spaces"] == []
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [
        (
            "OUT_OF_RANGE" if field in ("temperature", "stop") else "INVALID",
            f"document.spaces[0].sessions[0].turns[1].settings.{field}",
        )
    ]
