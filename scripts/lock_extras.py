"""Pin, in a lock written by ``uv pip compile``, the extras that locked packages ask for.

Why: litellm asks for ``httpx[http2]`` and mcp for ``pyjwt[crypto]``. uv writes the lock
with ``httpx==0.28.1`` only, and pip (23.2, the one ``python -m venv`` brings) treats a
requirement with an extra as a package of its own that the lock does not pin: once a
newer httpx was on the index (2026-12-02, httpx 0.29.0), ``pip install --require-hashes
-r requirements.lock`` refused to install at all ("all requirements must have their
versions pinned with =="). A line ``httpx[http2]==0.28.1`` with the same hashes pins
it; the extra's own dependencies (h2, cryptography) are in the lock already.

``EXTRAS`` lists them; ``tests/test_packaging.py`` fails when a locked package asks for
an extra that is not listed here, so the next one is not found by a user's failed install.

Usage: python3 scripts/lock_extras.py requirements.lock [requirements-dev.lock ...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# package -> (extra, who asks for it)
EXTRAS = {"httpx": ("http2", "litellm"), "pyjwt": ("crypto", "mcp")}


def pin_extras(text: str) -> str:
    """``text`` with a pinned, hashed ``name[extra]==version`` block after each listed
    package's own block (unchanged if it is there already or the package is not locked)."""
    for name, (extra, asker) in EXTRAS.items():
        if f"\n{name}[{extra}]==" in text:
            continue
        block = re.search(
            rf"^{re.escape(name)}==(?P<version>\S+) \\\n(?P<hashes>(?:    --hash=\S+(?: \\)?\n)+)"
            rf"(?P<comments>(?:    #.*\n)*)",
            text,
            re.MULTILINE,
        )
        if block is None:
            continue
        pinned = (
            f"{name}[{extra}]=={block['version']} \\\n{block['hashes']}"
            f"    # via {asker} (the {extra} extra, pinned: scripts/lock_extras.py says why)\n"
        )
        text = text[: block.end()] + pinned + text[block.end() :]
    return text


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        path.write_text(pin_extras(path.read_text()))


if __name__ == "__main__":
    main(sys.argv[1:])
