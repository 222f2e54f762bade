"""exportSession and exportSpace as Markdown and notebooks, and `smriti export` of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat

from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key

SESSION = """query($s: ID!, $f: ExportFormat!) {
  exportSession(input: {sessionId: $s, format: $f}) { document mediaType fileName } }"""
SPACE = """query($s: ID!, $f: ExportFormat!) {
  exportSpace(input: {spaceId: $s, format: $f}) { document mediaType fileName } }"""


async def test_a_session_as_a_notebook(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    main = built["sessions"][0]
    exported = (await gql(SESSION, s=main, f="IPYNB"))["exportSession"]
    assert exported["mediaType"] == "application/x-ipynb+json"
    assert exported["fileName"] == f"smriti-session-{key(main)}.ipynb"
    notebook = nbformat.reads(exported["document"], as_version=4)
    nbformat.validate(notebook)
    ids = [c.id for c in notebook.cells]
    c0, c1, c2 = (key(c["id"]) for c in built["main"])
    assert ids == [
        f"session-{key(main)}",
        "turn-1",
        "turn-2",
        f"checkpoint-{c0}",
        "turn-3",
        "turn-4",
        f"checkpoint-{c1}",
        "turn-5",
        "turn-6",
        f"checkpoint-{c2}",
    ]
    assert notebook.cells[1].source.endswith("\n\nstep 0\n")
    assert notebook.cells[3].source.startswith(
        f"### Checkpoint `{built['main'][0]['hash'][:7]}` · C0"
    )


async def test_a_session_and_a_lineage_as_markdown(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    fork = built["sessions"][1]
    text = (await gql(SESSION, s=fork, f="MARKDOWN"))["exportSession"]["document"]
    assert text.startswith("# Fork of C0\n\nBranch alt · model offline/echo · started ")
    assert "\n\nthe other way\n" in text and "· Alt1\n" in text
    assert text.index("the other way") < text.index("· Alt1\n")
    lineage = (await gql(SPACE, s=built["space"], f="MARKDOWN"))["exportSpace"]
    assert lineage["mediaType"] == "text/markdown"
    titles = [line for line in lineage["document"].splitlines() if line.startswith("### ")]
    assert [t.rsplit(" · ", 1)[1] for t in titles] == ["C0", "C1", "C2", "Alt1"]


async def test_json_of_a_session_in_a_space_says_to_export_the_space(
    gql: GraphQLClient,
) -> None:
    built = await forked_space(gql)
    body = await gql.raw(SESSION, s=built["sessions"][0], f="JSON")
    assert body["errors"][0]["extensions"]["code"] == "WRONG_SPACE"
    body = await gql.raw(SPACE, s=built["space"], f="IPYNB")
    assert body["errors"][0]["extensions"]["code"] == "INVALID"


async def test_the_command_line_writes_markdown_and_notebooks(
    gql: GraphQLClient, database_url: str
) -> None:
    built = await forked_space(gql)

    def smriti(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "api", "export", "--database", database_url, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
        )

    notebook = smriti("--session", str(key(built["sessions"][2])), "--format", "ipynb")
    assert notebook.returncode == 0, notebook.stderr
    nbformat.validate(nbformat.reads(notebook.stdout, as_version=4))
    assert json.loads(notebook.stdout)["metadata"]["title"] == "Reader"
    lineage = smriti("--space", built["space"], "--format", "markdown")
    assert lineage.stdout.startswith("# Lineage\n\n## Branches\n\n- alt: head ")
    refused = smriti("--all", "--format", "ipynb")
    assert (refused.returncode, refused.stderr) == (
        2,
        "smriti: --format ipynb writes one document: give --session.\n",
    )
