"""A JSON export keeps a conversation's branches and how sessions are organised
(issue 21): imported again, the same alternatives on the same cells, one family,
the same pins, archives, tags and settings; checkpoints still verify; importing
it once more creates nothing; older exports (without these fields) still import."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.conversations import EDIT, REGENERATE, conversation, turn_id
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_space

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
EXPORT = """query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }"""
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } created errors { code message field } } }"""
ORGANISE = """mutation($input: UpdateSessionInput!) { updateSession(input: $input) {
  errors { code } } }"""
VERIFY = "query($s: ID!) { verifyLineage(spaceId: $s) { ok checked } }"
SETTINGS = "settings { instructions temperature topP maxOutputTokens stop }"
LIST = """query($s: ID!) { space(id: $s) { sessions(first: 20, archived: null) { edges { node { id } } } } }"""
READ = f"""query($id: ID!) {{ session(id: $id) {{
  id title createdAt pinned archived pinnedAt archivedAt tags familyId lastSequenceNumber
  {SETTINGS} branchedFrom {{ afterSequence session {{ id }} }}
  alternatives {{ sequenceNumber index count sessions {{ id }} }}
  turns(first: 20) {{ nodes {{ role content sequenceNumber }} }} }} }}"""


async def _read(gql: GraphQLClient, space: str) -> list[dict[str, Any]]:
    """The space's sessions oldest first, each session id replaced by its place
    in that order (ids differ between the original and the import)."""
    listed = (await gql(LIST, s=space))["space"]["sessions"]["edges"]
    nodes = [(await gql(READ, id=e["node"]["id"]))["session"] for e in listed]
    nodes.sort(key=lambda n: n["createdAt"])
    place = {n["id"]: i for i, n in enumerate(nodes)}
    for node in nodes:
        node["id"] = place[node["id"]]
        node["familyId"] = place[node["familyId"]]
        if node["branchedFrom"] is not None:
            origin = node["branchedFrom"].pop("session")
            node["branchedFrom"]["session"] = place[origin["id"]]
        for alternative in node["alternatives"]:
            alternative["sessions"] = [place[s["id"]] for s in alternative["sessions"]]
    return nodes


async def _organised_space(gql: GraphQLClient, fake: FakeOpenAI) -> tuple[str, str]:
    """A space with a conversation of three lines (regenerated at 4, edited at
    3), the branch pinned and tagged, another session archived, settings, and a
    checkpoint."""
    space = await create_space(gql, "Branched")
    origin = await conversation(gql, fake, 2, spaceId=space, title="Plans")
    await gql(ORGANISE, input={"id": origin, "settings": {"instructions": "Be brief."}})
    fake.reply("a2 again")
    regenerated = await gql(REGENERATE, input={"turnId": await turn_id(gql, origin, 4)})
    branch = regenerated["regenerate"]["session"]["id"]
    fake.reply("a2 edited")
    edited = await gql(
        EDIT, input={"turnId": await turn_id(gql, origin, 3), "content": "q2 edited"}
    )
    assert edited["editAndResend"]["errors"] == [], edited
    await gql(ORGANISE, input={"id": branch, "pinned": True, "tags": ["Travel", "food"]})
    other = await conversation(gql, fake, 1, spaceId=space, title="Old")
    await gql(ORGANISE, input={"id": other, "archived": True, "tags": ["old"]})
    await checkpoint(gql, origin, "Plans so far")
    return space, origin


async def test_export_and_import_keep_branches_organising_and_settings(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space, _ = await _organised_space(gql, fake_openai)
    before = await _read(gql, space)
    assert [(n["title"], n["familyId"], n["branchedFrom"]) for n in before] == [
        ("Plans", 0, None),
        ("Plans", 0, {"afterSequence": 3, "session": 0}),
        ("Plans", 0, {"afterSequence": 2, "session": 0}),
        ("Old", 3, None),
    ]
    assert [a for n in before for a in n["alternatives"]] == [
        {"sequenceNumber": 3, "index": 0, "count": 2, "sessions": [0, 2]},
        {"sequenceNumber": 4, "index": 0, "count": 2, "sessions": [0, 1]},
        # The regenerated branch shows the origin's question at 3.
        {"sequenceNumber": 3, "index": 0, "count": 2, "sessions": [0, 2]},
        {"sequenceNumber": 4, "index": 1, "count": 2, "sessions": [0, 1]},
        {"sequenceNumber": 3, "index": 1, "count": 2, "sessions": [0, 2]},
    ]
    assert [(n["pinned"], n["archived"], n["tags"]) for n in before] == [
        (False, False, []),
        (True, False, ["Travel", "food"]),
        (False, False, []),
        (False, True, ["old"]),
    ]
    text = (await gql(EXPORT, s=space))["exportSpace"]["document"]
    document = json.loads(text)
    jsonschema.validate(document, SCHEMA)
    exported = document["spaces"][0]["sessions"]
    assert [s["branchedFrom"] for s in exported] == [
        None,
        {"sessionId": exported[0]["id"], "afterSequence": 3},
        {"sessionId": exported[0]["id"], "afterSequence": 2},
        None,
    ]
    # The branch's shared turns are written in full: the file reads whole.
    assert [t["content"] for t in exported[1]["turns"]] == ["q1", "a1", "q2", "a2 again"]

    # Beside the original (another creation time: a new space).
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    again = json.dumps(document)
    imported = (await gql(IMPORT, d=again))["importSpace"]
    assert (imported["created"], imported["errors"]) == (1, [])
    copy_id = imported["spaces"][0]["id"]
    after = await _read(gql, copy_id)
    for node in before + after:
        node.pop("createdAt")  # equal, but written with the server's precision
    assert after == before
    assert (await gql(VERIFY, s=copy_id))["verifyLineage"] == {"ok": True, "checked": 1}

    once_more = (await gql(IMPORT, d=again))["importSpace"]
    assert (once_more["created"], once_more["spaces"]) == (0, [{"id": copy_id}])
    reread = await _read(gql, copy_id)
    for node in reread:
        node.pop("createdAt")
    assert reread == before


async def test_an_export_without_branches_imports_its_sessions_whole(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space, _ = await _organised_space(gql, fake_openai)
    document = json.loads((await gql(EXPORT, s=space))["exportSpace"]["document"])
    older = copy.deepcopy(document)
    older["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    for session in older["spaces"][0]["sessions"]:
        for key in ("pinnedAt", "archivedAt", "tags", "branchedFrom"):
            del session[key]
    imported = (await gql(IMPORT, d=json.dumps(older)))["importSpace"]
    assert imported["errors"] == []
    found = await _read(gql, imported["spaces"][0]["id"])
    assert [(n["familyId"], n["pinned"], n["tags"], n["alternatives"]) for n in found] == [
        (0, False, [], []),
        (1, False, [], []),
        (2, False, [], []),
        (3, False, [], []),
    ]
    assert [n["turns"]["nodes"][3]["content"] for n in found[:3]] == [
        "a2",
        "a2 again",
        "a2 edited",
    ]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda s: s[1]["branchedFrom"].update(sessionId=s[3]["id"]),
            "document.spaces[0].sessions[1].branchedFrom.sessionId",
            "must be the id of an earlier session of its list",
        ),
        (
            lambda s: s[1]["turns"][0].update(content="changed"),
            "document.spaces[0].sessions[1].turns",
            "must be the turns of its origin up to 3, unchanged",
        ),
        (
            lambda s: s[1]["branchedFrom"].update(afterSequence=5),
            "document.spaces[0].sessions[1].branchedFrom.afterSequence",
            "must be an integer from 0 to 4",
        ),
    ],
)
async def test_a_branch_that_does_not_match_its_origin_is_refused(
    gql: GraphQLClient, fake_openai: FakeOpenAI, change: Any, field: str, message: str
) -> None:
    space, _ = await _organised_space(gql, fake_openai)
    document = json.loads((await gql(EXPORT, s=space))["exportSpace"]["document"])
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    change(document["spaces"][0]["sessions"])
    imported = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert imported["created"] == 0
    [error] = imported["errors"]
    assert (error["code"], error["field"]) == ("INVALID", field)
    assert error["message"] == f"{field} {message}."
