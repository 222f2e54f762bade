"""`smriti spaces`, `state`, `search`, `checkpoint …`, `fork`, `merge` on the
local database, run as a script runs them: each is one MCP tool by name, so
--json prints what the tool answers (checked against GraphQL), the text is the
tool's short text, and a tool error is one line on stderr with its exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from api import exits
from api.store.database import sqlite_url
from tests.mcp.support import CHECKPOINT, PREVIEW, counts
from tests.mcp.support import smriti_process as smriti
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key


def answer(database_url: str, *args: str) -> Any:
    """The --json answer of a command that succeeds."""
    status, out, err = smriti(*args, "--json", "--database", database_url)
    assert (status, err) == (0, ""), err
    return json.loads(out)


SPACES = "{ spaces { edges { node { id name description } } } }"
LINE = """query($s: ID!) { space(id: $s) { lineage(first: 100) { edges { node {
  id hash title branchName parent { id } } } } } }"""


async def test_the_reading_commands_print_what_graphql_sees(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    space, c2 = key(built["space"]), built["main"][2]
    listed = answer(database_url, "spaces")
    seen = (await gql(SPACES))["spaces"]["edges"]
    assert [(s["id"], s["name"], s["description"]) for s in listed["spaces"]] == [
        (key(e["node"]["id"]), e["node"]["name"], e["node"]["description"]) for e in seen
    ]
    assert listed["hasMore"] is False

    state = answer(database_url, "state", str(space))
    assert state["headId"] == key(c2["id"])
    assert state["branches"] == [
        {"name": "alt", "headId": key(built["alt"]["id"])},
        {"name": "main", "headId": key(c2["id"])},
    ]
    assert state["changedIds"] == []
    assert state["brief"].startswith(
        f"Space {space} 'Lineage', branch main: head {key(c2['id'])} {c2['hash'][:7]} \"C2\" ("
    )
    since = answer(database_url, "state", str(space), "--since", str(key(built["main"][0]["id"])))
    assert since["changedIds"] == [key(c["id"]) for c in built["main"][1:]]

    shown = answer(database_url, "checkpoint", "show", str(key(c2["id"])))["checkpoint"]
    full = (await gql(CHECKPOINT, c=c2["id"]))["checkpoint"]
    assert (shown["hash"], shown["title"], shown["summary"], shown["branchName"]) == (
        full["hash"],
        full["title"],
        full["summary"],
        full["branchName"],
    )
    assert shown["parentId"] == key(full["parent"]["id"])
    by_hash = answer(
        database_url, "checkpoint", "show", "--space", str(space), "--hash", full["hash"][:8]
    )
    assert by_hash == {"checkpoint": shown}

    line = answer(database_url, "checkpoint", "list", "--space", str(space), "--branch", "alt")
    assert line["branch"] == "alt"
    assert [(c["id"], c["title"]) for c in line["checkpoints"]] == [
        (key(built["alt"]["id"]), "Alt1"),
        (key(built["main"][0]["id"]), "C0"),
    ]
    first = answer(database_url, "checkpoint", "list", "--space", str(space), "--first", "2")
    assert [c["title"] for c in first["checkpoints"]] == ["C2", "C1"]

    found = answer(database_url, "search", "left", "--space", str(space))
    assert ("checkpoint", key(built["alt"]["id"])) in [(h["kind"], h["id"]) for h in found["hits"]]
    turns = answer(database_url, "search", "other way", "--kind", "turn")["hits"]
    assert turns and {h["kind"] for h in turns} == {"turn"}
    assert answer(database_url, "search", "left", "--kind", "session", "--kind", "space") == {
        "hits": [],
        "hasMore": False,
    }
    assert answer(database_url, "search", "nothing-like-this")["hits"] == []


async def test_the_text_form_is_the_tools_short_text(gql: GraphQLClient, database_url: str) -> None:
    built = await forked_space(gql)
    await gql.drain()
    space = key(built["space"])
    status, out, err = smriti("spaces", "--database", database_url)
    assert (status, out, err) == (0, f"{space} Lineage\n", "")
    status, out, _ = smriti(
        "checkpoint", "list", "--space", str(space), "--branch", "alt", "--database", database_url
    )
    line = (await gql(LINE, s=built["space"]))["space"]["lineage"]["edges"]
    hashes = {key(e["node"]["id"]): e["node"]["hash"][:12] for e in line}
    alt, c0 = key(built["alt"]["id"]), key(built["main"][0]["id"])
    assert (status, out) == (0, f"{alt} {hashes[alt]} [alt] Alt1\n{c0} {hashes[c0]} [main] C0\n")
    state = answer(database_url, "state", str(space))
    status, out, _ = smriti("state", str(space), "--database", database_url)
    assert (status, out) == (0, state["brief"] + "\n")


async def test_an_agents_flow_fork_save_and_merge_from_the_command_line(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    space, c2 = key(built["space"]), built["main"][2]
    before = await counts(gql, built["space"])
    forked = answer(database_url, "fork", str(key(c2["id"])), "--branch", "agent-a")
    assert forked == {
        "sessionId": forked["sessionId"],
        "spaceId": space,
        "branchName": "agent-a",
        "title": "Fork of C2",
    }
    session = str(forked["sessionId"])
    dry = answer(
        database_url,
        "checkpoint",
        "create",
        "--session",
        session,
        "--title",
        " A1 ",
        "--decision",
        "Use SQLite",
        "--decision",
        "Use SQLite",
        "--dry-run",
    )
    assert (dry["saved"], dry["content"]["title"], dry["content"]["decisions"]) == (
        False,
        "A1",
        ["Use SQLite"],
    )
    assert dry["carried"]["fromCheckpointId"] == key(c2["id"])
    assert await counts(gql, built["space"]) == (before[0], {**before[1], "agent-a": c2["id"]})
    saved = answer(
        database_url,
        "checkpoint",
        "create",
        "--session",
        session,
        "--title",
        "A1",
        "--decision",
        "Use SQLite",
        "--task",
        "write the tests",
        "--question",
        "which index?",
    )
    a1 = saved["checkpoint"]
    full = (await gql(CHECKPOINT, c=_gid(a1["id"])))["checkpoint"]
    assert (a1["hash"], a1["decisions"], a1["tasks"], a1["openQuestions"]) == (
        full["hash"],
        ["Use SQLite"],
        ["write the tests"],
        ["which index?"],
    )
    assert (full["branchName"], key(full["parent"]["id"])) == ("agent-a", key(c2["id"]))

    preview = answer(database_url, "merge", "--space", str(space), "--from", "agent-a", "--dry-run")
    seen = (await gql(PREVIEW, s=built["space"], into="main", **{"from": _gid(a1["id"])}))[
        "previewMerge"
    ]
    assert (preview["fastForward"], preview["oursId"], preview["theirsId"]) == (
        seen["fastForward"],
        key(seen["ours"]["id"]),
        key(seen["theirs"]["id"]),
    )
    assert preview["fastForward"] is True
    assert await counts(gql, built["space"]) == (
        before[0] + 1,
        {**before[1], "agent-a": _gid(a1["id"])},
    )
    merged = answer(database_url, "merge", "--space", str(space), "--from", "agent-a")
    assert (merged["fastForward"], merged["checkpoint"]["id"]) == (True, a1["id"])
    heads = (await counts(gql, built["space"]))[1]
    assert heads["main"] == heads["agent-a"] == _gid(a1["id"])


def _gid(number: int) -> str:
    from api.graphql.core import ids

    return ids.encode("Checkpoint", number)


async def test_a_conflict_is_exit_7_until_resolved(gql: GraphQLClient, database_url: str) -> None:
    built = await forked_space(gql)
    await gql.drain()
    space, c2 = key(built["space"]), built["main"][2]
    a = answer(database_url, "fork", str(key(c2["id"])), "--branch", "a")
    a1 = answer(
        database_url,
        "checkpoint",
        "create",
        "--session",
        str(a["sessionId"]),
        "--title",
        "A1",
        "--decision",
        "Use SQLite",
    )["checkpoint"]
    b = answer(database_url, "fork", str(a1["id"]), "--branch", "b")
    answer(
        database_url,
        "checkpoint",
        "create",
        "--session",
        str(b["sessionId"]),
        "--title",
        "B1",
        "--decision",
        "use sqlite!",
    )
    answer(database_url, "checkpoint", "create", "--session", str(a["sessionId"]), "--title", "A2")
    preview = answer(
        database_url, "merge", "--space", str(space), "--from", "b", "--into", "a", "--dry-run"
    )
    assert preview["conflictCount"] == 1
    assert preview["lists"]["decisions"]["conflicts"] == [
        {"text": "use sqlite!", "origin": "THEIRS"}
    ]
    lineage = await counts(gql, built["space"])
    status, out, err = smriti(
        "merge", "--space", str(space), "--from", "b", "--into", "a", "--database", database_url
    )
    assert (status, out) == (exits.CONFLICT, "")
    assert err.startswith("smriti: ") and err.count("\n") == 1
    assert await counts(gql, built["space"]) == lineage
    merged = answer(
        database_url,
        "merge",
        "--space",
        str(space),
        "--from",
        "b",
        "--into",
        "a",
        "--title",
        "AB",
        "--resolve",
        "decisions:keep:use sqlite!",
    )
    assert merged["fastForward"] is False
    assert (merged["checkpoint"]["title"], merged["checkpoint"]["decisions"]) == (
        "AB",
        ["use sqlite!"],
    )
    assert merged["checkpoint"]["branchName"] == "a"


async def test_exit_statuses_not_found_usage_and_database(
    gql: GraphQLClient, database_url: str, tmp_path: Path
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    space = key(built["space"])
    db = ("--database", database_url)
    assert smriti("checkpoint", "show", "999", *db) == (
        exits.NOT_FOUND,
        "",
        "smriti: No such checkpoint.\n",
    )
    assert smriti("state", "999", *db)[0] == exits.NOT_FOUND
    assert smriti("checkpoint", "list", "--space", str(space), "--branch", "nope", *db) == (
        exits.NOT_FOUND,
        "",
        'smriti: No branch "nope" in this space.\n',
    )
    assert smriti("merge", "--space", str(space), "--from", "nope", *db)[0] == exits.NOT_FOUND
    assert smriti("checkpoint", "show", *db) == (
        exits.USAGE,
        "",
        "smriti: Give a checkpoint's number, or --space and --hash.\n",
    )
    assert smriti("checkpoint", "show", "1", "--space", "1", *db)[0] == exits.USAGE
    assert smriti("checkpoint", "create", "--session", "1", *db) == (
        exits.USAGE,
        "",
        "smriti: Give --markdown FILE, or --title and the other fields.\n",
    )
    missing_file = str(tmp_path / "none.md")
    assert smriti(
        "checkpoint", "create", "--session", "1", "--markdown", "-", "--title", "T", *db
    ) == (
        exits.USAGE,
        "",
        "smriti: Give --markdown or the fields (--title, …), not both.\n",
    )
    assert smriti("checkpoint", "create", "--session", "1", "--markdown", missing_file, *db) == (
        exits.USAGE,
        "",
        f"smriti: Cannot read --markdown {missing_file}: FileNotFoundError.\n",
    )
    status, out, err = smriti("state", "first", *db)
    assert (status, out) == (exits.USAGE, "")
    assert err.endswith("smriti: Argument SPACE: a number (1, 2, …), not 'first'.\n")
    status, _, err = smriti("merge", "--space", "1", "--from", "b", "--resolve", "x", *db)
    assert status == exits.USAGE
    assert "FIELD:keep|drop|into|from:ITEM with FIELD one of decisions, tasks, openQuestions" in err
    assert smriti("search", "x", "--first", "500", *db) == (
        exits.USAGE,
        "",
        "smriti: `first` is a whole number from 1 to 100.\n",
    )
    assert smriti("search", "x", "--url", "http://127.0.0.1:1", *db)[0] == exits.USAGE
    missing = sqlite_url(tmp_path / "none.db")
    status, out, err = smriti("spaces", "--database", missing)
    assert (status, out) == (exits.DATABASE, "")
    assert err.startswith("smriti: No database at ")
    # Nothing listens on port 1: --url (or SMRITI_URL) names no server.
    assert smriti("spaces", env={"SMRITI_URL": "http://127.0.0.1:1"}) == (
        exits.DATABASE,
        "",
        "smriti: Cannot reach a server at http://127.0.0.1:1/mcp.\n",
    )


def test_smriti_help_lists_the_commands_for_scripts_and_agents() -> None:
    status, out, _ = smriti("--help")
    assert status == 0
    text = " ".join(out.split())
    for command, words in (
        ("spaces", "List the spaces you can read."),
        ("mcp", "Serve the MCP tools to an agent over stdio (the local database's, or with --url"),
        ("state", "Where a space stands: a continuation brief for a prompt"),
        ("checkpoint", "Checkpoints: show one, list a branch's, create one."),
        ("merge", "Merge a branch's head into another branch (or preview it with --dry-run)"),
    ):
        assert f"{command} {words}" in text
    status, out, _ = smriti("checkpoint", "create", "--help")
    text = " ".join(out.split())
    assert "on a session's branch (it calls the MCP tool save_checkpoint): from Markdown" in text
    assert "--markdown FILE The checkpoint as Markdown (- for standard input)." in text


async def test_checkpoint_create_passes_markdown_from_a_file_or_stdin(
    gql: GraphQLClient, database_url: str, tmp_path: Path
) -> None:
    built = await forked_space(gql)
    await gql.drain()
    c2 = key(built["main"][2]["id"])
    session = str(answer(database_url, "fork", str(c2), "--branch", "notes")["sessionId"])
    notes = "# Route chosen\n\n## Objective\nGet there\n\n## Decisions\n- Take the night train\n"
    (tmp_path / "notes.md").write_text(notes, encoding="utf-8")
    dry = answer(
        database_url,
        "checkpoint",
        "create",
        "--session",
        session,
        "--markdown",
        str(tmp_path / "notes.md"),
        "--dry-run",
    )
    assert (dry["saved"], dry["content"]["title"], dry["content"]["objective"]) == (
        False,
        "Route chosen",
        "Get there",
    )
    assert dry["content"]["decisions"] == ["Take the night train"]
    status, out, err = smriti(
        "checkpoint",
        "create",
        "--session",
        session,
        "--markdown",
        "-",
        "--json",
        "--database",
        database_url,
        stdin=notes,
    )
    assert (status, err) == (0, "")
    saved = json.loads(out)["checkpoint"]
    full = (await gql(CHECKPOINT, c=_gid(saved["id"])))["checkpoint"]
    assert (full["title"], full["decisions"], full["branchName"]) == (
        "Route chosen",
        ["Take the night train"],
        "notes",
    )
    status, out, err = smriti(
        "checkpoint",
        "create",
        "--session",
        session,
        "--markdown",
        "-",
        "--database",
        database_url,
        stdin="no heading first\n",
    )
    assert (status, out) == (exits.USAGE, "")
    assert err.startswith("smriti: ") and err.count("\n") == 1
