"""A ChatGPT data export's conversations.json becomes sessions (its current branch, in order, the others branches of it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.graphql import GraphQLClient

FILE = Path(__file__).parents[1] / "data" / "chatgpt-conversations.json"
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } sessions { id title createdAt model
    turns(first: 20) { edges { node {
      sequenceNumber role content provider model createdAt replyToSequence } } } }
  created format branchesImported
  errors { code message field } } }"""


def turns(session: dict) -> list[dict]:  # type: ignore[type-arg]
    return [edge["node"] for edge in session["turns"]["edges"]]


async def test_each_conversation_becomes_a_session_of_its_current_branch(
    gql: GraphQLClient,
) -> None:
    result = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert (result["errors"], result["spaces"], result["created"]) == ([], [], 2)
    assert result["format"] == "CHATGPT"
    kyoto, empty = result["sessions"]
    # "And shoes?" and its answer, the branch the user left, become a branch of it
    # (tests/api/test_import_branches.py).
    assert result["branchesImported"] == 1
    assert (kyoto["title"], kyoto["createdAt"]) == (
        "Packing for Kyoto",
        "2024-05-01T12:00:00.500000+00:00",
    )
    assert kyoto["model"] == "offline/echo"
    assert turns(kyoto) == [
        {
            "sequenceNumber": 1,
            "role": "USER",
            "content": "What should I pack for Kyoto in May?",
            "provider": None,
            "model": None,
            "createdAt": "2024-05-01T12:00:01.250000+00:00",
            "replyToSequence": None,
        },
        {
            "sequenceNumber": 2,
            "role": "ASSISTANT",
            "content": "Light layers and a rain jacket.",
            "provider": "chatgpt",
            "model": "gpt-4o",
            "createdAt": "2024-05-01T12:00:05+00:00",
            "replyToSequence": 1,
        },
        {
            "sequenceNumber": 3,
            "role": "USER",
            "content": "And which temples first?",
            "provider": None,
            "model": None,
            "createdAt": "2024-05-01T12:03:20+00:00",
            "replyToSequence": None,
        },
        {
            "sequenceNumber": 4,
            "role": "ASSISTANT",
            "content": "Kiyomizu-dera, early.",
            "provider": "chatgpt",
            "model": "gpt-4o-mini",
            "createdAt": "2024-05-01T12:03:30+00:00",
            "replyToSequence": 3,
        },
    ]
    assert (empty["title"], turns(empty)) == ("Empty chat", [])
    again = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert (again["created"], again["branchesImported"]) == (0, 0)
    assert [s["id"] for s in again["sessions"]] == [kyoto["id"], empty["id"]]


async def test_a_broken_tree_is_refused_with_the_conversation_named(gql: GraphQLClient) -> None:
    document = json.loads(FILE.read_text())
    document[0]["mapping"]["a1"]["parent"] = "nowhere"
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert result["errors"] == [
        {
            "code": "INVALID",
            "message": "conversations[0].mapping must be a tree holding node 'nowhere'.",
            "field": "conversations[0].mapping",
        }
    ]
    assert result["sessions"] == []


def test_the_command_line_imports_it(database_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "api", "import", str(FILE), "--database", database_url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        'session 1 "Packing for Kyoto": imported\n'
        "  with 1 branch (edited messages or regenerated replies) as alternatives\n"
        'session 3 "Empty chat": imported\n'
    )
