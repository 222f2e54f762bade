"""exportSession and exportSpace as Markdown and notebooks, and `smriti export` of them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nbformat
from markdown_it import MarkdownIt

from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key
from tests.support.ops import checkpoint, create_session, create_space, send

SESSION = """query($s: ID!, $f: ExportFormat!) {
  exportSession(input: {sessionId: $s, format: $f}) { document mediaType fileName } }"""
SPACE = """query($s: ID!, $f: ExportFormat!) {
  exportSpace(input: {spaceId: $s, format: $f}) { document mediaType fileName } }"""


async def test_a_session_as_a_notebook(gql: GraphQLClient) -> None:
    built = await forked_space(gql)
    main = built["sessions"][0]
    exported = (await gql(SESSION, s=main, f="IPYNB"))["exportSession"]
    assert exported["mediaType"] == "application/x-ipynb+json"
    assert exported["fileName"] == "Main line.ipynb"
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


SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
JS_LINK = "[x](javascript:alert(3))"
REMOTE = "![t](https://evil.example/p.png)"
IFRAME = "<iframe src=https://evil.example></iframe>"
HOSTILE = f"{SCRIPT} {IMG} {JS_LINK} {REMOTE} {IFRAME}"
# A permissive viewer: raw HTML on, as GitHub, VS Code and Jupyter render it (then sanitise).
VIEWER = MarkdownIt("commonmark", {"html": True}).enable("table")
LIVE = re.compile(r"<(script|img|iframe)|href=\"javascript", re.IGNORECASE)


def assert_inert(markdown: str) -> None:
    """Nothing of the hostile text is live in the file or in a rendering of it
    (the script may stand as text in code: the user's block, and the echo
    model's reply quoting it in a code span)."""
    for live in (IMG, JS_LINK, REMOTE, IFRAME, "<img", "<iframe"):
        assert live not in markdown
    assert LIVE.search(VIEWER.render(markdown)) is None


async def test_hostile_text_is_inert_in_every_export(gql: GraphQLClient) -> None:
    space = await create_space(gql, f"Space {SCRIPT}")
    sid = (await create_session(gql, spaceId=space, title=f"Title {IMG}"))["id"]
    await send(gql, sid, f"Hello {HOSTILE}\n\n```html\n{SCRIPT}\n```")
    await checkpoint(
        gql,
        sid,
        f"Checkpoint {IFRAME}",
        objective=JS_LINK,
        summary=f"{REMOTE}\n{SCRIPT}",
        decisions=[IMG],
        tasks=[JS_LINK],
        openQuestions=[REMOTE],
        entities=[IFRAME],
    )

    session = (await gql(SESSION, s=sid, f="MARKDOWN"))["exportSession"]["document"]
    lineage = (await gql(SPACE, s=space, f="MARKDOWN"))["exportSpace"]["document"]
    notebook = nbformat.reads(
        (await gql(SESSION, s=sid, f="IPYNB"))["exportSession"]["document"], as_version=4
    )
    cells = {c.id.split("-")[0]: c.source for c in notebook.cells}

    # The user's own code block still reads as code, with the script in it as text.
    assert f"```html\n{SCRIPT}\n```" in session
    html = VIEWER.render(session)
    assert '<code class="language-html">&lt;script&gt;alert(1)&lt;/script&gt;' in html
    assert_inert(session)
    assert "\nHello &lt;script>alert(1)&lt;/script> &lt;img src=x onerror=alert(2)> " in session
    assert "\\[x\\](javascript:alert(3)) [t](https://evil.example/p.png) &lt;iframe" in session
    assert_inert(lineage)
    assert lineage.startswith("# Space &lt;script>alert(1)&lt;/script>\n")
    assert "\n**Summary:**\n\n[t](https://evil.example/p.png)\n&lt;script>" in lineage
    assert "\n- &lt;img src=x onerror=alert(2)>\n" in lineage
    assert set(cells) == {"session", "turn", "checkpoint"}
    for cell in notebook.cells:
        assert_inert(cell.source)
    assert cells["session"] == "# Title &lt;img src=x onerror=alert(2)>\n"
