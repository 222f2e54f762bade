"""The lineage panel says "verified" (or raises an alarm); "Export…" downloads documents."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import blocking, run_axe, summary
from tests.browser.support import database_pk, gql, open_app, open_lineage
from tests.support.servers import SmritiServer

SPACE = "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }"
SESSION = "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }"
CHECKPOINT = """mutation($s: ID!, $t: String!) { createCheckpoint(input: {sessionId: $s, title: $t}) {
  checkpoint { id shortHash } errors { message } } }"""


def test_verified_then_alarm_after_tampering(
    page: Page, server: SmritiServer, database: Path
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Audited")["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    gql(base, CHECKPOINT, s=session, t="First")
    second = gql(base, CHECKPOINT, s=session, t="Second")["createCheckpoint"]["checkpoint"]

    open_app(page, base, f"/?session={session}")
    head = page.locator("lineage-graph .pane-head")
    expect(head.locator(".verified")).to_have_text("✓ verified")
    expect(head.locator("[role=alert]")).to_have_count(0)

    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER checkpoint_immutable")
        db.execute(
            "UPDATE checkpoint SET summary = 'edited behind Smriti' WHERE id = ?",
            (database_pk(second["id"]),),
        )
    page.reload()
    alarm = page.locator("lineage-graph .pane-head [role=alert]")
    expect(alarm).to_have_text(
        f"⚠ Lineage altered: checkpoint {second['shortHash']} “Second”: its hash does not match."
    )
    expect(head.locator(".verified")).to_have_count(0)
    # The broken checkpoint is marked on the graph and in its notebook cell.
    node = page.locator(f"lineage-graph g.node[data-id='{second['id']}']")
    expect(node).to_have_class(re.compile(r"\bbroken\b"))
    expect(node).to_have_attribute(
        "aria-label",
        f"{second['shortHash']} ⚠ altered Second main, checkpoint on main (head): "
        "its hash does not match",
    )
    expect(page.locator("lineage-graph g.node.broken")).to_have_count(1)
    cell = page.locator(f"checkpoint-cell[data-checkpoint='{second['id']}']")
    expect(cell.locator(".broken-tag")).to_have_text("⚠ altered: its hash does not match")
    expect(page.locator("checkpoint-cell .broken-tag")).to_have_count(1)


@pytest.mark.parametrize("width", [390, 1440])
def test_the_alarm_has_room(
    browser: Browser, server: SmritiServer, database: Path, width: int
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Audited at a width")["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    title = "A checkpoint with a long title that the alarm repeats in full"
    saved = gql(base, CHECKPOINT, s=session, t=title)["createCheckpoint"]["checkpoint"]
    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER IF EXISTS checkpoint_immutable")
        db.execute(
            "UPDATE checkpoint SET summary = 'edited' WHERE id = ?", (database_pk(saved["id"]),)
        )
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    open_app(page, base, f"/?session={session}")
    open_lineage(page)
    alarm = page.locator("lineage-graph .pane-head [role=alert]")
    expect(alarm).to_contain_text(title)
    # A row of its own (beside the pane's title it was squeezed into a narrow column),
    # all of its text inside it; and the node's mark in view.
    room = alarm.evaluate(
        """(el) => {
          const head = el.closest(".pane-head");
          const box = el.getBoundingClientRect();
          const mark = el.closest("lineage-graph").querySelector(".broken-tag")
            .getBoundingClientRect();
          return [box.width >= head.clientWidth - 1, el.scrollWidth <= el.clientWidth,
            box.right <= window.innerWidth, mark.right <= window.innerWidth];
        }"""
    )
    assert room == [True, True, True, True]
    context.close()


def test_export_downloads_the_session_and_the_space(page: Page, server: SmritiServer) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Exported")["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    gql(base, CHECKPOINT, s=session, t="Saved")
    open_app(page, base, f"/?session={session}")
    picker = page.get_by_label("Export", exact=True)
    with page.expect_download() as markdown:
        picker.select_option("MARKDOWN")
    # an untitled session: its number (a title is used when there is one)
    assert markdown.value.suggested_filename == f"smriti-session-{database_pk(session)}.md"
    text = Path(markdown.value.path()).read_text(encoding="utf-8")
    assert "· Saved\n" in text
    with page.expect_download() as space_json:
        picker.select_option("SPACE_JSON")
    assert space_json.value.suggested_filename == "Exported.json"  # the space's name
    document = json.loads(Path(space_json.value.path()).read_text(encoding="utf-8"))
    assert [c["title"] for c in document["spaces"][0]["checkpoints"]] == ["Saved"]
    expect(picker).to_have_value("")


FORK = """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
  session { id } } }"""


@pytest.mark.parametrize("width", [390, 1440])
def test_the_checkpoint_form_warns_on_a_line_that_does_not_verify(
    browser: Browser, server: SmritiServer, database: Path, width: int
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n=f"Broken line {width}")["createSpace"]["space"]["id"]
    main = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    first = gql(base, CHECKPOINT, s=main, t="First")["createCheckpoint"]["checkpoint"]
    second = gql(base, CHECKPOINT, s=main, t="Second")["createCheckpoint"]["checkpoint"]
    # alt forks from First: the altered Second is not on its line.
    alt = gql(base, FORK, c=first["id"])["forkSession"]["session"]["id"]
    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER IF EXISTS checkpoint_immutable")
        db.execute(
            "UPDATE checkpoint SET summary = 'edited' WHERE id = ?", (database_pk(second["id"]),)
        )
    context = browser.new_context(viewport={"width": width, "height": 844}, bypass_csp=True)
    page = context.new_page()
    open_app(page, base, f"/?session={main}")
    expect(page.locator("checkpoint-cell .broken-tag")).to_have_count(1)  # the lineage is in
    page.get_by_role("button", name="Save checkpoint").first.click()
    form = page.locator("checkpoint-form")
    warning = form.get_by_role("alert")
    expect(warning).to_have_text(
        f"⚠ This line does not verify: checkpoint {second['shortHash']} “Second” was altered "
        "(its hash does not match). A checkpoint saved here extends it, so its parent chain "
        "will not verify either."
    )
    assert warning.evaluate(
        "(el) => el.getBoundingClientRect().right <= window.innerWidth"
        " && el.scrollWidth <= el.clientWidth"
    )
    save = form.get_by_role("button", name="Save anyway")
    expect(form.get_by_role("button", name="Save checkpoint")).to_have_count(0)
    # The warning and the danger button add no serious or critical axe finding.
    assert summary(blocking(run_axe(page))) == []
    form.get_by_label("Title").fill("Third, on a broken line")
    # Ctrl+Enter does not save past the warning: it moves to "Save anyway".
    form.get_by_label("Title").press("Control+Enter")
    expect(save).to_be_focused()
    expect(page.locator("checkpoint-cell")).to_have_count(2)
    save.click()  # the explicit confirmation
    expect(form).to_be_hidden()
    expect(page.locator("checkpoint-cell")).to_have_count(3)
    expect(page.locator("checkpoint-cell", has_text="Third, on a broken line")).to_have_count(1)

    # A session on alt (forked before the altered checkpoint): no warning, plain Save.
    open_app(page, base, f"/?session={alt}")
    expect(page.locator("lineage-graph .pane-head [role=alert]")).to_have_count(1)
    page.get_by_role("button", name="Save checkpoint").first.click()
    expect(form.get_by_label("Title")).to_be_visible()
    expect(form.get_by_role("alert")).to_have_count(0)
    expect(form.get_by_role("button", name="Save checkpoint")).to_be_visible()
    expect(form.get_by_role("button", name="Save anyway")).to_have_count(0)
    context.close()
