"""verifyLineage and `smriti verify`: tampering is found at the checkpoint tampered with."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key, tamper

VERIFY = """query($s: ID!) { verifyLineage(spaceId: $s) {
  ok checked firstBroken { checkpoint { id title hash } reason expectedHash } } }"""


async def test_an_untouched_space_verifies(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    data = await gql(VERIFY, s=built["space"])
    assert data["verifyLineage"] == {"ok": True, "checked": 4, "firstBroken": None}


async def test_an_edited_summary_breaks_at_that_checkpoint(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    c1 = built["main"][1]
    await tamper("UPDATE checkpoint SET summary = ? WHERE id = ?", ["rewritten", key(c1["id"])])
    result = (await gql(VERIFY, s=built["space"]))["verifyLineage"]
    assert result["ok"] is False
    assert result["checked"] == 2
    broken = result["firstBroken"]
    assert broken["checkpoint"] == {"id": c1["id"], "title": "C1", "hash": c1["hash"]}
    assert broken["reason"] == "HASH_MISMATCH"
    assert broken["expectedHash"] != c1["hash"] and len(broken["expectedHash"]) == 64


async def test_a_moved_parent_link_breaks_at_the_child(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    c0, _c1, c2 = built["main"]
    await tamper("UPDATE checkpoint SET parent_id = ? WHERE id = ?", [key(c0["id"]), key(c2["id"])])
    result = (await gql(VERIFY, s=built["space"]))["verifyLineage"]
    assert result["ok"] is False
    assert result["checked"] == 3
    assert result["firstBroken"]["checkpoint"]["title"] == "C2"
    assert result["firstBroken"]["reason"] == "HASH_MISMATCH"


async def test_a_parent_outside_the_space_is_named(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    other = await forked_space(gql)
    alt = built["alt"]
    await tamper(
        "UPDATE checkpoint SET parent_id = ? WHERE id = ?",
        [key(other["main"][0]["id"]), key(alt["id"])],
    )
    result = (await gql(VERIFY, s=built["space"]))["verifyLineage"]
    assert result["checked"] == 4
    assert result["firstBroken"]["checkpoint"]["title"] == "Alt1"
    assert result["firstBroken"]["reason"] == "MISSING_PARENT"
    assert result["firstBroken"]["expectedHash"] is None


async def test_an_unknown_space_is_null(gql: GraphQLClient) -> None:
    assert (await gql(VERIFY, s="U3BhY2U6OTk5"))["verifyLineage"] is None


def _cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", "verify", "--database", database_url, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )


async def test_the_command_line_names_the_first_bad_checkpoint(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    ok = _cli(database_url, "--space", str(space))
    assert (ok.returncode, ok.stdout) == (0, f"space {space}: verified, 4 checkpoints\n")
    c1 = built["main"][1]
    await tamper("UPDATE checkpoint SET title = ? WHERE id = ?", ["C1!", key(c1["id"])])
    bad = _cli(database_url)
    assert bad.returncode == 1
    assert bad.stdout.startswith(
        f'space {space}: BROKEN at checkpoint {key(c1["id"])} ({c1["hash"][:12]}, "C1!"): '
        "HASH_MISMATCH, its fields hash to "
    )
    assert bad.stdout.endswith(" (checked 2)\n")
    missing = _cli(database_url, "--space", "999")
    assert (missing.returncode, missing.stderr) == (4, "smriti: No space 999.\n")


async def test_the_command_line_prints_json_for_scripts(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    ok = _cli(database_url, "--json")
    assert (ok.returncode, json.loads(ok.stdout)) == (
        0,
        {
            "ok": True,
            "spaces": [
                {"id": built["space"], "number": space, "ok": True, "checked": 4, "broken": None}
            ],
        },
    )
    c1 = built["main"][1]
    await tamper("UPDATE checkpoint SET title = ? WHERE id = ?", ["C1!", key(c1["id"])])
    bad = _cli(database_url, "--space", built["space"], "--json")
    assert bad.returncode == 1
    found = json.loads(bad.stdout)
    expected_hash = found["spaces"][0]["broken"]["expectedHash"]
    assert found == {
        "ok": False,
        "spaces": [
            {
                "id": built["space"],
                "number": space,
                "ok": False,
                "checked": 2,
                "broken": {
                    "checkpoint": {
                        "id": c1["id"],
                        "number": key(c1["id"]),
                        "hash": c1["hash"],
                        "title": "C1!",
                    },
                    "reason": "HASH_MISMATCH",
                    "expectedHash": expected_hash,
                },
            }
        ],
    }
    assert len(expected_hash) == 64 and expected_hash != c1["hash"]
    missing = _cli(database_url, "--space", "999", "--json")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        4,
        "",
        "smriti: No space 999.\n",
    )
