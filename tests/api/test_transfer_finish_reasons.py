"""Why replies ended survives export and import; older exports, without it, still import.

The session is made for real against the OpenAI-format stub: a reply the token
limit cut off, its continuation, and a reply that ended for a reason LiteLLM
does not know. Importing the export beside the original (another creation time)
keeps every turn's finishReason, providerFinishReason and continuesSequence,
and the checkpoint hashes still verify.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
EXPORT = """query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }"""
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } created errors { code message field } } }"""
VERIFY = "query($s: ID!) { verifyLineage(spaceId: $s) { ok checked } }"
SEND = """mutation($input: SendMessageInput!) { sendMessage(input: $input) {
  assistantTurn { id } errors { code } } }"""
CONTINUE = """mutation($t: ID!) { continueReply(input: {turnId: $t}) {
  continuation { id } errors { code } } }"""
TURNS = """query($s: ID!) { space(id: $s) { sessions(first: 10) { edges { node {
  turns(first: 10) { edges { node {
    sequenceNumber interrupted finishReason providerFinishReason continuesSequence
  } } } } } } } }"""
# (sequenceNumber, interrupted, finishReason, providerFinishReason, continuesSequence)
ENDINGS = [
    (1, False, None, None, None),
    (2, True, "LENGTH", None, None),
    (3, False, "STOP", None, 2),
    (4, False, None, None, None),
    (5, False, "OTHER", "quota_paused", None),
]
LATER_FIELDS = ("finishReason", "providerFinishReason", "continuesSequence")


async def space_with_endings(gql: GraphQLClient, fake_openai: FakeOpenAI) -> str:
    space = await create_space(gql, "Kyoto")
    sid = (await create_session(gql, spaceId=space, model="lab/my-model"))["id"]
    fake_openai.reply("Kyoto was the capital", finish="length")
    cut = (await gql(SEND, input={"sessionId": sid, "content": "Kyoto?"}))["sendMessage"]
    fake_openai.reply(" for a thousand years.")
    continued = (await gql(CONTINUE, t=cut["assistantTurn"]["id"]))["continueReply"]
    assert continued["errors"] == []
    fake_openai.reply("Paused.", finish="quota_paused")
    await gql(SEND, input={"sessionId": sid, "content": "And Nara?"})
    await checkpoint(gql, sid, "Kansai")
    return space


async def endings(gql: GraphQLClient, space: str) -> list[tuple[Any, ...]]:
    [session] = (await gql(TURNS, s=space))["space"]["sessions"]["edges"]
    return [
        (
            t["sequenceNumber"],
            t["interrupted"],
            t["finishReason"],
            t["providerFinishReason"],
            t["continuesSequence"],
        )
        for t in (edge["node"] for edge in session["node"]["turns"]["edges"])
    ]


async def exported(gql: GraphQLClient, space: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((await gql(EXPORT, s=space))["exportSpace"]["document"])
    return document


async def imported_beside(gql: GraphQLClient, document: dict[str, Any]) -> str:
    """Import ``document`` as another space (another creation time); its id."""
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert (result["created"], result["errors"]) == (1, []), result
    copy_id: str = result["spaces"][0]["id"]
    return copy_id


async def test_finish_reasons_and_continuations_survive_export_and_import(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await space_with_endings(gql, fake_openai)
    assert await endings(gql, space) == ENDINGS

    document = await exported(gql, space)
    jsonschema.validate(document, SCHEMA)
    turns = document["spaces"][0]["sessions"][0]["turns"]
    assert [tuple(t[k] for k in LATER_FIELDS) for t in turns] == [
        (reason, word, continues) for _, _, reason, word, continues in ENDINGS
    ]
    copy_id = await imported_beside(gql, document)

    assert await endings(gql, copy_id) == ENDINGS
    assert (await gql(VERIFY, s=copy_id))["verifyLineage"] == {"ok": True, "checked": 1}


async def test_an_export_from_before_finish_reasons_still_imports_and_verifies(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await space_with_endings(gql, fake_openai)
    document = await exported(gql, space)
    for turn in document["spaces"][0]["sessions"][0]["turns"]:
        for key in LATER_FIELDS:
            del turn[key]
    jsonschema.validate(document, SCHEMA)

    copy_id = await imported_beside(gql, document)

    assert await endings(gql, copy_id) == [
        (sequence, interrupted, None, None, None) for sequence, interrupted, *_ in ENDINGS
    ]
    assert (await gql(VERIFY, s=copy_id))["verifyLineage"] == {"ok": True, "checked": 1}


@pytest.mark.parametrize(
    ("index", "change", "field", "expected"),
    [
        (1, {"interrupted": False}, "interrupted", "true when finishReason is LENGTH"),
        (2, {"interrupted": True}, "interrupted", "false when finishReason is STOP"),
        (0, {"finishReason": "STOP"}, "finishReason", "null for a USER turn"),
        (
            1,
            {"finishReason": "TRUNCATED"},
            "finishReason",
            "one of STOP, LENGTH, CONTENT_FILTER, TOOL_CALLS, INTERRUPTED, LOST_CONNECTION, "
            "OTHER, or null",
        ),
        (
            2,
            {"providerFinishReason": "end_turn"},
            "providerFinishReason",
            "null unless finishReason is OTHER",
        ),
        (4, {"providerFinishReason": "x" * 101}, "providerFinishReason", "at most 100 characters"),
        (2, {"continuesSequence": 3}, "continuesSequence", "below sequenceNumber"),
    ],
)
async def test_a_turn_whose_ending_does_not_hold_together_is_refused_whole(
    gql: GraphQLClient,
    fake_openai: FakeOpenAI,
    index: int,
    change: dict[str, Any],
    field: str,
    expected: str,
) -> None:
    space = await space_with_endings(gql, fake_openai)
    document = copy.deepcopy(await exported(gql, space))
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    document["spaces"][0]["sessions"][0]["turns"][index].update(change)

    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]

    path = f"document.spaces[0].sessions[0].turns[{index}].{field}"
    assert (result["created"], result["errors"]) == (
        0,
        [{"code": "INVALID", "message": f"{path} must be {expected}.", "field": path}],
    )


async def test_a_reply_continued_twice_is_refused(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await space_with_endings(gql, fake_openai)
    document = await exported(gql, space)
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    document["spaces"][0]["sessions"][0]["turns"][4]["continuesSequence"] = 2

    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]

    path = "document.spaces[0].sessions[0].turns"
    assert result["errors"] == [
        {
            "code": "INVALID",
            "message": f"{path} must be without a repeated continuesSequence.",
            "field": path,
        }
    ]
