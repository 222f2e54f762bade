"""A server with only the offline models never imports LiteLLM.

The offline provider is a transport of its own: start-up (with its warm-up),
a message and the session title it triggers all run without LiteLLM, which
takes seconds to import. A fresh interpreter, because this test process may
have imported LiteLLM already.
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
from api.settings import Settings
from api.store.database import sqlite_url

CREATE = "mutation { createSession(input: {}) { session { id } } }"
SEND = '''mutation($s: ID!) {
  sendMessage(input: {sessionId: $s, content: "Hi there"}) {
  assistantTurn { content model } errors { code } } }'''


async def main() -> None:
    folder = Path(sys.argv[1])
    settings = Settings(database_url=sqlite_url(folder / "smriti.sqlite3"), providers_file=None)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            created = await http.post("/graphql", json={"query": CREATE})
            sid = created.json()["data"]["createSession"]["session"]["id"]
            sent = await http.post("/graphql", json={"query": SEND, "variables": {"s": sid}})
    # Leaving the lifespan waited for the background work (the title); the warm-up
    # runs in a thread nobody waits for: it is waited for here.
    app.state.warm_up.join(120)
    print(json.dumps({"sent": sent.json(), "litellm": "litellm" in sys.modules}))


asyncio.run(main())
"""


def test_an_offline_only_server_answers_without_importing_litellm(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("SMRITI_PROVIDERS_FILE", None)
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

    sent = report["sent"]["data"]["sendMessage"]
    assert sent["errors"] == []
    assert sent["assistantTurn"]["model"] == "echo"
    assert sent["assistantTurn"]["content"].endswith("You asked: Hi there")
    assert report["litellm"] is False


PRELOAD_SCRIPT = r"""
import asyncio, json, sys
from pathlib import Path

from api.app import create_app
from api.settings import Settings
from api.store.database import sqlite_url


async def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir()
    # The repository's providers.yaml: OpenAI, Anthropic, OpenRouter, Ollama beside offline.
    settings = Settings.from_environment(
        {"SMRITI_PRELOAD_PROVIDERS": sys.argv[2]},
        database_url=sqlite_url(folder / "smriti.sqlite3"),
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        pass
    # The preload, when on, runs in a thread nobody waits for (a stop must not).
    if app.state.warm_up is not None:
        app.state.warm_up.join(120)
    print(json.dumps({"preload": settings.preload_providers, "litellm": "litellm" in sys.modules}))


asyncio.run(main())
"""


def test_litellm_is_preloaded_at_start_unless_the_operator_says_not_to(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("SMRITI_PROVIDERS_FILE", None)
    reports = []
    for flag in ("1", "0"):
        result = subprocess.run(
            [sys.executable, "-c", PRELOAD_SCRIPT, str(tmp_path / flag), flag],
            capture_output=True,
            text=True,
            cwd=REPOSITORY_ROOT,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        reports.append(json.loads(result.stdout.strip().splitlines()[-1]))
    assert reports == [{"preload": True, "litellm": True}, {"preload": False, "litellm": False}]
