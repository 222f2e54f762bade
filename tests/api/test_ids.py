"""Ids and cursors decode strictly; what is not found is null; client errors are readable.

docs/architecture.md#errors-and-rights: errors say what is wrong, ids decode strictly, "Unexpected error."
is only for real bugs (and every one is logged).
"""

from __future__ import annotations

import base64
import logging

import pytest
from strawberry import relay

from api.graphql.core import ids, pagination
from tests.support.graphql import GraphQLClient, without_cost
from tests.support.ops import checkpoint, create_session, create_space, send


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


LOOKUP = "query($id: ID!) { session(id: $id) { id } node(id: $id) { id } }"


@pytest.mark.parametrize(
    "raw",
    [
        "Session:99999999999999999999",  # past BIGINT: was a database error
        "Session:9223372036854775808",  # 2**63, one past the range
        "Session: 1",  # int() accepts spaces
        "Session:1_0",  # and underscores
        "Session:01",  # a leading zero
        "Session:+1",
        "Session:-1",
        "Session:0",
        "Session:1:2",
    ],
)
async def test_malformed_ids_are_null_on_queries_and_not_found_on_mutations(
    gql: GraphQLClient, raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    await create_space(gql)
    await create_session(gql, title="t")
    await create_session(gql, title="t")  # so that Session:10 would not exist either
    caplog.set_level(logging.INFO)
    assert without_cost(await gql.raw(LOOKUP, id=b64(raw))) == {
        "data": {"session": None, "node": None}
    }
    result = await send(gql, b64(raw), "hi")
    assert result["errors"] == [
        {
            "code": "NOT_FOUND",
            "message": f"No session has the id '{b64(raw)}'.",
            "field": "sessionId",
        }
    ]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(
    "value",
    [
        "U2Vzc2lvbjox=",  # Session:1 with padding it does not need
        "U2Vzc2lvbjox\n",  # with a newline
        "U2Vzc2lvbjoy" + "A" * 100,  # over-long
        "U2Vzc2lvbjp",  # not base64
    ],
)
async def test_non_canonical_base64_is_not_an_id(gql: GraphQLClient, value: str) -> None:
    await create_session(gql, title="t")
    assert without_cost(await gql.raw(LOOKUP, id=value)) == {
        "data": {"session": None, "node": None}
    }


async def test_the_canonical_id_still_finds_the_row(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    assert sid == b64("Session:1")
    assert without_cost(await gql.raw(LOOKUP, id=sid)) == {
        "data": {"session": {"id": sid}, "node": {"id": sid}}
    }


async def test_not_found_is_null_on_every_query_field(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="t"))["id"]
    await send(gql, sid, "hello")
    saved = await checkpoint(gql, sid, "Start")
    missing_session, missing_space = b64("Session:999"), b64("Space:999")
    missing_checkpoint = b64("Checkpoint:999")
    body = await gql.raw(
        """query($s: ID!, $sp: ID!, $c: ID!, $real: ID!) {
             space(id: $sp) { id } session(id: $s) { id } checkpoint(id: $c) { id }
             node(id: $c) { id }
             checkpointByHash(spaceId: $sp, hash: "abcd") { id }
             contextPreview(input: {sessionId: $s, content: "x"}) { mode }
             compareCheckpoints(a: $real, b: $c) { a { id } }
             sessions(spaceId: $s) { edges { node { id } } } }""",
        s=missing_session,
        sp=missing_space,
        c=missing_checkpoint,
        real=saved["id"],
    )
    assert without_cost(body) == {
        "data": {
            "space": None,
            "session": None,
            "checkpoint": None,
            "node": None,
            "checkpointByHash": None,
            "contextPreview": None,
            "compareCheckpoints": None,
            "sessions": {"edges": []},
        }
    }
    # A malformed space id in checkpointByHash is null too (it was a top-level error).
    body = await gql.raw(
        'query($sp: ID!) { checkpointByHash(spaceId: $sp, hash: "abcd") { id } }', sp=sid
    )
    assert without_cost(body) == {"data": {"checkpointByHash": None}}


TURNS_AFTER = """query($id: ID!, $after: String) { session(id: $id) {
  turns(first: 2, after: $after) { edges { cursor node { sequenceNumber } } } } }"""


async def test_a_turn_cursor_from_one_session_is_refused_on_another(gql: GraphQLClient) -> None:
    one = (await create_session(gql, title="one"))["id"]
    two = (await create_session(gql, title="two"))["id"]
    for sid in (one, two):
        for text in ("a", "b"):
            await send(gql, sid, text)  # the offline echo answers: 4 turns each
    page = (await gql(TURNS_AFTER, id=one))["session"]["turns"]["edges"]
    own = await gql(TURNS_AFTER, id=one, after=page[-1]["cursor"])
    assert [e["node"]["sequenceNumber"] for e in own["session"]["turns"]["edges"]] == [3, 4]
    body = await gql.raw(TURNS_AFTER, id=two, after=page[-1]["cursor"])
    assert body["data"] == {"session": None}
    assert [(e["message"], e["extensions"]) for e in body["errors"]] == [
        ("after is a cursor from another list.", {"code": "INVALID", "field": "after"})
    ]


@pytest.mark.parametrize(
    "value",
    [
        b64("cursor:spaces:99999999999999999999"),  # past BIGINT: was "Unexpected error."
        b64("cursor:spaces: 1"),
        b64("cursor:spaces:1_0"),
        b64("cursor:1"),  # the old spelling, bound to no list
        "A" * 5000,  # over-long
        b64("cursor:spaces:1") + "=",
    ],
)
async def test_malformed_cursors_are_refused_with_a_typed_error(
    gql: GraphQLClient, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    body = await gql.raw("query($a: String) { spaces(after: $a) { edges { cursor } } }", a=value)
    assert body["data"] is None
    assert [(e["message"], e["extensions"]) for e in body["errors"]] == [
        ("after is not a cursor from this API.", {"code": "INVALID", "field": "after"})
    ]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(
    ("query", "variables", "messages"),
    [
        (
            "query($n: Int) { spaces(first: $n) { edges { cursor } } }",
            {"n": "ten"},
            ["Variable '$n' has invalid value: Int cannot represent non-integer value: 'ten'"],
        ),
        (
            "mutation($i: CreateSpaceInput!) { createSpace(input: $i) { space { id } } }",
            {"i": {"nmae": "Trips"}},
            [
                "Variable '$i' has invalid value: Expected value of type 'CreateSpaceInput' "
                "to include required field 'name', found: {'nmae': 'Trips'}.",
                "Variable '$i' has invalid value: Expected value of type 'CreateSpaceInput' "
                "not to include unknown field 'nmae'. Did you mean 'name'? "
                "Found: {'nmae': 'Trips'}.",
            ],
        ),
        (
            "mutation($i: SendMessageInput!) { sendMessage(input: $i) { errors { code } } }",
            {"i": {"sessionId": "x", "content": ["not", "text"]}},
            [
                "Variable '$i' has invalid value at .content: "
                "String cannot represent a non string value: ['not', 'text']"
            ],
        ),
    ],
)
async def test_a_mistyped_variable_says_what_is_wrong_and_is_not_logged(
    gql: GraphQLClient,
    query: str,
    variables: dict[str, object],
    messages: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    body = await gql.raw(query, **variables)
    assert body["data"] is None
    assert [e["message"] for e in body["errors"]] == messages
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_real_bug_is_still_masked_and_logged(
    gql: GraphQLClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.graphql.providers.types import Providers

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug with a secret sk-123")

    monkeypatch.setattr(Providers, "__init__", broken)
    caplog.set_level(logging.INFO)
    body = await gql.raw("{ providers { chatDefault } }")
    assert [e["message"] for e in body["errors"]] == ["Unexpected error."]
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(logged) == 1
    assert "a bug with a secret" in str(logged[0].exc_info or logged[0].getMessage())


def test_a_prefix_encoded_once_gives_the_whole_encoding() -> None:
    # prefixes of every length modulo 3, texts of several lengths
    for prefix in ["", "S:", "Turn:", "Session:", "Checkpoint:", "cursor:turns/U2Vzc2lvbjox:"]:
        encode = ids.prefixed(prefix)
        for text in ["", "1", "42", "123", "9223372036854775807", "é"]:
            assert encode(text) == base64.b64encode(f"{prefix}{text}".encode()).decode()
    assert ids.encode("Checkpoint", 12) == relay.to_base64("Checkpoint", 12)
    assert pagination.cursor("checkpoints", 7) == base64.b64encode(b"cursor:checkpoints:7").decode(
        "ascii"
    )
