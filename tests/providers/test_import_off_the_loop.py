"""The first model call after start-up must not stall the event loop on LiteLLM's import,
nor fail because an earlier caller gave up waiting for it.

A fresh interpreter (this test process may have imported LiteLLM already) runs
the real app in process: the lifespan starts the import in a thread, a
message to an OpenAI-compatible stub is sent at once, and while that send
waits for the import a ``{ __typename }`` query must be answered — before the
import has finished. The offline models do not go through LiteLLM at all: a
message to ``offline/echo`` is answered before the import has finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.repository import REPOSITORY_ROOT

SCRIPT = r"""
import asyncio, json, sys
from pathlib import Path

import httpx

from api.app import create_app
from api.providers.litellm import loader
from api.settings import Settings
from api.store.database import sqlite_url
from tests.support.fake_openai import FakeOpenAI

SEND = '''mutation($s: ID!, $m: String) {
  sendMessage(input: {sessionId: $s, content: "Hi there", model: $m}) {
  assistantTurn { content } errors { code } } }'''
CREATE = "mutation { createSession(input: {}) { session { id } } }"


async def main(stub: FakeOpenAI) -> None:
    folder = Path(sys.argv[1])
    providers = folder / "providers.yaml"
    providers.write_text(
        "chat_default: lab/model\n"
        "providers:\n"
        f"  lab: {{litellm_provider: openai, api_base: '{stub.base_url}', models: [model]}}\n"
    )
    settings = Settings(
        database_url=sqlite_url(folder / "smriti.sqlite3"),
        providers_file=providers,
        title_sessions=False,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            created = await http.post("/graphql", json={"query": CREATE})
            sid = created.json()["data"]["createSession"]["session"]["id"]
            imported_before_send = loader.is_loaded()
            created = await http.post("/graphql", json={"query": CREATE})
            offline_sid = created.json()["data"]["createSession"]["session"]["id"]
            offline = await http.post(
                "/graphql",
                json={"query": SEND, "variables": {"s": offline_sid, "m": "offline/echo"}},
            )
            offline_before_import = not loader.is_loaded()
            # A caller that stops waiting (its client went away) must not cancel
            # the one import every later call waits for.
            gone = asyncio.create_task(loader.loaded())
            await asyncio.sleep(0.01)
            gone.cancel()
            send = asyncio.create_task(
                http.post("/graphql", json={"query": SEND, "variables": {"s": sid}})
            )
            # Let the send run up to its first wait (the import, or a stalled loop).
            await asyncio.sleep(0.05)
            answered = await http.post("/graphql", json={"query": "{ __typename }"})
            report = {
                "imported_before_send": imported_before_send,
                "typename": answered.json()["data"],
                "import_finished_when_answered": loader.is_loaded(),
                "send_pending_when_answered": not send.done(),
                "offline": offline.json(),
                "offline_before_import": offline_before_import,
            }
            report["send"] = (await send).json()
    print(json.dumps(report))


with FakeOpenAI() as stub:
    asyncio.run(main(stub))
"""


def test_a_query_and_an_offline_send_are_answered_while_the_first_call_waits_for_the_import(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPOSITORY_ROOT,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])

    assert report["imported_before_send"] is False
    assert report["typename"] == {"__typename": "Query"}
    # The order that matters: the query was answered while the send was
    # still waiting and LiteLLM was still importing.
    assert report["send_pending_when_answered"] is True
    assert report["import_finished_when_answered"] is False
    # And the send, once LiteLLM was there, got its answer.
    assert report["send"]["data"]["sendMessage"]["errors"] == []
    assert report["send"]["data"]["sendMessage"]["assistantTurn"]["content"] == "fake reply #1"
    # The offline echo answered while LiteLLM was still importing.
    assert report["offline_before_import"] is True
    assert report["offline"]["data"]["sendMessage"]["errors"] == []
    assert report["offline"]["data"]["sendMessage"]["assistantTurn"]["content"].endswith(
        "You asked: Hi there"
    )
