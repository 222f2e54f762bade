"""Questions whose answer failed go to the model with the next message (issue 17).

A failed call keeps the user's turn and writes no answer, so the next message
follows unanswered questions directly. Every provider receives them merged into
one user message, in order, joined by a blank line, never as user messages in
a row; the recording stubs show what went over the wire in each format, and
``contextPreview`` says which turns each message holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from api.settings import Settings
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import FakeProvider
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the .* attribute on the instance is deprecated"
)

PREVIEW = """query($input: ContextPreviewInput!) { contextPreview(input: $input) {
  turns { sequenceNumber }
  messages { role content sequenceNumbers includesNewMessage merged } } }"""
MERGED = "Japan\n\nOr Korea\n\nWhich is cheaper?"


@dataclass(frozen=True)
class Stubs:
    openai: FakeOpenAI
    anthropic: FakeAnthropic
    ollama: FakeOllama

    def of(self, model: str) -> FakeProvider:
        stubs: dict[str, FakeProvider] = {
            "lab": self.openai,
            "anthropic": self.anthropic,
            "ollama": self.ollama,
        }
        return stubs[model.partition("/")[0]]


@pytest.fixture
def stubs() -> Iterator[Stubs]:
    with FakeOpenAI() as openai, FakeAnthropic() as anthropic, FakeOllama() as ollama:
        yield Stubs(openai, anthropic, ollama)


@pytest.fixture
def settings(database_url: str, tmp_path: Path, stubs: Stubs) -> Settings:
    path = tmp_path / "providers.yaml"
    path.write_text(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{stubs.openai.base_url}", '
        "models: [my-model]}\n"
        f'  anthropic: {{api_base: "{stubs.anthropic.base_url}", '
        "api_key_env: SMRITI_TEST_ANTHROPIC_KEY, models: [claude-sonnet-4-5]}\n"
        f'  ollama: {{api_base: "{stubs.ollama.base_url}", models: [llama3.1]}}\n'
    )
    return Settings(
        database_url=database_url,
        providers_file=path,
        provider_timeout_seconds=5.0,
        title_sessions=False,
        allowed_hosts=("smriti.test",),
    )


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMRITI_TEST_ANTHROPIC_KEY", "sk-ant-test")


def anthropic_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


# What each wire format carries for: "Plan a trip" / "Where to?", then "Japan" and
# "Or Korea" (both failed), then "Which is cheaper?".
WIRES = {
    "lab/my-model": [
        {"role": "user", "content": "Plan a trip"},
        {"role": "assistant", "content": "Where to?"},
        {"role": "user", "content": MERGED},
    ],
    "anthropic/claude-sonnet-4-5": [
        anthropic_message("user", "Plan a trip"),
        anthropic_message("assistant", "Where to?"),
        anthropic_message("user", MERGED),
    ],
    "ollama/llama3.1": [
        {"role": "user", "content": "Plan a trip", "images": []},
        {"role": "assistant", "content": "Where to?", "images": []},
        {"role": "user", "content": MERGED, "images": []},
    ],
}


async def fail_twice(gql: GraphQLClient, sid: str, stub: FakeProvider) -> None:
    stub.reply("Where to?")
    assert (await send(gql, sid, "Plan a trip"))["errors"] == []
    stub.fail(500)
    stub.fail(500)
    for question in ("Japan", "Or Korea"):
        failed = await send(gql, sid, question)
        assert (failed["assistantTurn"], [e["code"] for e in failed["errors"]]) == (
            None,
            ["PROVIDER_ERROR"],
        )


@pytest.mark.parametrize("model", list(WIRES))
async def test_two_failed_sends_then_a_good_one_send_one_user_message(
    gql: GraphQLClient, stubs: Stubs, model: str
) -> None:
    stub = stubs.of(model)
    sid: str = (await create_session(gql, model=model, title="t"))["id"]
    await fail_twice(gql, sid, stub)
    stub.reply("Japan is.")

    sent = await send(gql, sid, "Which is cheaper?")

    assert sent["errors"] == []
    assert sent["assistantTurn"]["content"] == "Japan is."
    assert len(stub.requests) == 4
    assert stub.requests[-1]["messages"] == WIRES[model]
    # The failed sends themselves: "Japan" alone, then "Japan" with "Or Korea".
    assert stub.requests[1]["messages"][-1] == WIRES[model][-1] | (
        {"content": [{"type": "text", "text": "Japan"}]}
        if model.startswith("anthropic")
        else {"content": "Japan"}
    )
    assert [m["role"] for m in stub.requests[2]["messages"]] == ["user", "assistant", "user"]
    # The sendMessage payload's context is what was sent.
    assert [(m["role"], m["content"]) for m in sent["context"]["messages"]] == [
        ("user", "Plan a trip"),
        ("assistant", "Where to?"),
        ("user", MERGED),
    ]


async def test_the_preview_says_which_turns_each_message_holds(
    gql: GraphQLClient, stubs: Stubs
) -> None:
    sid: str = (await create_session(gql, model="ollama/llama3.1", title="t"))["id"]
    await fail_twice(gql, sid, stubs.ollama)

    preview = (await gql(PREVIEW, input={"sessionId": sid, "content": "Which is cheaper?"}))[
        "contextPreview"
    ]

    assert preview["turns"] == [{"sequenceNumber": n} for n in (1, 2, 3, 4)]
    assert preview["messages"] == [
        {
            "role": "user",
            "content": "Plan a trip",
            "sequenceNumbers": [1],
            "includesNewMessage": False,
            "merged": False,
        },
        {
            "role": "assistant",
            "content": "Where to?",
            "sequenceNumbers": [2],
            "includesNewMessage": False,
            "merged": False,
        },
        {
            "role": "user",
            "content": MERGED,
            "sequenceNumbers": [3, 4],
            "includesNewMessage": True,
            "merged": True,
        },
    ]
    assert len(stubs.ollama.requests) == 3  # a preview calls no model


async def test_the_offline_model_receives_them_merged_too(gql: GraphQLClient, stubs: Stubs) -> None:
    sid: str = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    await fail_twice(gql, sid, stubs.openai)

    sent = await send(gql, sid, "Which is cheaper?", model="offline/echo")

    # The echo counts the messages it received and quotes the last one.
    assert sent["assistantTurn"]["content"] == (
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)\n"
        "Checkpoints (0): none\n"
        "Earlier turns: 2 (1 from the user, 1 from the assistant)\n"
        "You asked: Japan Or Korea Which is cheaper?"
    )
