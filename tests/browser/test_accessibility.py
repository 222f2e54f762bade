"""axe-core on the main screens, desktop and phone: no serious or critical violations."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import blocking, run_axe, summary
from tests.browser.support import (
    gql,
    lineage_with_a_conflict,
    new_session,
    open_app,
    open_lineage,
    save_checkpoint,
    send,
    travel_lineage,
)
from tests.support.servers import SmritiServer

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def check(page: Page, screen: str, found: dict[str, list[str]]) -> None:
    """Record the screen's serious and critical violations (all of them are printed)."""
    violations = run_axe(page)
    print(f"axe {screen}: {summary(violations) or 'no violations'}")
    for violation in blocking(violations):
        print("   ", violation["id"], [node["target"] for node in violation["nodes"]][:5])
    found[screen] = summary(blocking(violations))


@pytest.mark.parametrize("size", sorted(SIZES))
def test_main_screens_have_no_serious_or_critical_violations(
    browser: Browser, server: SmritiServer, size: str
) -> None:
    context = browser.new_context(viewport=SIZES[size], color_scheme="light", bypass_csp=True)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    open_app(page, server.base_url)
    check(page, f"{size} first screen", found)

    space = f"Axe {size}"
    page.locator("empty-state").get_by_role("button", name="New space").click()
    page.get_by_label("New space name").fill(space)
    page.get_by_label("New space name").press("Enter")
    check(page, f"{size} spaces pane", found)
    new_session(page, space)
    send(page, "Plan a week in Lisbon. We decided to take the train to Porto.")
    save_checkpoint(page, "Lisbon plan", decisions=["Train to Porto"])
    send(page, "Add two days in Sintra.")
    check(page, f"{size} notebook", found)

    if page.locator("#more-toggle").is_visible():  # on a phone, search is in the menu
        page.locator("#more-toggle").click()
    page.get_by_role("searchbox", name="Search").fill("Lisbon")
    page.get_by_role("searchbox", name="Search").press("Enter")
    results = page.get_by_role("dialog", name="Search results")
    expect(results.get_by_role("status")).to_have_text(re.compile("^[0-9]+ results for “Lisbon”"))
    check(page, f"{size} search results", found)
    page.keyboard.press("Escape")

    page.get_by_role("button", name="Show context").click()
    check(page, f"{size} context", found)
    page.keyboard.press("Escape")

    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    check(page, f"{size} checkpoint form", found)
    page.locator("checkpoint-form").get_by_role("button", name="Cancel").click()

    page.locator("checkpoint-cell summary").first.click()
    page.locator("checkpoint-cell").first.get_by_role("button", name="Show in lineage").click()
    # (On a phone the lineage opens as a drawer.)
    expect(page.locator("checkpoint-details")).to_contain_text(re.compile("Lisbon plan"))
    check(page, f"{size} lineage", found)
    context.close()
    assert found == {screen: [] for screen in found}


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_branch_panel_and_a_merge_review_have_no_serious_or_critical_violations(
    browser: Browser, server: SmritiServer, size: str
) -> None:
    lab = lineage_with_a_conflict(server.base_url)
    context = browser.new_context(viewport=SIZES[size], color_scheme="light", bypass_csp=True)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    open_app(page, server.base_url, f"/?session={lab['main']}")
    open_lineage(page)
    page.locator("lineage-graph").get_by_role("button", name="Branch alt", exact=True).click()
    check(page, f"{size} branch panel", found)
    page.get_by_role("group", name="Branch alt").get_by_role("button", name="Merge into…").click()
    expect(page.get_by_role("dialog", name="Merge checkpoints")).to_contain_text("1 conflict(s)")
    check(page, f"{size} merge review", found)
    context.close()
    assert found == {screen: [] for screen in found}


SPACE = "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }"
SESSION = "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }"
CHECKPOINT = """mutation($s: ID!, $t: String!, $d: [String!]) {
  createCheckpoint(input: {sessionId: $s, title: $t, decisions: $d}) {
    checkpoint { id shortHash } errors { message } } }"""


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_compare_dialog_has_no_serious_or_critical_violations(
    browser: Browser, server: SmritiServer, size: str
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n=f"Compared {size}")["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    # A word too long for a phone's column: the table scrolls sideways there.
    decisions = ["Book itinerary_lisbon_porto_overnight_sleeper", "Skip the Algarve"]
    first = gql(base, CHECKPOINT, s=session, t="Lisbon v1", d=decisions)
    gql(base, CHECKPOINT, s=session, t="Lisbon v2", d=[*decisions[:1], "Two days in Sintra"])
    short = first["createCheckpoint"]["checkpoint"]["shortHash"]
    context = browser.new_context(viewport=SIZES[size], color_scheme="light", bypass_csp=True)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    open_app(page, base, f"/?session={session}")
    open_lineage(page)
    page.get_by_role("button", name=re.compile(f"^{short} Lisbon v1")).click()
    details = page.locator("checkpoint-details")
    other = details.get_by_label("Compare with")
    other.select_option(other.locator("option", has_text="Lisbon v2").get_attribute("value"))
    details.get_by_role("button", name="Compare").click()
    expect(page.get_by_role("dialog", name="Compare checkpoints")).to_be_visible()
    check(page, f"{size} compare", found)
    context.close()
    assert found == {screen: [] for screen in found}


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_merge_review_with_a_contradiction_warning_has_no_serious_or_critical_violations(
    browser: Browser, server: SmritiServer, size: str
) -> None:
    lab = travel_lineage(server.base_url)
    context = browser.new_context(viewport=SIZES[size], color_scheme="light", bypass_csp=True)
    page = context.new_page()
    open_app(page, server.base_url, f"/?session={lab['main']}")
    open_lineage(page)
    page.locator("lineage-graph").get_by_role("button", name="Branch rail", exact=True).click()
    page.get_by_role("group", name="Branch rail").get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog.get_by_role("note", name="Merge warnings").locator("li")).to_have_count(1)
    violations = blocking(run_axe(page))
    context.close()
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in violations] == []
