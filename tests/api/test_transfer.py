"""JSON export and import: lossless, verified, never twice, all or nothing."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.databases import fresh_database
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.merging import MERGE, diverged, merge_input
from tests.support.ops import checkpoint, create_session, send
from tests.support.transfer import EXPORT, IMPORT, SCHEMA, VERIFY, export_document

COUNT = "query { spaces(first: 100) { edges { node { id } } } }"


def smriti(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
    )


def without_ids(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every local id replaced by its position: what must
    survive an import into another database unchanged."""
    result = copy.deepcopy(document)
    del result["exportedAt"]
    for space in result["spaces"]:
        del space["id"]
        cps = {c["id"]: i for i, c in enumerate(space["checkpoints"])}
        sessions = {s["id"]: i for i, s in enumerate(space["sessions"])}
        for c in space["checkpoints"]:
            c["id"] = cps[c["id"]]
            c["parentId"] = cps.get(c["parentId"])
            c["mergeParentId"] = cps.get(c["mergeParentId"])
            c["sourceSessionId"] = sessions.get(c["sourceSessionId"])
        for b in space["branches"]:
            b["headId"] = cps[b["headId"]]
        for s in space["sessions"]:
            s["id"] = sessions[s["id"]]
            s["seededFromId"] = cps.get(s["seededFromId"])
            s["forkedFromId"] = cps.get(s["forkedFromId"])
            if s["mount"]:
                s["mount"]["checkpointId"] = cps[s["mount"]["checkpointId"]]
            for t in s["turns"]:
                del t["id"]
    return result


async def test_export_is_complete_and_matches_the_schema(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    jsonschema.validate(document, SCHEMA)
    assert (document["format"], document["version"], document["sessions"]) == (
        "smriti-export",
        1,
        [],
    )
    [space] = document["spaces"]
    assert space["id"] == space["hashSpaceId"] == key(built["space"])
    assert [(c["title"], c["branchName"], c["hash"]) for c in space["checkpoints"]] == [
        (c["title"], c["branchName"], c["hash"]) for c in [*built["main"], built["alt"]]
    ]
    c0, c1, c2, alt = space["checkpoints"]
    assert [c["parentId"] for c in space["checkpoints"]] == [None, c0["id"], c1["id"], c0["id"]]
    assert alt["decisions"] == ["go left"] and c2["summary"] == "summary 2"
    assert all(c["mergeParentId"] is None for c in space["checkpoints"])
    assert c0["sourceTurnRange"] == {"first": 1, "last": 2}
    assert [(b["name"], b["headId"]) for b in space["branches"]] == [
        ("alt", alt["id"]),
        ("main", c2["id"]),
    ]
    main, fork, reader = space["sessions"]
    assert [t["sequenceNumber"] for t in main["turns"]] == [1, 2, 3, 4, 5, 6]
    assert [t["role"] for t in main["turns"][:2]] == ["USER", "ASSISTANT"]
    assert main["turns"][0]["content"] == "step 0"
    assert (fork["branchName"], fork["forkedFromId"]) == ("alt", c0["id"])
    assert reader["mount"] == {"checkpointId": c1["id"], "baseSequence": 0}
    assert c0["sourceSessionId"] == main["id"] and alt["sourceSessionId"] == fork["id"]


async def test_round_trip_through_a_fresh_database(gql: GraphQLClient, tmp_path: Path) -> None:
    built = await forked_space(gql)
    first = await export_document(gql, built["space"])
    file = tmp_path / "space.json"
    file.write_text(json.dumps(first))
    async with fresh_database(tmp_path / "other.sqlite3") as other:
        imported = smriti("import", str(file), "--database", other)
        assert imported.returncode == 0, imported.stderr
        assert imported.stdout == 'space 1 "Lineage": imported\n'
        again = smriti("import", str(file), "--database", other)
        assert again.stdout == 'space 1 "Lineage": already here, not imported again\n'
        verified = smriti("verify", "--database", other)
        assert verified.stdout == "space 1: verified, 4 checkpoints\n"
        out = tmp_path / "again.json"
        exported = smriti("export", "--all", "--output", str(out), "--database", other)
        assert exported.returncode == 0, exported.stderr
    second = json.loads(out.read_text())
    jsonschema.validate(second, SCHEMA)
    assert len(second["spaces"]) == 1
    assert second["spaces"][0]["hashSpaceId"] == key(built["space"])
    assert [c["hash"] for c in second["spaces"][0]["checkpoints"]] == [
        c["hash"] for c in first["spaces"][0]["checkpoints"]
    ]
    assert without_ids(second) == without_ids(first)


async def test_importing_the_same_document_twice_does_not_duplicate(
    gql: GraphQLClient,
) -> None:
    built = await forked_space(gql)
    document = (await gql(EXPORT, s=built["space"]))["exportSpace"]["document"]
    result = (await gql(IMPORT, d=document))["importSpace"]
    # The exported space is still here: it is the same space, not a copy.
    assert result == {
        "spaces": [{"id": built["space"], "name": "Lineage"}],
        "sessions": [],
        "created": 0,
        "errors": [],
    }
    assert len((await gql(COUNT))["spaces"]["edges"]) == 1


async def test_an_imported_space_keeps_hashing_with_its_origin_id(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    # Another origin (another creation time): imported beside the original,
    # under a new id, with its hashes unchanged.
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert (result["created"], result["errors"]) == (1, [])
    copy_id = result["spaces"][0]["id"]
    assert copy_id != built["space"]
    assert (await gql(VERIFY, s=copy_id))["verifyLineage"] == {"ok": True, "checked": 4}
    sid = (await create_session(gql, spaceId=copy_id, title="Later"))["id"]
    await send(gql, sid, "more")
    await checkpoint(gql, sid, "C3")
    assert (await gql(VERIFY, s=copy_id))["verifyLineage"] == {"ok": True, "checked": 5}


async def test_a_tampered_document_is_refused_whole(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    c2 = document["spaces"][0]["checkpoints"][2]
    c2["decisions"] = ["a decision nobody made"]
    c2["itemIds"]["decisions"] = ["forged"]  # consistent, but not what was hashed
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert result["spaces"] == [] and result["created"] == 0
    assert result["errors"] == [
        {
            "code": "TAMPERED",
            "message": f'Checkpoint {c2["id"]} ("C2", {c2["hash"][:12]}) does not verify '
            "(HASH_MISMATCH): the file was changed after export; nothing was imported.",
            "field": "document.spaces[0].checkpoints[2]",
        }
    ]
    assert len((await gql(COUNT))["spaces"]["edges"]) == 1


async def test_a_malformed_document_names_the_field(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    document["spaces"][0]["sessions"][0]["turns"][1]["role"] = "ROBOT"
    errors = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]["errors"]
    assert errors == [
        {
            "code": "INVALID",
            "message": "document.spaces[0].sessions[0].turns[1].role must be "
            "USER, ASSISTANT or SYSTEM.",
            "field": "document.spaces[0].sessions[0].turns[1].role",
        }
    ]
    errors = (await gql(IMPORT, d="{not json"))["importSpace"]["errors"]
    assert errors[0]["code"] == "INVALID" and errors[0]["field"] == "document"


async def test_the_command_line_refuses_a_tampered_file(
    gql: GraphQLClient, tmp_path: Path, database_url: str
) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"
    c0 = document["spaces"][0]["checkpoints"][0]
    c0["title"] = "Rewritten"
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(document))
    refused = smriti("import", str(file), "--database", database_url)
    assert refused.returncode == 1
    assert refused.stderr == (
        f'smriti: Checkpoint {c0["id"]} ("Rewritten", {c0["hash"][:12]}) does not verify '
        "(HASH_MISMATCH): the file was changed after export; nothing was imported "
        "(at document.spaces[0].checkpoints[0]).\n"
    )
    assert len((await gql(COUNT))["spaces"]["edges"]) == 1


async def test_what_the_database_would_refuse_is_refused_as_data(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    long_title = copy.deepcopy(document)
    long_title["spaces"][0]["sessions"][0]["title"] = "t" * 201
    errors = (await gql(IMPORT, d=json.dumps(long_title)))["importSpace"]["errors"]
    assert errors == [
        {
            "code": "INVALID",
            "message": "document.spaces[0].sessions[0].title must be at most 200 characters.",
            "field": "document.spaces[0].sessions[0].title",
        }
    ]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(long_title, SCHEMA)
    repeated = copy.deepcopy(document)
    turns = repeated["spaces"][0]["sessions"][0]["turns"]
    turns[1]["sequenceNumber"] = turns[0]["sequenceNumber"]
    errors = (await gql(IMPORT, d=json.dumps(repeated)))["importSpace"]["errors"]
    assert errors == [
        {
            "code": "INVALID",
            "message": "document.spaces[0].sessions[0].turns must be without a repeated "
            "sequence number.",
            "field": "document.spaces[0].sessions[0].turns",
        }
    ]
    assert len((await gql(COUNT))["spaces"]["edges"]) == 1


async def test_a_merge_verifies_and_survives_export_and_import(
    gql: GraphQLClient, tmp_path: Path
) -> None:
    lab = await diverged(gql)
    merged = (await gql(MERGE, input=merge_input(lab, title="Merged")))["mergeCheckpoints"]
    assert merged["errors"] == []
    first = await export_document(gql, lab["space"])
    jsonschema.validate(first, SCHEMA)
    checkpoints = first["spaces"][0]["checkpoints"]
    by_id = {c["id"]: c for c in checkpoints}
    [merge] = [c for c in checkpoints if c["mergeParentId"] is not None]
    assert (merge["title"], by_id[merge["mergeParentId"]]["title"]) == ("Merged", "A1")
    # The merge parent's hash is part of the merge's: verification needs it.
    assert (await gql(VERIFY, s=lab["space"]))["verifyLineage"] == {
        "ok": True,
        "checked": len(checkpoints),
    }
    file = tmp_path / "merged.json"
    file.write_text(json.dumps(first))
    async with fresh_database(tmp_path / "other.sqlite3") as other:
        imported = smriti("import", str(file), "--database", other)
        assert imported.returncode == 0, imported.stderr
        verified = smriti("verify", "--database", other)
        assert verified.stdout == f"space 1: verified, {len(checkpoints)} checkpoints\n"
        out = tmp_path / "again.json"
        exported = smriti("export", "--all", "--output", str(out), "--database", other)
        assert exported.returncode == 0, exported.stderr
    assert without_ids(json.loads(out.read_text())) == without_ids(first)


async def test_concurrent_imports_of_one_document_create_one_space(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"  # another origin
    text = json.dumps(document)
    results = await asyncio.gather(*(gql(IMPORT, d=text) for _ in range(4)))
    payloads = [result["importSpace"] for result in results]
    assert sorted(payload["created"] for payload in payloads) == [0, 0, 0, 1]
    assert {payload["spaces"][0]["id"] for payload in payloads} == {
        next(p["spaces"][0]["id"] for p in payloads if p["created"] == 1)
    }
    assert len((await gql(COUNT))["spaces"]["edges"]) == 2


async def test_the_command_line_streams_the_bytes_json_dumps_would_write(
    gql: GraphQLClient, tmp_path: Path, database_url: str
) -> None:
    built = await forked_space(gql)
    await create_session(gql, title="Ünïcode — outside any space")
    by_graphql = (await gql(EXPORT, s=built["space"]))["exportSpace"]["document"]

    def stamp_free(text: str) -> str:
        return "\n".join(line for line in text.split("\n") if '"exportedAt"' not in line)

    one = smriti("export", "--space", built["space"], "--database", database_url)
    assert one.returncode == 0, one.stderr
    assert stamp_free(one.stdout) == stamp_free(by_graphql)
    out = tmp_path / "all.json"
    everything = smriti("export", "--all", "--output", str(out), "--database", database_url)
    assert (everything.returncode, everything.stdout) == (0, ""), everything.stderr
    written = out.read_text(encoding="utf-8")
    document = json.loads(written)
    assert written == json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    assert [s["name"] for s in document["spaces"]] == ["Lineage"]
    assert [s["title"] for s in document["sessions"]] == ["Ünïcode — outside any space"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("all")] == ["all.json"]


async def test_the_command_line_prints_json_for_scripts(
    gql: GraphQLClient, tmp_path: Path, database_url: str
) -> None:
    built = await forked_space(gql)
    document = await export_document(gql, built["space"])
    document["spaces"][0]["createdAt"] = "2020-01-01T00:00:00.000000Z"  # another origin
    file = tmp_path / "space.json"
    file.write_text(json.dumps(document))
    imported = smriti("import", str(file), "--json", "--database", database_url)
    assert imported.returncode == 0, imported.stderr
    [space] = json.loads(imported.stdout)["spaces"]
    assert space == {
        "id": space["id"],
        "number": key(space["id"]),
        "name": "Lineage",
        "imported": True,
    }
    assert space["id"] != built["space"]
    again = smriti("import", str(file), "--json", "--database", database_url)
    assert json.loads(again.stdout) == {
        "format": "smriti",
        "spaces": [{**space, "imported": False}],
        "sessions": [],
    }

    args = ("export", "--space", built["space"], "--format", "markdown", "--database", database_url)
    text = smriti(*args).stdout
    assert json.loads(smriti(*args, "--json").stdout) == {"format": "markdown", "document": text}
    out = tmp_path / "space-again.json"
    written = smriti(
        "export",
        "--space",
        built["space"],
        "--output",
        str(out),
        "--json",
        "--database",
        database_url,
    )
    assert json.loads(written.stdout) == {
        "output": str(out),
        "format": "json",
        "bytes": out.stat().st_size,
    }
    assert json.loads(out.read_text())["spaces"][0]["name"] == "Lineage"


async def test_the_command_line_says_not_found_with_status_4(
    gql: GraphQLClient, tmp_path: Path, database_url: str
) -> None:
    file = tmp_path / "nothing.json"
    file.write_text(
        json.dumps({"format": "smriti-export", "version": 1, "spaces": [], "sessions": []})
    )
    for args, message in (
        (("export", "--space", "999"), "No space 999."),
        (("export", "--session", "999", "--format", "markdown"), "No session 999."),
        (("export", "--session", "999", "--format", "json"), "No session 999."),
        (("export", "--user", "nobody"), "No user named 'nobody'."),
        (("verify", "--user", "nobody"), "No user named 'nobody'."),
        (("import", str(file), "--user", "nobody"), "No user named 'nobody'."),
    ):
        missing = smriti(*args, "--database", database_url)
        assert (missing.returncode, missing.stdout, missing.stderr) == (
            4,
            "",
            f"smriti: {message}\n",
        ), args
