"""Every text and list input is bounded and checked before anything is written.

Each refusal is the mutation's typed error (code, message, field); text that
PostgreSQL cannot store (NUL) is refused the same way on both databases.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from starlette.applications import Starlette

from tests.support.graphql import GraphQLClient
from tests.support.ops import ERRORS, PREVIEW, create_session, create_space, send
from tests.support.streams import stream_ws

NOT_TEXT = "contains characters that are not valid text (NUL or a lone surrogate)."

CREATE_SPACE = f"""mutation($input: CreateSpaceInput!) {{
  createSpace(input: $input) {{ space {{ id }} {ERRORS} }} }}"""
UPDATE_SPACE = f"""mutation($input: UpdateSpaceInput!) {{
  updateSpace(input: $input) {{ space {{ id }} {ERRORS} }} }}"""
CREATE_CHECKPOINT = f"""mutation($input: CreateCheckpointInput!) {{
  createCheckpoint(input: $input) {{ checkpoint {{ id }} {ERRORS} }} }}"""
FORK = f"""mutation($input: ForkSessionInput!) {{
  forkSession(input: $input) {{ session {{ id }} {ERRORS} }} }}"""
SPACES = "{ spaces(first: 100) { edges { node { name description } } } }"


@pytest.mark.parametrize(
    ("fields", "message", "field"),
    [
        ({"name": "Trips", "description": "a\x00b"}, f"A description {NOT_TEXT}", "description"),
        (
            {"name": "Trips", "description": "d" * 2001},
            "A description is at most 2000 characters.",
            "description",
        ),
        ({"name": "n" * 201}, "A name is at most 200 characters.", "name"),
        ({"name": "a\x00b"}, f"A name {NOT_TEXT}", "name"),
    ],
)
async def test_space_text_is_bounded(
    gql: GraphQLClient, fields: dict[str, str], message: str, field: str
) -> None:
    created = (await gql(CREATE_SPACE, input=fields))["createSpace"]
    assert created == {
        "space": None,
        "errors": [{"code": "INVALID", "message": message, "field": field}],
    }
    space = await create_space(gql, "Kept")
    updated = (await gql(UPDATE_SPACE, input={"id": space, **fields}))["updateSpace"]
    assert updated == {
        "space": None,
        "errors": [{"code": "INVALID", "message": message, "field": field}],
    }
    assert (await gql(SPACES))["spaces"]["edges"] == [{"node": {"name": "Kept", "description": ""}}]


async def test_a_description_of_exactly_the_limit_is_kept(gql: GraphQLClient) -> None:
    created = await gql(CREATE_SPACE, input={"name": "T", "description": "é" * 2000})
    assert created["createSpace"]["errors"] == []


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("k\x00ey", f"An idempotency key {NOT_TEXT}"),
        ("k" * 201, "An idempotency key is at most 200 characters."),
        ("", "An idempotency key cannot be empty."),
    ],
)
async def test_idempotency_keys_are_bounded_and_write_nothing(
    gql: GraphQLClient, key: str, message: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    result = await send(gql, sid, "hi", idempotencyKey=key)
    assert result["errors"] == [{"code": "INVALID", "message": message, "field": "idempotencyKey"}]
    assert result["userTurn"] is None
    turns = await gql("query($id: ID!) { session(id: $id) { lastSequenceNumber } }", id=sid)
    assert turns["session"]["lastSequenceNumber"] == 0


async def test_an_idempotency_key_of_200_characters_works_and_is_never_logged(
    gql: GraphQLClient, caplog: pytest.LogCaptureFixture
) -> None:
    # INFO, the level `smriti serve` logs at (Tortoise's DEBUG query log prints
    # every statement's parameters, message contents included).
    caplog.set_level(logging.INFO)
    secret = "idem-SECRET-" + "7" * 188
    sid = (await create_session(gql, title="t"))["id"]
    first = await send(gql, sid, "hi", idempotencyKey=secret)
    again = await send(gql, sid, "hi", idempotencyKey=secret)
    assert first["errors"] == [] and again["userTurn"] == first["userTurn"]
    refused = await send(gql, sid, "hi", idempotencyKey="idem-SECRET-\x00")
    assert [e["code"] for e in refused["errors"]] == ["INVALID"]
    assert "SECRET" not in str(refused)
    assert [r.name for r in caplog.records if "idem-SECRET" in r.getMessage()] == []
    assert "idem-SECRET" not in caplog.text


def _too_many(name: str) -> dict[str, Any]:
    return {name: [f"item {i}" for i in range(51)]}


@pytest.mark.parametrize(
    ("fields", "message", "field"),
    [
        ({"objective": "o" * 2001}, "objective is at most 2000 characters.", "objective"),
        ({"summary": "s" * 20_001}, "summary is at most 20000 characters.", "summary"),
        ({"summary": "a\x00"}, f"summary {NOT_TEXT}", "summary"),
        (_too_many("decisions"), "decisions holds at most 50 items; it has 51.", "decisions"),
        (_too_many("tasks"), "tasks holds at most 50 items; it has 51.", "tasks"),
        (
            _too_many("openQuestions"),
            "openQuestions holds at most 50 items; it has 51.",
            "openQuestions",
        ),
        (_too_many("entities"), "entities holds at most 50 items; it has 51.", "entities"),
        # Duplicates count: the list is measured before any item is read.
        (
            {"decisions": ["same"] * 1000},
            "decisions holds at most 50 items; it has 1000.",
            "decisions",
        ),
        ({"tasks": ["t" * 1001]}, "tasks[0] is longer than 1000 characters.", "tasks"),
        ({"entities": ["ok", "a\x00"]}, f"entities[1] {NOT_TEXT}", "entities"),
        ({"title": "t" * 201}, "A title is at most 200 characters.", "title"),
    ],
)
async def test_checkpoint_fields_are_bounded(
    gql: GraphQLClient, fields: dict[str, Any], message: str, field: str
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    data = await gql(CREATE_CHECKPOINT, input={"sessionId": sid, "title": "T", **fields})
    assert data["createCheckpoint"] == {
        "checkpoint": None,
        "errors": [{"code": "INVALID", "message": message, "field": field}],
    }
    lineage = await gql(
        "query($id: ID!) { space(id: $id) { lineage { edges { cursor } } } }", id=space
    )
    assert lineage["space"]["lineage"]["edges"] == []


# 1,000,000 items is a 4 MB body: under the body limit, so this bound is what refuses it.
@pytest.mark.parametrize("length", [1001, 1_000_000])
async def test_a_list_no_field_could_take_is_refused_before_it_is_read(
    gql: GraphQLClient, length: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    body = await gql.raw(
        CREATE_CHECKPOINT,
        input={"sessionId": sid, "title": "T", "tasks": [], "decisions": ["d"] * length},
    )
    assert body == {
        "data": None,
        "errors": [
            {
                "message": f"input.decisions holds {length} items; "
                "no list input takes more than 1000.",
                "extensions": {"code": "INVALID", "field": "input.decisions"},
            }
        ],
    }
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    lineage = await gql(
        "query($id: ID!) { space(id: $id) { lineage { edges { cursor } } } }", id=space
    )
    assert lineage["space"]["lineage"]["edges"] == []


@pytest.mark.parametrize(
    ("title", "message"),
    [("t" * 201, "A title is at most 200 characters."), ("a\x00", f"A title {NOT_TEXT}")],
)
async def test_fork_and_session_titles_are_bounded(
    gql: GraphQLClient, title: str, message: str
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    saved = await gql(CREATE_CHECKPOINT, input={"sessionId": sid, "title": "Start"})
    checkpoint_id = saved["createCheckpoint"]["checkpoint"]["id"]
    forked = await gql(FORK, input={"checkpointId": checkpoint_id, "title": title})
    expected = {"code": "INVALID", "message": message, "field": "title"}
    assert forked["forkSession"] == {"session": None, "errors": [expected]}
    created = await gql(
        f"mutation($t: String) {{ createSession(input: {{title: $t}}) {{ session {{ id }} {ERRORS} }} }}",
        t=title,
    )
    assert created["createSession"] == {"session": None, "errors": [expected]}
    sessions = await gql("{ sessions(first: 100) { edges { node { id } } } }")
    assert [e["node"]["id"] for e in sessions["sessions"]["edges"]] == [sid]


@pytest.mark.parametrize(
    ("content", "message", "code"),
    [
        (
            "x" * (1024 * 1024 + 1),
            "The message is 1048577 bytes; the limit is 1048576 bytes.",
            "CONTENT_TOO_LARGE",
        ),
        ("a\x00b", f"The message {NOT_TEXT}", "INVALID"),
    ],
)
async def test_context_preview_content_is_bounded(
    gql: GraphQLClient, content: str, message: str, code: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    body = await gql.raw(PREVIEW, input={"sessionId": sid, "content": content})
    assert body["data"] == {"contextPreview": None}
    assert [(e["message"], e["extensions"]) for e in body["errors"]] == [
        (message, {"code": code, "field": "content"})
    ]


async def test_a_nul_in_a_message_is_refused_on_send_and_stream_alike(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    result = await send(gql, sid, "a\x00b")
    assert result["errors"] == [
        {"code": "INVALID", "message": f"The message {NOT_TEXT}", "field": "content"}
    ]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("k\x00ey", f"An idempotency key {NOT_TEXT}"),
        ("k" * 201, "An idempotency key is at most 200 characters."),
    ],
)
async def test_message_stream_checks_the_idempotency_key_like_send(
    gql: GraphQLClient, app: Starlette, key: str, message: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    async with stream_ws(app) as ws:
        await ws.subscribe("1", {"sessionId": sid, "content": "hi", "idempotencyKey": key})
        events = (await ws.events("1"))["1"]
    assert events == [
        {
            "__typename": "StreamFailed",
            "errors": [{"code": "INVALID", "message": message, "field": "idempotencyKey"}],
            "partialReply": None,
        }
    ]
    turns = await gql("query($id: ID!) { session(id: $id) { lastSequenceNumber } }", id=sid)
    assert turns["session"]["lastSequenceNumber"] == 0


BRANCH_RULE = (
    "A branch name is 1 to 100 characters: letters, digits, '.', '_', '/' "
    "and '-', starting with a letter or digit."
)


@pytest.mark.parametrize("branch", ["b" * 101, "a\x00b", ""])
async def test_branch_names_are_bounded(gql: GraphQLClient, branch: str) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    saved = await gql(CREATE_CHECKPOINT, input={"sessionId": sid, "title": "Start"})
    checkpoint_id = saved["createCheckpoint"]["checkpoint"]["id"]
    forked = await gql(FORK, input={"checkpointId": checkpoint_id, "branchName": branch})
    assert forked["forkSession"] == {
        "session": None,
        "errors": [{"code": "INVALID", "message": BRANCH_RULE, "field": "branchName"}],
    }


@pytest.mark.parametrize("model", ["m" * 10_000, "lab/my-\x00model"])
async def test_a_model_name_that_is_not_listed_is_refused_and_echoed_short(
    gql: GraphQLClient, model: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    result = await send(gql, sid, "hi", model=model)
    shown = model if len(model) <= 120 else model[:120] + "…"
    assert result["errors"] == [
        {
            "code": "UNKNOWN_MODEL",
            "message": f'unknown model "{shown}": use a "provider/model" listed by providers',
            "field": "model",
        }
    ]


async def test_a_fork_of_a_checkpoint_with_a_title_of_the_limit_gets_a_title_within_it(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    saved = await gql(CREATE_CHECKPOINT, input={"sessionId": sid, "title": "T" * 200})
    checkpoint_id = saved["createCheckpoint"]["checkpoint"]["id"]
    forked = await gql(
        f"""mutation($input: ForkSessionInput!) {{
          forkSession(input: $input) {{ session {{ title }} {ERRORS} }} }}""",
        input={"checkpointId": checkpoint_id},
    )
    # "Fork of " + 200 characters overflowed the 200-character column on PostgreSQL.
    assert forked["forkSession"] == {
        "session": {"title": "Fork of " + "T" * 192},
        "errors": [],
    }
