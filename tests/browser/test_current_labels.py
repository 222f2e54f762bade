"""Every label of a session is current without a reload: the badge and the `ctx:`
line after a merge or a fast-forward, the sidebar's title as soon as the header's,
a checkpoint saved with no new turns at its place, the new cell scrolled into view."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.support import (
    CREATE_CHECKPOINT,
    VIEWPORT,
    create_space,
    gql,
    lineage_with_a_conflict,
    new_session,
    open_app,
    open_lineage,
    save_checkpoint,
    send,
    session_id,
)
from tests.support.servers import SmritiServer

WIDTHS = [390, 1440]
HEAD = (
    """query($s: ID!) { session(id: $s) { space { branches { name head { id shortHash } } } } }"""
)


def head(server: SmritiServer, sid: str, branch: str = "main") -> dict[str, Any]:
    space = gql(server.base_url, HEAD, s=sid)["session"]["space"]
    found: dict[str, Any] = next(b["head"] for b in space["branches"] if b["name"] == branch)
    return found


def merge_dialog(page: Page) -> Any:
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_be_visible()
    return dialog


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def test_after_a_merge_the_badge_and_ctx_line_show_the_new_head(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    lab = lineage_with_a_conflict(server.base_url)
    context = browser.new_context(viewport={"width": width, "height": VIEWPORT["height"]})
    page = context.new_page()
    open_app(page, server.base_url, f"/?session={lab['main']}")
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {lab['m1']['shortHash']}")
    open_lineage(page)
    graph = page.locator("lineage-graph")
    graph.get_by_role("button", name="Branch alt", exact=True).click()
    graph.get_by_role("group", name="Branch alt").get_by_role("button", name="Merge into…").click()
    dialog = merge_dialog(page)
    dialog.get_by_label("Keep alt's “use SQLite!”").check()  # the one conflict, decided
    dialog.get_by_label("Merge title").fill("Merged alt")
    dialog.get_by_role("button", name="Save merge").click()
    expect(dialog).to_be_hidden()

    merged = head(server, lab["main"])
    assert merged["shortHash"] not in (lab["m1"]["shortHash"], lab["a1"]["shortHash"])
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {merged['shortHash']}")
    expect(page.locator("composer-cell")).to_contain_text(f"ctx: HEAD · {merged['shortHash']} (")
    context.close()


def test_after_a_fast_forward_the_badge_and_ctx_line_show_the_new_head(
    page: Page, server: SmritiServer
) -> None:
    base_url = server.base_url
    space_id = gql(
        base_url, 'mutation { createSpace(input: {name: "FF badge"}) { space { id } } }'
    )["createSpace"]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "m"}) { session { id } } }',
        s=space_id,
    )["createSession"]["session"]["id"]
    base = gql(base_url, CREATE_CHECKPOINT, input={"sessionId": main, "title": "Base"})
    base_checkpoint = base["createCheckpoint"]["checkpoint"]
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base_checkpoint["id"],
    )["forkSession"]["session"]["id"]
    a1 = gql(base_url, CREATE_CHECKPOINT, input={"sessionId": alt, "title": "A1"})
    a1_short = a1["createCheckpoint"]["checkpoint"]["shortHash"]
    open_app(page, base_url, f"/?session={main}")
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {base_checkpoint['shortHash']}")
    page.get_by_role("button", name=re.compile(f"^{a1_short} A1")).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = merge_dialog(page)
    dialog.get_by_role("button", name="Fast-forward").click()
    expect(dialog).to_be_hidden()

    expect(page.locator("context-badge")).to_have_text(f"HEAD · {a1_short}")
    expect(page.locator("composer-cell")).to_contain_text(f"ctx: HEAD · {a1_short} (")


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def test_the_sidebar_shows_the_automatic_title_when_the_header_does(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": VIEWPORT["height"]})
    page = context.new_page()
    open_app(page, server.base_url)
    space = f"Titles {width}"
    if page.locator("#left-toggle").is_visible():
        page.locator("#left-toggle").click()
    create_space(page, space)
    new_session(page, space)
    sid = unquote(session_id(page))  # the URL's id, decoded ("…%3D" is "…=")
    send(page, "Plan a week walking the Larapinta Trail.")
    title = page.locator("session-header h1")
    expect(title).not_to_have_text("Untitled session")
    named = gql(server.base_url, "query($s: ID!) { session(id: $s) { title } }", s=sid)
    assert named["session"]["title"]
    expect(title).to_have_text(named["session"]["title"])
    href = "/?session=" + quote(sid, safe="")
    row = page.locator(f'space-list a.name[href="{href}"]')
    expect(row).to_have_text(named["session"]["title"])
    context.close()


def test_a_checkpoint_saved_with_no_new_turns_sits_after_the_last_turn(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "No new turns")
    new_session(page, "No new turns")
    sid = unquote(session_id(page))  # the URL's id, decoded ("…%3D" is "…=")
    send(page, "Day one in Hobart.")
    save_checkpoint(page, "Hobart")
    save_checkpoint(page, "Hobart again")
    cells = page.locator("checkpoint-cell")
    expect(cells).to_have_count(2)
    # Both after turn 2 (the last), oldest first, as exportSession puts them.
    assert page.locator("#turn-2 + checkpoint-cell + checkpoint-cell").count() == 1
    assert page.locator("checkpoint-cell + #turn-1").count() == 0
    exported = gql(
        server.base_url,
        "query($s: ID!) { exportSession(input: {sessionId: $s, format: MARKDOWN}) { document } }",
        s=sid,
    )["exportSession"]["document"]
    headings = re.findall(r"^### (?:Checkpoint `\w+` · (.+)|(\d+)\. )", exported, re.M)
    assert [title or number for title, number in headings] == ["1", "2", "Hobart", "Hobart again"]
    expect(cells.last).to_contain_text("Hobart again")


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def test_the_new_checkpoint_cell_is_scrolled_into_view_after_save(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": VIEWPORT["height"]})
    page = context.new_page()
    open_app(page, server.base_url)
    space = f"Scroll {width}"
    if page.locator("#left-toggle").is_visible():
        page.locator("#left-toggle").click()
    create_space(page, space)
    new_session(page, space)
    for day in range(1, 5):
        send(page, f"Day {day}: walk from hut {day} to hut {day + 1}. " + "Long notes. " * 40)
    save_checkpoint(page, "Overland Track")
    cell = page.locator("checkpoint-cell", has_text="Overland Track")
    expect(cell).to_be_in_viewport()
    # Saved again with nothing new: that cell too, at the end, not the top of the notebook.
    save_checkpoint(page, "Overland Track, revised")
    expect(page.locator("checkpoint-cell", has_text="revised")).to_be_in_viewport()
    context.close()
