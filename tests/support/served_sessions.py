"""Sessions of a running `smriti serve` over HTTP (created, their turns read back), and
a providers file whose `lab` provider is a fake OpenAI server: for the system tests
that stream through a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.fake_openai import FakeOpenAI
from tests.support.ops import TURN
from tests.support.servers import SmritiServer

CREATE = """mutation($model: String) { createSession(input: {title: "t", model: $model}) {
  session { id } } }"""
SAVED = f"""query($id: ID!) {{ session(id: $id) {{ lastSequenceNumber
  turns(first: 100) {{ edges {{ node {{ {TURN} }} }} }} }} }}"""


def write_providers_file(folder: Path, fake: FakeOpenAI) -> Path:
    path = folder / "providers.yaml"
    path.write_text(
        "chat_default: offline/echo\n"
        "background_intelligence: offline/extractor\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{fake.base_url}"\n'
        "    models: [my-model]\n"
    )
    return path


async def new_session(http: httpx.AsyncClient, server: SmritiServer, model: str | None) -> str:
    created = await http.post(
        server.graphql_url, json={"query": CREATE, "variables": {"model": model}}
    )
    sid: str = created.json()["data"]["createSession"]["session"]["id"]
    return sid


async def read_turns(
    http: httpx.AsyncClient, server: SmritiServer, sid: str
) -> tuple[int, list[dict[str, Any]]]:
    response = await http.post(server.graphql_url, json={"query": SAVED, "variables": {"id": sid}})
    session = response.json()["data"]["session"]
    return session["lastSequenceNumber"], [e["node"] for e in session["turns"]["edges"]]


def reply_summary(found: dict[str, Any]) -> tuple[Any, ...]:
    return (
        found["sequenceNumber"],
        found["role"],
        found["content"],
        found["replyToSequence"],
        found["interrupted"],
    )
