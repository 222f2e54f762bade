"""After sign-in, `next` is followed only to a path of this server (webui/next.js).

The function runs in node here, as the browser runs it; tests/browser/test_sign_in.py
follows one hostile `next` through the real page.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

NEXT_JS = Path(__file__).resolve().parent.parent / "webui" / "next.js"
ORIGIN = "http://127.0.0.1:8000"

# `next` as URLSearchParams.get returns it (decoded) -> where the page goes.
CASES = {
    "/": "/",
    "/graphql": "/graphql",
    "/?space=4#cell-2": "/?space=4#cell-2",
    "/a/b?next=//evil.example": "/a/b?next=//evil.example",
    "/%09/evil.example": "/%09/evil.example",  # sent double-encoded: a path here
    "/.//evil.example": "/.//evil.example",  # resolves to the path //evil.example, here
    "": "/",
    "//evil.example": "/",
    "///evil.example": "/",
    "/\\evil.example": "/",
    "\\/evil.example": "/",
    "/\\/evil.example": "/",
    "/\t/evil.example": "/",
    "/\n/evil.example": "/",
    "/\r//evil.example": "/",
    "\t//evil.example": "/",
    " //evil.example": "/",
    "https://evil.example": "/",
    "http:evil.example": "/",
    "https:/evil.example": "/",
    "javascript:alert(1)": "/",
    "JaVaScRiPt:alert(1)": "/",
    "data:text/html,<script>alert(1)</script>": "/",
    "evil.example": "/",
    "/\u0000/evil.example": "/",
}


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    return found


def test_only_a_path_of_this_server_is_followed(node: str) -> None:
    script = (
        f'import {{ safeNext }} from "{NEXT_JS.as_uri()}";\n'
        "const cases = JSON.parse(process.argv[1]);\n"
        f"const out = Object.fromEntries(cases.map((n) => [n, safeNext(n, {json.dumps(ORIGIN)})]));\n"
        "process.stdout.write(JSON.stringify(out));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script, json.dumps(list(CASES))],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(done.stdout) == CASES
    # And a missing `next` (null from URLSearchParams.get) is the notebook.
    missing = subprocess.run(
        [
            node,
            "--input-type=module",
            "-e",
            f'import {{ safeNext }} from "{NEXT_JS.as_uri()}"; '
            f"process.stdout.write(safeNext(null, {json.dumps(ORIGIN)}));",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert missing.stdout == "/"
