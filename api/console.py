"""What the command line prints: data on stdout, messages in one style on stderr.

A message is a sentence: a capital letter first, a full stop last. An error is
prefixed with "smriti: " (``fail``); a notice of what a command did is not
(``notice``). Text this program does not word itself (argparse's, an operating
system's) is made a sentence the same way, so a script or a person reading
stderr sees one style whichever part failed. A sentence that opens with a name
as written elsewhere (``document.format``, ``--port``, ``'ada'``) keeps it as it is.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def sentence(text: str) -> str:
    """``text`` with a capital first letter and a closing full stop."""
    text = text.strip()
    if not text:
        return text
    first = text.split(maxsplit=1)[0].rstrip(",:;")
    if first.isalpha() and first.islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def fail(status: int, message: str) -> int:
    """Say what went wrong on stderr; the exit status, to return."""
    print(f"smriti: {sentence(message)}", file=sys.stderr)
    return status


def notice(message: str) -> None:
    """Say what was done, on stderr (stdout is for data)."""
    print(sentence(message), file=sys.stderr)


def print_json(value: Any) -> None:
    """One JSON document on stdout, for ``--json``."""
    print(json.dumps(value, indent=2, ensure_ascii=False))
