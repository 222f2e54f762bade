"""A server's start-up heap is frozen out of the garbage collector's full passes.

With replies streaming, every full (generation 2) collection walked the ~425,000
objects of start-up (the app, LiteLLM) and held the event loop for it: each was
the slowest trivial query of its run (bench.concurrent_streams --gc). A server
app (``freeze_heap``, as ``smriti serve`` builds it) freezes what is alive once
started, LiteLLM's import included when it is preloaded; what comes after is
collected as before. An app built without it (in a test) freezes nothing.

A fresh interpreter each: freezing is process-wide, and this test process must
not keep its heap for ever.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repository import REPOSITORY_ROOT

SCRIPT = r"""
import asyncio, gc, json, sys
from pathlib import Path

from api.app import create_app
from api.settings import Settings
from api.store.database import sqlite_url


def tracked(thing: object) -> bool:
    return any(found is thing for found in gc.get_objects())


async def main(freeze: bool, preload: bool) -> None:
    folder = Path(sys.argv[1])
    providers = folder / "providers.yaml"
    providers.write_text(
        "chat_default: lab/model\n"
        "providers:\n"
        "  lab: {litellm_provider: openai, api_base: 'http://127.0.0.1:9', models: [model]}\n"
    )
    settings = Settings(
        database_url=sqlite_url(folder / "smriti.sqlite3"),
        providers_file=providers,
        preload_providers=preload,
    )
    app = create_app(settings, freeze_heap=freeze)
    async with app.router.lifespan_context(app):
        if app.state.warm_up is not None:
            app.state.warm_up.join(120)
        later = type("Later", (), {})()
        print(json.dumps({
            "app": tracked(app),
            "litellm": tracked(sys.modules["litellm"]) if "litellm" in sys.modules else None,
            "later": tracked(later),
        }))


asyncio.run(main(sys.argv[2] == "freeze", sys.argv[3] == "preload"))
"""


def run(tmp_path: Path, freeze: str, preload: str) -> dict[str, bool | None]:
    env = {
        **os.environ,
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(REPOSITORY_ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), freeze, preload],
        cwd=REPOSITORY_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("freeze", "preload", "expected"),
    [
        # Frozen once LiteLLM is loaded: its module with the rest.
        ("freeze", "preload", {"app": False, "litellm": False, "later": True}),
        # Nothing to wait for: frozen as the lifespan starts, LiteLLM not imported.
        ("freeze", "lazy", {"app": False, "litellm": None, "later": True}),
        # An app built in a test freezes nothing.
        ("keep", "preload", {"app": True, "litellm": True, "later": True}),
    ],
)
def test_a_server_app_freezes_its_start_up_heap(
    tmp_path: Path, freeze: str, preload: str, expected: dict[str, bool | None]
) -> None:
    assert run(tmp_path, freeze, preload) == expected
