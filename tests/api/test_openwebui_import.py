"""An Open WebUI chat export becomes sessions: each the line last shown
(``currentId``), with every time and model, files noted, other branches counted.

tests/data/openwebui-chat-export.json is handmade in the format of Open
WebUI's Settings → Chats → Export: a list of {id, user_id, title, chat,
updated_at, created_at (seconds), share_id, archived, pinned, meta{tags},
folder_id}; a chat is {id, title, models, params, history: {messages: {id:
{id, parentId, childrenIds, role: "user" | "assistant", content, timestamp
(seconds), model, modelName, models, files: [{type: "image", url} | {type:
"file", file{filename}, name, url}], usage, done}}, currentId}, messages:
[the current line again], tags, timestamp (milliseconds), files}.
- "Tomato blight": the first reply was regenerated with another model (a1 and
  a1b, both children of u1) and the chat went on from a1b; the question
  carried an image and a file; a time with a fraction of a second.
- "New Chat": archived, with no messages.
A chat's own export (Download → Export chat) is one such object, or the bare
chat; both are accepted too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.graphql import GraphQLClient

FILE = Path(__file__).parents[1] / "data" / "openwebui-chat-export.json"
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } sessions { id title createdAt updatedAt
    turns(first: 20) { edges { node {
      sequenceNumber role content provider model createdAt replyToSequence } } } }
  created format branchesImported
  errors { code message field } } }"""
BLIGHT = [
    {
        "sequenceNumber": 1,
        "role": "USER",
        "content": "Brown spots on my tomato leaves: what is it?\n\n"
        "[attachment (an image) not included in the export]\n\n"
        "[attachment garden-notes.md not included in the export]",
        "provider": None,
        "model": None,
        "createdAt": "2024-06-01T09:00:01+00:00",
        "replyToSequence": None,
    },
    {
        "sequenceNumber": 2,
        "role": "ASSISTANT",
        "content": "Early blight (Alternaria): remove the lower leaves.",
        "provider": "openwebui",
        "model": "mistral:7b",
        "createdAt": "2024-06-01T09:01:00+00:00",
        "replyToSequence": 1,
    },
    {
        "sequenceNumber": 3,
        "role": "USER",
        "content": "Should I spray?",
        "provider": None,
        "model": None,
        "createdAt": "2024-06-01T09:01:40.500000+00:00",
        "replyToSequence": None,
    },
    {
        "sequenceNumber": 4,
        "role": "ASSISTANT",
        "content": "Copper spray, in dry weather.",
        "provider": "openwebui",
        "model": "mistral:7b",
        "createdAt": "2024-06-01T09:01:47+00:00",
        "replyToSequence": 3,
    },
]


def turns(session: dict) -> list[dict]:  # type: ignore[type-arg]
    return [edge["node"] for edge in session["turns"]["edges"]]


async def test_each_chat_becomes_a_session_of_the_line_last_shown(gql: GraphQLClient) -> None:
    result = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert (result["errors"], result["spaces"], result["created"]) == ([], [], 2)
    assert result["format"] == "OPEN_WEBUI"
    blight, new = result["sessions"]
    assert result["branchesImported"] == 1  # the llama reply, as an alternative
    assert (blight["title"], blight["createdAt"], blight["updatedAt"]) == (
        "Tomato blight",
        "2024-06-01T09:00:00+00:00",
        "2024-06-01T09:01:50+00:00",
    )
    assert turns(blight) == BLIGHT
    assert (new["title"], new["createdAt"], turns(new)) == (
        "New Chat",
        "2024-06-02T03:46:40+00:00",
        [],
    )
    again = (await gql(IMPORT, d=FILE.read_text()))["importSpace"]
    assert (again["created"], [s["id"] for s in again["sessions"]]) == (
        0,
        [blight["id"], new["id"]],
    )


async def test_one_chats_export_and_a_bare_chat_are_accepted(gql: GraphQLClient) -> None:
    entry = json.loads(FILE.read_text())[0]
    one = (await gql(IMPORT, d=json.dumps(entry)))["importSpace"]
    assert (one["errors"], one["format"], one["created"]) == ([], "OPEN_WEBUI", 1)
    assert turns(one["sessions"][0]) == BLIGHT
    # The bare chat has no created_at: its timestamp (milliseconds) is the start.
    chat = {**entry["chat"], "title": "Blight, the chat alone"}
    bare = (await gql(IMPORT, d=json.dumps(chat)))["importSpace"]
    assert (bare["errors"], bare["created"]) == ([], 1)
    [session] = bare["sessions"]
    assert (session["title"], session["createdAt"], turns(session)) == (
        "Blight, the chat alone",
        "2024-06-01T09:00:00+00:00",
        BLIGHT,
    )
    assert bare["branchesImported"] == 1


async def test_a_chat_with_only_its_linear_messages_is_that_line(gql: GraphQLClient) -> None:
    chat = json.loads(FILE.read_text())[0]["chat"]
    del chat["history"]
    result = (await gql(IMPORT, d=json.dumps(chat)))["importSpace"]
    assert result["errors"] == []
    assert [t["content"] for t in turns(result["sessions"][0])] == [
        "Brown spots on my tomato leaves: what is it?",
        "Early blight (Alternaria): remove the lower leaves.",
        "Should I spray?",
        "Copper spray, in dry weather.",
    ]
    assert result["branchesImported"] == 0


def _at(path: str, value: Any) -> Any:
    def change(document: Any) -> None:
        *head, last = path.split("/")
        target = document
        for part in head:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value

    return change


MESSAGES = "chats[0].chat.history.messages"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            _at("0/chat/history/messages/u2/timestamp", 1e20),
            f"{MESSAGES}.u2.timestamp",
            f"{MESSAGES}.u2.timestamp must be a time in seconds from 1970 to 9999.",
        ),
        (
            _at("0/created_at", "today"),
            "chats[0].created_at",
            "chats[0].created_at must be a time in seconds from 1970 to 9999.",
        ),
        (
            _at("0/chat/history/messages/a2/parentId", "u9"),
            MESSAGES,
            f"{MESSAGES} must be a tree holding node 'u9'.",
        ),
        (
            _at("0/chat/history/messages/a2/model", ["mistral:7b"]),
            f"{MESSAGES}.a2.model",
            f"{MESSAGES}.a2.model must be a string.",
        ),
        (
            _at("0/chat/history/messages/u1/files", {"name": "x"}),
            f"{MESSAGES}.u1.files",
            f"{MESSAGES}.u1.files must be a list.",
        ),
        (
            _at("1/chat", {"title": "no history"}),
            "document",
            "This document is none of the formats Smriti imports: a Smriti JSON export, "
            "the conversations.json of a ChatGPT or a Claude data export, or an Open WebUI "
            "chat export.",
        ),
    ],
)
async def test_a_bad_field_is_refused_by_name_and_nothing_is_written(
    gql: GraphQLClient, change: Any, field: str, message: str
) -> None:
    document = json.loads(FILE.read_text())
    change(document)
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert result["errors"] == [{"code": "INVALID", "message": message, "field": field}]
    assert (result["sessions"], result["format"]) == ([], None)
    listed = await gql("query { sessions(first: 5) { edges { node { id } } } }")
    assert listed["sessions"]["edges"] == []


@pytest.mark.parametrize("document", [[1, 2], {"title": "a note"}, "text", []])
async def test_a_document_of_no_accepted_format_names_the_formats(
    gql: GraphQLClient, document: Any
) -> None:
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert result["errors"] == [
        {
            "code": "INVALID",
            "message": "This document is none of the formats Smriti imports: a Smriti JSON "
            "export, the conversations.json of a ChatGPT or a Claude data export, or an Open "
            "WebUI chat export.",
            "field": "document",
        }
    ]


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
        'session 1 "Tomato blight": imported\n'
        "  with 1 branch (edited messages or regenerated replies) as alternatives\n"
        'session 3 "New Chat": imported\n'
    )
