"""The notebook from 390 px phones to wide screens: nothing scrolls sideways, the
message box and Send work, every pane can be reached, touch targets are big enough."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from api.store.database import sqlite_url
from tests.browser.support import HIT, SIDEWAYS, gql, open_app, seed_turns, warm_up
from tests.support.servers import SmritiServer

SIZES = [(360, 740), (390, 844), (820, 1180), (1024, 768), (1160, 800), (1280, 800), (1440, 900)]
# As wide as the model picker used to grow: it pushed Send under the lineage pane.
LONG_MODEL = "an-extremely-long-model-name-for-a-local-lab-server-2026-preview-instruct"


@pytest.fixture(scope="module")
def server(database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmritiServer]:
    providers = tmp_path_factory.mktemp("providers") / "providers.yaml"
    providers.write_text(
        "chat_default: offline/echo\nbackground_intelligence: offline/extractor\nproviders:\n"
        '  lab:\n    litellm_provider: openai\n    api_base: "http://127.0.0.1:9/v1"\n'
        f"    api_key_env: SMRITI_TEST_UNSET_KEY\n    models: [{LONG_MODEL}]\n"
    )
    with SmritiServer(sqlite_url(database), providers=providers) as running:
        warm_up(running.base_url)
        yield running


def reach(page: Page, pane: str) -> None:
    """Open the pane's drawer when it is one ("left-toggle" / "right-toggle")."""
    toggle = page.locator(f"#{pane}-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def clickable(page: Page, selector: str) -> bool:
    return bool(page.evaluate(HIT, selector))


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_pane_and_control_is_reachable_without_sideways_scroll(
    browser: Browser, server: SmritiServer, width: int, height: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    open_app(page, server.base_url)
    assert page.evaluate(SIDEWAYS) <= 0

    # The first screen says how to start, with buttons.
    empty = page.locator("empty-state")
    empty.get_by_role("button", name="New space").click()
    name = f"Trips {width}"
    page.get_by_label("New space name").fill(name)
    page.get_by_label("New space name").press("Enter")
    reach(page, "left")
    page.get_by_role("button", name=f"New session in space {name}", exact=True).click()
    box = page.get_by_label("Message", exact=True)
    expect(box).to_be_focused()
    if page.locator("#left-toggle").is_visible():
        expect(page.locator("#left-pane")).to_be_hidden()  # the drawer closes again

    page.get_by_label("Model", exact=True).select_option("offline/echo")
    box.fill("Plan a week in Hobart.")
    assert clickable(page, "composer-cell button.primary"), "Send is covered"
    send = page.locator("composer-cell button.primary").bounding_box()
    cell = page.locator("composer-cell .cell-main").bounding_box()
    assert send and cell and send["x"] + send["width"] <= cell["x"] + cell["width"]
    page.locator("composer-cell").get_by_role("button", name="Send").click()
    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    expect(reply).to_be_in_viewport()  # the notebook is not blank after sending
    expect(page.locator("turn-cell.user")).to_be_in_viewport()
    assert page.evaluate(SIDEWAYS) <= 0

    header = page.locator("session-header")
    header.get_by_role("button", name="Save checkpoint").click()
    form = page.locator("checkpoint-form")
    form.get_by_label("Title").fill("Hobart plan")
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form).to_be_hidden()
    page.locator("checkpoint-cell summary").click()
    page.locator("checkpoint-cell").get_by_role("button", name="Show in lineage").click()
    details = page.locator("checkpoint-details")
    expect(details).to_contain_text("Hobart plan")
    expect(details.get_by_role("button", name="Fork")).to_be_in_viewport()
    assert clickable(page, "checkpoint-details .inline-form button")
    assert page.evaluate(SIDEWAYS) <= 0
    expect(page.locator("lineage-graph g.node")).to_have_count(1)
    if page.locator("#right-toggle").is_visible():
        page.keyboard.press("Escape")
        expect(page.locator("#right-pane")).to_be_hidden()
        expect(page.locator("#right-toggle")).to_be_focused()
    assert clickable(page, "composer-cell button.primary")
    context.close()


def test_touch_targets_are_at_least_44_px_without_hover(
    browser: Browser, server: SmritiServer
) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    open_app(page, server.base_url)
    assert page.evaluate("matchMedia('(hover: none)').matches")
    page.locator("empty-state").get_by_role("button", name="New session").click()
    expect(page.get_by_label("Message", exact=True)).to_be_visible()
    small = page.evaluate(
        """() => [...document.querySelectorAll('button, select, input, textarea, a')]
          .filter((el) => el.getClientRects().length && getComputedStyle(el).visibility === 'visible')
          .map((el) => [el.getAttribute('aria-label') || el.textContent.trim(), el.getBoundingClientRect()])
          .filter(([, r]) => r.height < 44 || r.width < 44)
          .map(([name, r]) => `${name} ${Math.round(r.width)}x${Math.round(r.height)}`)"""
    )
    assert small == []
    # Row actions are there without hovering.
    page.locator("#left-toggle").tap()
    rename = page.locator(".session-row.current").get_by_role(
        "button", name=re.compile("^Rename session")
    )
    expect(rename).to_be_visible()
    assert float(rename.evaluate("el => getComputedStyle(el.parentElement).opacity")) == 1
    context.close()


def test_the_phone_top_bar_is_one_row_with_the_title_and_a_menu(
    browser: Browser, server: SmritiServer
) -> None:
    title = "Lisbon in spring"
    sid = gql(
        server.base_url,
        "mutation($t: String!) { createSession(input: {title: $t}) { session { id } } }",
        t=title,
    )["createSession"]["session"]["id"]
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    open_app(page, server.base_url, f"/?session={sid}")
    rows = """() => new Set([...document.querySelector('.topbar').children]
        .filter((el) => el.getClientRects().length)
        .map((el) => { const r = el.getBoundingClientRect(); return Math.round(r.top + r.height / 2); })
      ).size"""
    assert page.evaluate(rows) == 1
    expect(page.locator("#session-title")).to_have_text(title)
    expect(page.locator("#session-title")).to_be_visible()
    assert page.locator("#session-title").evaluate("el => el.getBoundingClientRect().width") > 60
    bar = page.locator(".topbar")
    expect(bar.get_by_role("link", name="GraphiQL")).to_be_hidden()
    expect(bar.get_by_role("button", name="Keyboard shortcuts")).to_be_hidden()
    expect(page.get_by_role("searchbox", name="Search")).to_be_hidden()
    menu = bar.get_by_role("button", name="Menu")
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.tap()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(bar.get_by_role("link", name="GraphiQL")).to_be_visible()
    expect(bar.get_by_role("button", name="Keyboard shortcuts")).to_be_visible()
    expect(page.get_by_role("searchbox", name="Search")).to_be_visible()
    menu.tap()
    expect(page.get_by_role("searchbox", name="Search")).to_be_hidden()
    # `/` opens the menu to the search field.
    page.locator("body").press("/")
    expect(page.get_by_role("searchbox", name="Search")).to_be_focused()
    context.close()


def test_a_short_screen_gives_the_conversation_the_room(
    browser: Browser, server: SmritiServer, database: Path
) -> None:
    space = gql(
        server.base_url, 'mutation { createSpace(input: {name: "Roomy"}) { space { id } } }'
    )
    sid = gql(
        server.base_url,
        "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }",
        s=space["createSpace"]["space"]["id"],
    )["createSession"]["session"]["id"]
    seed_turns(database, sid, 20)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    open_app(page, server.base_url, f"/?session={sid}")
    expect(page.locator("turn-cell").last).to_be_visible()
    page.locator("#scroller").evaluate("el => el.scrollTo(0, el.scrollHeight)")
    # The conversation's height on screen: between the session header (while it stays
    # on top) and the message box: 345 px of the 718 below the top bar before, 468 now.
    room = page.evaluate(
        """() => {
          const box = (selector) => document.querySelector(selector).getBoundingClientRect();
          const top = Math.max(box("#scroller").top, box("session-header").bottom);
          return Math.round(box("composer-cell").top - top);
        }"""
    )
    assert room >= 450, room
    context.close()
