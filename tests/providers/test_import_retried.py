"""An import of LiteLLM that failed once is tried again by the next call.

Under load, a thread importing LiteLLM while another imported one of its
dependencies once saw a partially initialised module ("partially initialized
module 'litellm' has no attribute 'utils'"); the failed import was kept and
every later model call of that process failed with it ("Unexpected error").
And the next import must start clean: the submodules a failed import finished
stay in ``sys.modules``, bound to the discarded ``litellm``, and a retry that
found them failed the same way every time (23 failures in one SQLite run).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from api.providers.litellm import loader
from tests.support.repository import REPOSITORY_ROOT


async def test_a_failed_import_fails_its_callers_and_the_next_call_imports_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loader, "_module", None)
    monkeypatch.setattr(loader, "_import_future", None)
    fake = types.SimpleNamespace()
    attempts: list[str] = []

    def import_module(name: str) -> Any:
        attempts.append(name)
        if len(attempts) == 1:
            raise ImportError("No module named 'tiktoken'")
        return fake

    monkeypatch.setattr(loader.importlib, "import_module", import_module)

    with pytest.raises(ImportError, match="tiktoken"):
        await loader.loaded()
    assert loader.is_loaded() is False

    assert await loader.loaded() is fake
    assert attempts == ["litellm", "litellm"]
    assert fake.suppress_debug_info is True
    assert await loader.loaded() is fake  # once there, never imported again
    assert attempts == ["litellm", "litellm"]


# CPython's words when another thread's import hands this one a module half-executed.
CONCURRENT = (
    "cannot import name 'ChatCompletionFunctionToolParam' from partially initialized module "
    "'openai.types.chat' (most likely due to a circular import)"
)


async def test_an_import_another_threads_import_got_in_the_way_of_is_tried_again_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loader, "_module", None)
    monkeypatch.setattr(loader, "_import_future", None)
    fake = types.SimpleNamespace()
    attempts: list[str] = []

    def import_module(name: str) -> Any:
        attempts.append(name)
        if len(attempts) <= 2:
            raise ImportError(CONCURRENT)
        return fake

    monkeypatch.setattr(loader.importlib, "import_module", import_module)

    assert await loader.loaded() is fake
    assert attempts == ["litellm", "litellm", "litellm"]


async def test_an_import_python_found_deadlocked_with_another_threads_is_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loader, "_module", None)
    monkeypatch.setattr(loader, "_import_future", None)
    fake = types.SimpleNamespace()
    attempts: list[str] = []

    def import_module(name: str) -> Any:
        attempts.append(name)
        if len(attempts) == 1:
            raise importlib._bootstrap._DeadlockError(  # type: ignore[attr-defined]
                "deadlock detected by _ModuleLock('openai.types.chat') at 1"
            )
        return fake

    monkeypatch.setattr(loader.importlib, "import_module", import_module)

    assert await loader.loaded() is fake
    assert attempts == ["litellm", "litellm"]


async def test_an_import_that_keeps_meeting_another_threads_import_fails_after_three_tries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loader, "_module", None)
    monkeypatch.setattr(loader, "_import_future", None)
    attempts: list[str] = []

    def import_module(name: str) -> Any:
        attempts.append(name)
        raise ImportError(CONCURRENT)

    monkeypatch.setattr(loader.importlib, "import_module", import_module)

    with pytest.raises(ImportError) as raised:
        await loader.loaded()
    assert str(raised.value) == CONCURRENT
    assert attempts == ["litellm", "litellm", "litellm"]
    assert loader.is_loaded() is False


# A fresh interpreter (this test process may have imported LiteLLM already) whose
# first import of LiteLLM fails late, once LiteLLM's utils module is in: then the
# next load() must import it whole, as the first load of a process does.
SCRIPT = r"""
import importlib.abc, json, sys

from api.providers.litellm import loader


class FailOnce(importlib.abc.MetaPathFinder):
    failed = False

    def find_spec(self, name, path, target=None):
        if name == "litellm.main" and not self.failed:
            self.failed = True
            raise ImportError("the first import fails here")
        return None


sys.meta_path.insert(0, FailOnce())
try:
    loader.load()
    first = "imported"
except ImportError as exc:
    first = str(exc)
litellm = loader.load()
print(json.dumps({
    "first": first,
    "loaded": loader.is_loaded(),
    "utils": litellm.utils is sys.modules["litellm.utils"],
    "main": "litellm.main" in sys.modules and callable(litellm.acompletion),
}))
"""


def test_an_import_that_failed_half_way_is_imported_whole_the_next_time(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=REPOSITORY_ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "first": "the first import fails here",
        "loaded": True,
        "utils": True,
        "main": True,
    }
