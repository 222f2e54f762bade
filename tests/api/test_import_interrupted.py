"""`smriti import` killed half-way, then run again (issue 29).

The command runs as a user runs it (``python -m api import FILE``) on a
generated ChatGPT export (``bench/chatgpt_export.py``); once its progress says
some conversations are imported, it is killed (SIGKILL: no clean-up of any
kind). The database then holds whole conversations only: each conversation
present has all its sessions (its line and every alternative), and each
session all its turns, exactly as a clean import of the same file writes them.
Run again, the import completes it, and the result equals a clean import:
the same sessions and turns, none twice.

What a database holds is read with `smriti export` (the lossless JSON), with
the database's own ids left out (a rolled-back insert may have used some).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.chatgpt_export import generate
from tests.conftest import fresh_database

CONVERSATIONS, MESSAGES, ALTERNATIVES = 120, 60, 3
ENV = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
IMPORTING = re.compile(r"^Importing: [\d,]+ of [\d,]+ messages, ([\d,]+) of ([\d,]+) conversations")


def smriti(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
        check=False,
    )


def snapshot(database_url: str) -> Counter[str]:
    """Every session the database holds, without ids: its fields, its turns,
    and the session it branched from named by that one's own snapshot."""
    done = smriti("export", "--database", database_url)
    assert done.returncode == 0, done.stderr
    sessions = json.loads(done.stdout)["sessions"]
    named: dict[int, str] = {}
    found: Counter[str] = Counter()
    for session in sorted(sessions, key=lambda s: s["id"]):  # an origin before its branches
        point = session["branchedFrom"]
        fields: dict[str, Any] = {k: v for k, v in session.items() if k != "id"}
        fields["turns"] = [{k: v for k, v in t.items() if k != "id"} for t in session["turns"]]
        if point is not None:
            fields["branchedFrom"] = {**point, "sessionId": named[point["sessionId"]]}
        text = json.dumps(fields, sort_keys=True)
        named[session["id"]] = text
        found[text] += 1
    return found


def whole(found: Counter[str]) -> None:
    """Each session holds its turns 1..lastSequenceNumber, and each conversation
    present holds its line and all its alternatives."""
    families: Counter[str] = Counter()
    for text in found:
        session = json.loads(text)
        numbers = [t["sequenceNumber"] for t in session["turns"]]
        assert numbers == list(range(1, session["lastSequenceNumber"] + 1))
        families[session["title"]] += found[text]
    assert set(families.values()) == {1 + ALTERNATIVES}


async def test_an_import_killed_half_way_keeps_whole_conversations_and_completes_when_run_again(
    tmp_path: Path, database_url: str, migrated_template: str
) -> None:
    file = tmp_path / "conversations.json"
    with file.open("w", encoding="utf-8") as out:
        generate(out, conversations=CONVERSATIONS, messages=MESSAGES, alternatives=ALTERNATIVES)
    async with fresh_database(tmp_path / "clean.sqlite3", template=migrated_template) as clean:
        done = smriti("import", str(file), "--database", clean)
        assert done.returncode == 0, done.stderr
        expected = snapshot(clean)
    assert sum(expected.values()) == CONVERSATIONS * (1 + ALTERNATIVES)
    whole(expected)

    seen: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", "api", "import", str(file), "--database", database_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    ) as killed:
        assert killed.stderr is not None
        for line in killed.stderr:  # progress: not a terminal, so whole lines
            seen.append(line)
            matched = IMPORTING.match(line)
            if matched and 0 < int(matched[1].replace(",", "")) < CONVERSATIONS:
                killed.send_signal(signal.SIGKILL)
                break
        else:
            pytest.fail(f"no progress line said it was half-way: {seen}")
        assert killed.wait(timeout=60) == -signal.SIGKILL

    partial = snapshot(database_url)
    whole(partial)
    assert 0 < sum(partial.values()) < sum(expected.values())
    assert partial <= expected  # whole and exact, none twice

    again = smriti("import", str(file), "--database", database_url)
    assert again.returncode == 0, again.stderr
    assert snapshot(database_url) == expected
