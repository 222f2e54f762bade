"""api.providers exports exactly its public surface, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import api.providers

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def test_all_lists_every_public_name_and_only_those() -> None:
    classes_and_functions = {
        name
        for name, value in vars(api.providers).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("api.")
    }

    assert set(api.providers.__all__) == classes_and_functions | {
        "DEFAULT_CONTEXT_WINDOW",
        "DEFAULT_TIMEOUT",
    }
    assert len(api.providers.__all__) == len(set(api.providers.__all__))


def test_importing_the_package_does_not_import_litellm() -> None:
    # A fresh interpreter: this test process may already have imported LiteLLM.
    result = subprocess.run(
        [sys.executable, "-c", "import sys, api.providers; print('litellm' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY_ROOT,
    )

    assert result.stdout == "False\n"
