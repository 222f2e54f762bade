"""`smriti import` of a list of conversations, read one at a time (issue 29).

``import_file`` is called in process on the app's database; what it wrote is
read back over GraphQL. The oracle is the generated file's own shape
(``bench/chatgpt_export.py``: conversation i's current line is messages m1..mN
whose texts start "c<i> m<k>: ", with M alternatives each), never the readers'
output.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from api.errors import InputError
from api.graphql.core import ids
from api.import_progress import Printer, describe
from api.runtime import provider_registry
from api.services import operator
from api.services.import_stream import ImportProgress, import_file
from api.settings import Settings
from bench.chatgpt_export import generate
from tests.support.graphql import GraphQLClient

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

DATA = Path(__file__).parents[1] / "data"
SESSION = """query($id: ID!) { node(id: $id) { ... on Session { title
  branchedFrom { afterSequence }
  turns(first: 100) { edges { node { sequenceNumber role content } } } } } }"""
SESSIONS = """{ sessions(first: 100, archived: null) { edges { node { id } } } }"""


def document(conversations: int = 3, messages: int = 12, alternatives: int = 2) -> bytes:
    out = io.StringIO()
    generate(out, conversations=conversations, messages=messages, alternatives=alternatives)
    return out.getvalue().encode()


class Clock:
    """A second per reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


async def imported(settings: Settings, data: bytes, states: list[ImportProgress] | None = None):  # type: ignore[no-untyped-def]
    actor = await operator.acting_locally()
    return await import_file(
        actor,
        io.BytesIO(data),
        provider_registry(settings),
        states.append if states is not None else None,
        clock=Clock(),
    )


async def session_count(gql: GraphQLClient) -> int:
    return len((await gql(SESSIONS))["sessions"]["edges"])


async def turns(gql: GraphQLClient, key: int) -> list[tuple[int, str, str]]:
    found: dict[str, Any] = (await gql(SESSION, id=ids.encode("Session", key)))["node"]
    return [
        (t["sequenceNumber"], t["role"], t["content"].split(":", 1)[0])
        for t in (edge["node"] for edge in found["turns"]["edges"])
    ]


async def test_each_conversation_is_imported_with_its_branches(
    settings: Settings, gql: GraphQLClient
) -> None:
    states: list[ImportProgress] = []
    done = await imported(settings, document(), states)
    assert done.source == "chatgpt"
    assert [(s.title, created) for s, created in done.sessions] == [
        (f"Generated conversation {i}", True) for i in range(3)
    ]
    assert done.branches == [2, 2, 2]
    for i, (session, _) in enumerate(done.sessions):
        assert await turns(gql, session.id) == [
            (k, "USER" if k % 2 else "ASSISTANT", f"c{i} m{k}") for k in range(1, 13)
        ]
    # The messages to import: each conversation's user and assistant nodes.
    own = [
        sum(
            1
            for node in conversation["mapping"].values()
            if node["message"] and node["message"]["author"]["role"] in ("user", "assistant")
        )
        for conversation in json.loads(document())
    ]
    assert states[2].messages == sum(own)
    assert [(s.reading, s.conversations_done, s.conversations) for s in states] == [
        (True, 0, 1),
        (True, 0, 2),
        (True, 0, 3),
        (False, 1, 3),
        (False, 2, 3),
        (False, 3, 3),
    ]
    assert [s.messages_done for s in states[3:]] == [own[0], own[0] + own[1], sum(own)]
    # The clock: one reading at each pass's start, one per state.
    assert [s.seconds for s in states] == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    assert await session_count(gql) == 9


async def test_a_second_import_writes_nothing_again(settings: Settings, gql: GraphQLClient) -> None:
    data = document()
    await imported(settings, data)
    again = await imported(settings, data)
    assert [created for _, created in again.sessions] == [False, False, False]
    assert again.branches == [0, 0, 0]
    assert await session_count(gql) == 9


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # Cut off after its second conversation: not JSON at its end.
        (
            document()[: document().index(b'\n{"title": "Generated conversation 2"')],
            "The document is not JSON",
        ),
        # A ChatGPT conversation, then a Claude one.
        (
            json.dumps(
                [
                    json.loads(document(1))[0],
                    json.loads((DATA / "claude-conversations.json").read_text())[0],
                ]
            ).encode(),
            "This document is none of the formats Smriti imports",
        ),
        (b" [ ] ", "This document is none of the formats Smriti imports"),
    ],
    ids=["cut-off", "mixed", "empty"],
)
async def test_a_list_refused_anywhere_writes_nothing(
    settings: Settings, gql: GraphQLClient, data: bytes, message: str
) -> None:
    with pytest.raises(InputError) as refused:
        await imported(settings, data)
    assert refused.value.message.startswith(message)
    assert refused.value.field == "document"
    assert await session_count(gql) == 0


async def test_a_conversation_refused_names_where(settings: Settings, gql: GraphQLClient) -> None:
    broken = json.loads(document(2))
    broken[1]["create_time"] = "yesterday"
    with pytest.raises(InputError) as refused:
        await imported(settings, json.dumps(broken).encode())
    assert refused.value.field == "conversations[1].create_time"
    assert await session_count(gql) == 0


async def test_a_document_that_is_no_list_is_imported_whole(
    settings: Settings, gql: GraphQLClient
) -> None:
    data = (DATA / "openwebui-chat-export.json").read_bytes()
    assert data.lstrip()[:1] == b"["  # the full export is a list; one chat is an object
    one = json.dumps(json.loads(data)[0]).encode()
    done = await imported(settings, b"\n  " + one)
    assert done.source == "openwebui"
    assert [created for _, created in done.sessions] == [True]


def state(done: int, messages_done: int, seconds: float) -> ImportProgress:
    return ImportProgress(False, done, 2_000, messages_done, 200_000, seconds)


def test_progress_says_messages_conversations_rate_and_time_left() -> None:
    assert describe(ImportProgress(True, 0, 1, 0, 4_610, 1.4)) == (
        "Reading: 1 conversation, 4,610 messages so far (1 s)."
    )
    assert describe(state(12, 1_200, 0.3)) == (
        "Importing: 1,200 of 200,000 messages, 12 of 2,000 conversations, "
        "4,000 messages/s, 50 s left."
    )
    assert describe(state(1_000, 100_000, 50.0)) == (
        "Importing: 100,000 of 200,000 messages, 1,000 of 2,000 conversations, "
        "2,000 messages/s, 50 s left."
    )
    assert describe(state(100, 10_000, 10.0)).endswith("1,000 messages/s, 3 min 10 s left.")
    assert describe(state(0, 0, 0.0)).endswith("0 messages/s, time left unknown yet.")


def test_progress_is_a_line_a_second_in_a_log_and_one_line_in_place_on_a_terminal() -> None:
    times = iter([0.0, 0.5, 1.0, 1.2, 1.3])
    log = io.StringIO()
    printer = Printer(log, in_place=False, clock=lambda: next(times))
    for done in (1, 2, 3, 4):
        printer(state(done, done * 100, done))
    printer(ImportProgress(False, 2_000, 2_000, 200_000, 200_000, 10.0))
    printer.end()
    assert log.getvalue().splitlines() == [
        describe(state(1, 100, 1)),
        describe(state(3, 300, 3)),
        describe(ImportProgress(False, 2_000, 2_000, 200_000, 200_000, 10.0)),
    ]
    times = iter([0.0, 0.5, 1.0, 1.2])
    terminal = io.StringIO()
    printer = Printer(terminal, in_place=True, clock=lambda: next(times))
    for done in (1, 2, 3):
        printer(state(done, done * 100, done))
    printer.end()
    assert terminal.getvalue() == (
        f"\r{describe(state(1, 100, 1))}\x1b[K\r{describe(state(3, 300, 3))}\x1b[K\n"
    )
