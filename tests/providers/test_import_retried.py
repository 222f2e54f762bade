"""An import of LiteLLM that failed once is tried again by the next call.

Under load, a thread importing LiteLLM while another imported one of its
dependencies once saw a partially initialised module ("partially initialized
module 'litellm' has no attribute 'utils'"); the failed import was kept and
every later model call of that process failed with it ("Unexpected error").
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from api.providers.litellm import loader


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
            raise AttributeError("partially initialized module 'litellm' has no attribute 'utils'")
        return fake

    monkeypatch.setattr(loader.importlib, "import_module", import_module)

    with pytest.raises(AttributeError, match="partially initialized"):
        await loader.loaded()
    assert loader.is_loaded() is False

    assert await loader.loaded() is fake
    assert attempts == ["litellm", "litellm"]
    assert fake.suppress_debug_info is True
    assert await loader.loaded() is fake  # once there, never imported again
    assert attempts == ["litellm", "litellm"]
