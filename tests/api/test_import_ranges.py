"""Every number (and every other value) an import can carry is checked before
anything is written: a bad document is a typed INVALID naming the place in the
file, through importSpace and through `smriti import`, and no row is written.

Each case is one document, one exact error. `in_schema` says whether
docs/export.schema.json refuses it too (it cannot say "equal to the highest
sequence number", nor nesting depth beyond its own shape, nor NUL).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from api.domain.hashing import checkpoint_hash
from api.domain.types import CheckpointContent
from api.store import models
from tests.support.graphql import GraphQLClient
from tests.support.ops import send

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  spaces { id } sessions { id lastSequenceNumber } created errors { code message field } } }"""
SESSIONS = """query { sessions(first: 50) { edges { node { id lastSequenceNumber
  turns(first: 10) { edges { node { sequenceNumber usage { promptTokens } } } } } } } }"""

T = "2024-05-01T12:00:00.000000Z"
CREATED = datetime(2024, 5, 1, 12, 0, 5, tzinfo=UTC)
INT_MAX = 2**31 - 1
ID_MAX = 2**63 - 1
SESSION = "document.spaces[0].sessions[0]"
TURN = f"{SESSION}.turns[1]"
CHECKPOINT = "document.spaces[0].checkpoints[0]"


def _turn(sequence: int, role: str) -> dict[str, Any]:
    return {
        "id": 100 + sequence,
        "sequenceNumber": sequence,
        "role": role,
        "content": f"turn {sequence}",
        "provider": "offline" if role == "ASSISTANT" else None,
        "model": "echo" if role == "ASSISTANT" else None,
        "tokenCount": 3,
        "promptTokens": 10 if role == "ASSISTANT" else None,
        "completionTokens": 3 if role == "ASSISTANT" else None,
        "cost": 0.5 if role == "ASSISTANT" else None,
        "interrupted": False,
        "replyToSequence": sequence - 1 if role == "ASSISTANT" else None,
        "idempotencyKey": None,
        "createdAt": T,
    }


def _session(session_id: int, turns: int, *, mount: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": session_id,
        "title": f"Session {session_id}",
        "branchName": "main",
        "activeProvider": "offline",
        "activeModel": "echo",
        "seededFromId": None,
        "forkedFromId": None,
        "memoryScope": "LATEST_1",
        "mount": mount,
        "lastSequenceNumber": turns,
        "createdAt": T,
        "updatedAt": T,
        "turns": [_turn(s, "USER" if s % 2 else "ASSISTANT") for s in range(1, turns + 1)],
    }


def good_document() -> dict[str, Any]:
    """One space (a checkpoint, its branch, a session mounting it) and one
    session in no space: every kind of number the format has."""
    content = CheckpointContent(title="C0", decisions=("d",))
    digest = checkpoint_hash(
        content,
        space_id=900,
        parent_hash=None,
        created_at=CREATED,
        branch_name="main",
        author_agent="user",
    )
    checkpoint = {
        "id": 7,
        "hash": digest,
        "parentId": None,
        "mergeParentId": None,
        "branchName": "main",
        "title": "C0",
        "objective": "",
        "summary": "",
        "decisions": ["d"],
        "tasks": [],
        "openQuestions": [],
        "entities": [],
        "authorAgent": "user",
        "sourceSessionId": 31,
        "sourceTurnRange": {"first": 1, "last": 2},
        "baseSequence": 2,
        "createdAt": "2024-05-01T12:00:05.000000Z",
    }
    return {
        "format": "smriti-export",
        "version": 1,
        "exportedAt": T,
        "spaces": [
            {
                "id": 900,
                "hashSpaceId": 900,
                "name": "Ranges",
                "description": "",
                "createdAt": T,
                "updatedAt": T,
                "branches": [{"name": "main", "headId": 7, "createdAt": T, "updatedAt": T}],
                "checkpoints": [checkpoint],
                "sessions": [_session(31, 2, mount={"checkpointId": 7, "baseSequence": 2})],
            }
        ],
        "sessions": [_session(32, 1)],
    }


def chatgpt_document() -> list[dict[str, Any]]:
    """A ChatGPT conversations.json with one conversation of one message."""
    message = {
        "author": {"role": "user"},
        "content": {"parts": ["hi"]},
        "create_time": 1714564801.0,
        "metadata": {"model_slug": "gpt-4o"},
    }
    return [
        {
            "title": "Chat",
            "create_time": 1714564800.0,
            "update_time": 1714564900.0,
            "current_node": "b",
            "mapping": {
                "a": {"message": None, "parent": None, "children": ["b"]},
                "b": {"message": message, "parent": "a", "children": []},
            },
        }
    ]


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@dataclass(frozen=True)
class Case:
    name: str
    change: Callable[[dict[str, Any]], None]
    field: str
    message: str
    in_schema: bool = True
    # Applied to the JSON text (for what a dict cannot hold: 1e400, 5,000 digits).
    text: Callable[[str], str] | None = None
    # The document changed: a Smriti export, or a ChatGPT conversations.json.
    base: Callable[[], Any] = lambda: good_document()


def at(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set ``value`` at a dotted path with [i] indexes, relative to the document."""

    def change(document: dict[str, Any]) -> None:
        parts = path.replace("[", ".").replace("]", "").split(".")
        target: Any = document
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        last = parts[-1]
        target[int(last) if last.isdigit() else last] = value

    return change


def _range(path: str, low: int = 0, high: int = INT_MAX) -> str:
    return f"{path} must be an integer from {low} to {high}."


DEEP = f"{SESSION}.turns[0].content" + "[0]" * 57  # the 65th level
RANGES = [
    Case(
        "lastSequenceNumber 2^63-1",
        at("spaces[0].sessions[0].lastSequenceNumber", ID_MAX),
        f"{SESSION}.lastSequenceNumber",
        _range(f"{SESSION}.lastSequenceNumber"),
    ),
    Case(
        "lastSequenceNumber 2^31-1 (an Int, but the next send overflows)",
        at("spaces[0].sessions[0].lastSequenceNumber", INT_MAX),
        f"{SESSION}.lastSequenceNumber",
        f"{SESSION}.lastSequenceNumber must be 2, the highest sequenceNumber of its turns.",
        in_schema=False,
    ),
    Case(
        "tokenCount 10^40",
        at("spaces[0].sessions[0].turns[1].tokenCount", 10**40),
        f"{TURN}.tokenCount",
        _range(f"{TURN}.tokenCount"),
    ),
    Case(
        "promptTokens 2^64",
        at("spaces[0].sessions[0].turns[1].promptTokens", 2**64),
        f"{TURN}.promptTokens",
        _range(f"{TURN}.promptTokens"),
    ),
    Case(
        "completionTokens -1",
        at("spaces[0].sessions[0].turns[1].completionTokens", -1),
        f"{TURN}.completionTokens",
        _range(f"{TURN}.completionTokens"),
    ),
    Case(
        "a 5,000-digit tokenCount",
        at("spaces[0].sessions[0].turns[1].tokenCount", 123456789),
        f"{TURN}.tokenCount",
        _range(f"{TURN}.tokenCount"),
        text=lambda t: t.replace("123456789", "9" * 5000),
    ),
    Case(
        "sequenceNumber 2^31",
        at("spaces[0].sessions[0].turns[1].sequenceNumber", 2**31),
        f"{TURN}.sequenceNumber",
        _range(f"{TURN}.sequenceNumber", 1),
    ),
    Case(
        "replyToSequence 0",
        at("spaces[0].sessions[0].turns[1].replyToSequence", 0),
        f"{TURN}.replyToSequence",
        _range(f"{TURN}.replyToSequence", 1),
    ),
    Case(
        "turn id 2^64",
        at("spaces[0].sessions[0].turns[1].id", 2**64),
        f"{TURN}.id",
        _range(f"{TURN}.id", 1, ID_MAX),
    ),
    Case(
        "hashSpaceId 2^63",
        at("spaces[0].hashSpaceId", 2**63),
        "document.spaces[0].hashSpaceId",
        _range("document.spaces[0].hashSpaceId", 1, ID_MAX),
    ),
    Case(
        "a mount past the last turn",
        at("spaces[0].sessions[0].mount.baseSequence", 3),
        f"{SESSION}.mount.baseSequence",
        _range(f"{SESSION}.mount.baseSequence", 0, 2),
        in_schema=False,
    ),
    Case(
        "checkpoint baseSequence 2^40",
        at("spaces[0].checkpoints[0].baseSequence", 2**40),
        f"{CHECKPOINT}.baseSequence",
        _range(f"{CHECKPOINT}.baseSequence"),
    ),
    Case(
        "sourceTurnRange backwards",
        at("spaces[0].checkpoints[0].sourceTurnRange", {"first": 2, "last": 1}),
        f"{CHECKPOINT}.sourceTurnRange.last",
        f"{CHECKPOINT}.sourceTurnRange.last must be at least first (2).",
        in_schema=False,
    ),
    Case(
        "cost NaN",
        at("spaces[0].sessions[0].turns[1].cost", float("nan")),
        f"{TURN}.cost",
        f"{TURN}.cost must be a number from 0 to 1e+09.",
        in_schema=False,  # NaN compares false with any bound
    ),
    Case(
        "cost Infinity",
        at("spaces[0].sessions[0].turns[1].cost", float("inf")),
        f"{TURN}.cost",
        f"{TURN}.cost must be a number from 0 to 1e+09.",
    ),
    Case(
        "cost 1e400",
        at("spaces[0].sessions[0].turns[1].cost", 0.123456),
        f"{TURN}.cost",
        f"{TURN}.cost must be a number from 0 to 1e+09.",
        text=lambda t: t.replace("0.123456", "1e400"),
    ),
    Case(
        "cost -0.5",
        at("spaces[0].sessions[0].turns[1].cost", -0.5),
        f"{TURN}.cost",
        f"{TURN}.cost must be a number from 0 to 1e+09.",
    ),
    Case(
        "a time as the number 1e20",
        at("spaces[0].sessions[0].turns[1].createdAt", 1e20),
        f"{TURN}.createdAt",
        f"{TURN}.createdAt must be a string.",
    ),
    Case(
        "a time before 1970",
        at("spaces[0].createdAt", "1969-12-31T23:59:59.000000Z"),
        "document.spaces[0].createdAt",
        "document.spaces[0].createdAt must be a time from 1970 to 9999.",
    ),
    Case(
        "a time that overflows in UTC",
        at("sessions[0].updatedAt", "0001-01-01T00:00:00+01:00"),
        "document.sessions[0].updatedAt",
        "document.sessions[0].updatedAt must be an ISO 8601 time.",
    ),
    Case(
        "content NUL",
        at("sessions[0].turns[0].content", "a\u0000b"),
        "document.sessions[0].turns[0].content",
        "document.sessions[0].turns[0].content must be text (no NUL, no lone surrogate).",
        in_schema=False,
    ),
    Case(
        "nested 100 deep",
        at("spaces[0].sessions[0].turns[0].content", nested(100)),
        DEEP,
        f"{DEEP} must be at most 64 levels deep.",
    ),
    Case(
        "nested 100,000 deep (past the parser's own limit)",
        at("spaces[0].sessions[0].turns[0].content", "DEEP"),
        DEEP,
        f"{DEEP} must be at most 64 levels deep.",
        in_schema=False,  # jsonschema cannot read it either
        text=lambda t: t.replace('"DEEP"', "[" * 100_000 + "]" * 100_000),
    ),
]


MESSAGE = "conversations[0].mapping.b.message"
SECONDS = "must be a time in seconds from 1970 to 9999."
CHATGPT = [
    Case(
        "ChatGPT: author a string",
        at("0.mapping.b.message.author", "user"),
        f"{MESSAGE}.author",
        f"{MESSAGE}.author must be an object.",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: metadata a list",
        at("0.mapping.b.message.metadata", []),
        f"{MESSAGE}.metadata",
        f"{MESSAGE}.metadata must be an object.",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: model_slug a number",
        at("0.mapping.b.message.metadata.model_slug", 5),
        f"{MESSAGE}.metadata.model_slug",
        f"{MESSAGE}.metadata.model_slug must be a string.",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: create_time 1e20",
        at("0.create_time", 1e20),
        "conversations[0].create_time",
        f"conversations[0].create_time {SECONDS}",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: a message's create_time NaN",
        at("0.mapping.b.message.create_time", float("nan")),
        f"{MESSAGE}.create_time",
        f"{MESSAGE}.create_time {SECONDS}",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: update_time -Infinity",
        at("0.update_time", float("-inf")),
        "conversations[0].update_time",
        f"conversations[0].update_time {SECONDS}",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: title an object",
        at("0.title", {"text": "Chat"}),
        "conversations[0].title",
        "conversations[0].title must be a string.",
        base=chatgpt_document,
    ),
    Case(
        "ChatGPT: nested 100,000 deep",
        at("0.mapping.b.message.content", "DEEP"),
        "conversations[0].mapping.b.message.content" + "[0]" * 59,
        "conversations[0].mapping.b.message.content"
        + "[0]" * 59
        + " must be at most 64 levels deep.",
        text=lambda t: t.replace('"DEEP"', "[" * 100_000 + "]" * 100_000),
        base=chatgpt_document,
    ),
]


def bad_text(case: Case) -> str:
    document = case.base()
    case.change(document)
    text = json.dumps(document)
    return case.text(text) if case.text else text


async def row_counts() -> dict[str, int]:
    return {
        name: await model.all().count()
        for name, model in (
            ("space", models.Space),
            ("member", models.SpaceMember),
            ("session", models.Session),
            ("turn", models.Turn),
            ("checkpoint", models.Checkpoint),
            ("branch", models.Branch),
        )
    }


def test_the_good_document_matches_the_schema() -> None:
    jsonschema.validate(good_document(), SCHEMA)


# Every case but the one no validator can read: 100,000 levels of nesting are
# past any JSON parser's recursion (Python's raises RecursionError), so what
# refuses it is the import's own reader, tested by the cases below.
SCHEMA_CASES = [c for c in RANGES if c.name != "nested 100,000 deep (past the parser's own limit)"]


@contextlib.contextmanager
def big_numbers() -> Iterator[None]:
    """Integers of any length, as a validator reads them from a file (Python
    limits int <-> text to 4,300 digits; a 5,000-digit number is a case)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(limit)


def test_every_case_but_the_deepest_is_checked_against_the_schema() -> None:
    assert len(RANGES) - len(SCHEMA_CASES) == 1


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c.name for c in SCHEMA_CASES])
def test_the_schema_refuses_what_it_can_say(case: Case) -> None:
    with big_numbers():  # the document parsed from its text: 1e400 is infinity
        document = json.loads(bad_text(case))
        if case.in_schema:
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(document, SCHEMA)
        else:
            jsonschema.validate(document, SCHEMA)


async def test_a_bad_number_is_refused_by_name_and_writes_nothing(gql: GraphQLClient) -> None:
    before = await row_counts()
    for case in [*RANGES, *CHATGPT]:
        result = (await gql(IMPORT, d=bad_text(case)))["importSpace"]
        assert (case.name, result["errors"]) == (
            case.name,
            [{"code": "INVALID", "message": case.message, "field": case.field}],
        )
        assert (result["spaces"], result["created"]) == ([], 0)
    assert await row_counts() == before


async def test_the_good_document_imports_and_goes_on(gql: GraphQLClient) -> None:
    result = (await gql(IMPORT, d=json.dumps(good_document())))["importSpace"]
    assert (result["errors"], result["created"]) == ([], 2)
    assert await row_counts() == {
        "space": 1,
        "member": 1,
        "session": 2,
        "turn": 3,
        "checkpoint": 1,
        "branch": 1,
    }
    listed = (await gql(SESSIONS))["sessions"]["edges"]
    assert sorted(e["node"]["lastSequenceNumber"] for e in listed) == [1, 2]
    [alone] = result["sessions"]
    sent = await send(gql, alone["id"], "still here?")
    assert sent["userTurn"]["sequenceNumber"] == 2


def smriti_import(file: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", "import", str(file), "--database", database_url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )


# The command line reads the file and calls the same service: a few cases show it
# reports the same error (each case is a process of its own).
CLI_CASES = [
    c
    for c in [*RANGES, *CHATGPT]
    if c.name
    in {
        "lastSequenceNumber 2^63-1",
        "tokenCount 10^40",
        "turn id 2^64",
        "cost NaN",
        "nested 100,000 deep (past the parser's own limit)",
        "ChatGPT: author a string",
        "ChatGPT: create_time 1e20",
    }
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
async def test_the_command_line_refuses_it_the_same_way(
    gql: GraphQLClient, tmp_path: Path, database_url: str, case: Case
) -> None:
    before = await row_counts()
    file = tmp_path / "bad.json"
    file.write_text(bad_text(case))
    refused = smriti_import(file, database_url)
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2,
        "",
        f"smriti: {case.message.rstrip('.')} (at {case.field}).\n",
    )
    assert await row_counts() == before
