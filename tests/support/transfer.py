"""The export and import documents of a space through GraphQL, and the export format's
JSON Schema: for the tests of exports, imports and verification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.graphql import GraphQLClient

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
EXPORT = """query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) {
  document mediaType fileName } }"""
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id name } sessions { id } created errors { code message field } } }"""
VERIFY = "query($s: ID!) { verifyLineage(spaceId: $s) { ok checked } }"


async def export_document(gql: GraphQLClient, space: str) -> dict[str, Any]:
    exported = (await gql(EXPORT, s=space))["exportSpace"]
    assert exported["mediaType"] == "application/json"
    document: dict[str, Any] = json.loads(exported["document"])
    # saved under the space's name (each space here has a plain one)
    assert exported["fileName"] == f"{document['spaces'][0]['name']}.json"
    return document
