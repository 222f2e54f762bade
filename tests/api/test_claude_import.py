"""A Claude data export's conversations.json becomes sessions: each the line
of its newest leaf, with every time, the attachments' text or a note, and the
other branches as conversation branches of it.

tests/data/claude-conversations.json is handmade in the export's format
(claude.ai: Settings → Privacy → Export data): a list of conversations
{uuid, name, summary, created_at, updated_at (ISO 8601, Z), account{uuid},
chat_messages: [{uuid, text, content: [{type: "text", text, start_timestamp,
stop_timestamp, citations} | {type: "tool_use", name, input} |
{type: "tool_result", …}], sender: "human" | "assistant", created_at,
updated_at, attachments: [{file_name, file_size, file_type,
extracted_content}], files: [{file_name}], parent_message_uuid}]}.
- "Sourdough starter": a tree (parent_message_uuid, the first message's
  parent the sentinel 00000000-0000-4000-8000-000000000000); the second
  question was edited, so a1 has two children: the newest leaf (a2b) wins;
  an attachment with its extracted text, one without (recipe.pdf), and an
  image in files (jar.jpg); a reply of text, tool_use and text blocks.
- "Haiku about rain": an older export, flat (no parent_message_uuid), with a
  reply of a tool_use only (left out) and one with only `text`.
- a conversation with no name and no messages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.graphql import GraphQLClient

FILE = Path(__file__).parents[1] / "data" / "claude-conversations.json"
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } sessions { id title createdAt updatedAt model
    turns(first: 20) { edges { node {
      sequenceNumber role content provider model createdAt replyToSequence } } } }
  created format branchesImported
  errors { code message field } } }"""
NOTE = "with 1 branch (edited messages or regenerated replies) as alternatives"


def turns(session: dict) -> list[dict]:  # type: ignore[type-arg]
    return [edge["node"] for edge in session["turns"]["edges"]]


def user(sequence: int, content: str, at: str) -> dict[str, object]:
    return {
        "sequenceNumber": sequence,
        "role": "USER",
        "content": content,
        "provider": None,
        "model": None,
        "createdAt": at,
        "replyToSequence": None,
    }


def reply(sequence: int, content: str, at: str) -> dict[str, object]:
    return {
        "sequenceNumber": sequence,
        "role": "ASSISTANT",
        "content": content,
        "provider": "claude",
        "model": None,
        "createdAt": at,
        "replyToSequence": sequence - 1,
    }


async def test_each_conversation_becomes_a_session_of_its_newest_line(
    gql: GraphQLClient,
) -> None:
    result = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert (result["errors"], result["spaces"], result["created"]) == ([], [], 3)
    assert result["format"] == "CLAUDE"
    sourdough, haiku, untitled = result["sessions"]
    assert result["branchesImported"] == 1  # the other line of "Sourdough starter"
    assert (sourdough["title"], sourdough["createdAt"], sourdough["updatedAt"]) == (
        "Sourdough starter",
        "2024-06-01T09:00:00+00:00",
        "2024-06-01T09:07:09.500000+00:00",
    )
    assert sourdough["model"] == "offline/echo"  # it goes on with the chat default
    assert turns(sourdough) == [
        user(
            1,
            "My starter smells of acetone. Is it dead?\n\n"
            "[attachment feeding-log.txt, its text as the export holds it]\n"
            "```\nDay 1: 50 g flour\nDay 2: skipped\n```\n\n"
            "[attachment jar.jpg not included in the export]",
            "2024-06-01T09:00:01.250000+00:00",
        ),
        reply(
            2,
            "Not dead: it is hungry.\n\nDiscard half and feed it twice a day.",
            "2024-06-01T09:00:10+00:00",
        ),
        user(
            3,
            "What temperature does it like?\n\n[attachment recipe.pdf not included in the export]",
            "2024-06-01T09:07:00+00:00",
        ),
        reply(4, "About 24 °C.", "2024-06-01T09:07:09.500000+00:00"),
    ]
    assert (haiku["title"], haiku["createdAt"]) == (
        "Haiku about rain",
        "2023-11-20T18:30:00+00:00",
    )
    assert turns(haiku) == [
        user(1, "A haiku about rain, please.", "2023-11-20T18:30:05+00:00"),
        reply(
            2,
            "Grey roofs drum softly\nthe gutters learn a new song\npuddles hold the sky",
            "2023-11-20T18:30:09+00:00",
        ),
    ]
    assert (untitled["title"], turns(untitled)) == ("Claude conversation", [])

    again = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert again["created"] == 0
    assert [s["id"] for s in again["sessions"]] == [s["id"] for s in result["sessions"]]
    assert again["branchesImported"] == 0


async def test_the_web_apps_current_leaf_wins_over_the_newest(gql: GraphQLClient) -> None:
    document = json.loads(FILE.read_text())[:1]
    document[0]["current_leaf_message_uuid"] = "a2a"
    [session] = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]["sessions"]
    assert [t["content"] for t in turns(session)][2:] == ["How much flour?", "50 g."]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda d: d[0].update(created_at="yesterday"),
            "conversations[0].created_at",
            "conversations[0].created_at must be an ISO 8601 time from 1970 to 9999.",
        ),
        (
            lambda d: d[0]["chat_messages"][1].update(created_at="0001-01-01T00:00:00Z"),
            "conversations[0].chat_messages[1].created_at",
            "conversations[0].chat_messages[1].created_at must be an ISO 8601 time "
            "from 1970 to 9999.",
        ),
        (
            lambda d: d[0]["chat_messages"][3].update(parent_message_uuid="lost"),
            "conversations[0].chat_messages",
            "conversations[0].chat_messages must be a tree holding node 'lost'.",
        ),
        (
            lambda d: d[0]["chat_messages"][0]["attachments"][0].update(extracted_content=7),
            "conversations[0].chat_messages[0].attachments[0].extracted_content",
            "conversations[0].chat_messages[0].attachments[0].extracted_content must be "
            "text (no NUL, no lone surrogate).",
        ),
        (
            lambda d: d[0]["chat_messages"][2].update(content="How much flour?"),
            "conversations[0].chat_messages[2].content",
            "conversations[0].chat_messages[2].content must be a list.",
        ),
        (
            lambda d: d[1]["chat_messages"][0].update(uuid=None),
            "conversations[1].chat_messages[0].uuid",
            "conversations[1].chat_messages[0].uuid must be a string.",
        ),
    ],
)
async def test_a_bad_field_is_refused_by_name_and_nothing_is_written(
    gql: GraphQLClient, change: object, field: str, message: str
) -> None:
    document = json.loads(FILE.read_text())
    change(document)  # type: ignore[operator]
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert result["errors"] == [{"code": "INVALID", "message": message, "field": field}]
    assert result["sessions"] == []
    listed = await gql("query { sessions(first: 5) { edges { node { id } } } }")
    assert listed["sessions"]["edges"] == []


def test_the_command_line_imports_it(database_url: str) -> None:
    def smriti(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "api", "import", str(FILE), "--database", database_url, *extra],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
        )

    done = smriti()
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f'session 1 "Sourdough starter": imported\n  {NOTE}\n'
        'session 3 "Haiku about rain": imported\n'
        'session 4 "Claude conversation": imported\n'
    )
    again = smriti("--json")
    assert again.returncode == 0, again.stderr
    printed = json.loads(again.stdout)
    assert (printed["format"], printed["spaces"]) == ("claude", [])
    assert [(s["number"], s["imported"], s["branches"]) for s in printed["sessions"]] == [
        (1, False, 0),
        (3, False, 0),
        (4, False, 0),
    ]
