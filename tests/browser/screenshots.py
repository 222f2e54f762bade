"""Screenshots of the main screens for the README: ``python -m tests.browser.screenshots``.

Runs the real `smriti serve` on a temporary SQLite file, builds a small trip
planning space through the UI (two checkpoints, a mount, a fork) and writes
docs/screenshots/*.png in light and dark, and on a 390 px phone; then a second space
with two lines that conflict, merged from the branch list (the review with a conflict,
a dropped item and a contradiction warning, then the graph); then, on a second server
with accounts, a shared space and its members dialog.
``python -m tests.browser.screenshots members`` takes only that last one, ``… merge``
only the merge ones.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from playwright.sync_api import Browser, Page, expect

from api.store.database import sqlite_url
from tests.browser.support import (
    CREATE_CHECKPOINT,
    VIEWPORT,
    chromium,
    create_space,
    gql,
    new_session,
    open_app,
    save_checkpoint,
    send,
    session_id,
    warm_up,
)
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer, add_user

OUT = REPOSITORY_ROOT / "docs" / "screenshots"
PHONE = {"width": 390, "height": 844}


def build(page: Page, base_url: str) -> str:
    """The Australia / New Zealand trip, mounted on the first checkpoint; the session id."""
    open_app(page, base_url)
    create_space(page, "Trips")
    create_space(page, "Reading list")
    new_session(page, "Trips")
    page.get_by_role("button", name="Rename session Untitled session").click()
    page.get_by_label("Session title").fill("Australia in spring")
    page.get_by_label("Session title").press("Enter")
    send(page, "Plan two weeks in Australia. We decided to fly into Sydney.")
    save_checkpoint(page, "Australia plan", decisions=["Fly into Sydney", "Two weeks in total"])
    send(page, "Extend the trip to New Zealand: Auckland, then Queenstown.")
    save_checkpoint(
        page, "New Zealand extension", decisions=["Fly into Sydney", "Add a week in NZ"]
    )
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Australia plan")).click()
    page.locator("checkpoint-details").get_by_role("button", name="Mount").click()
    expect(page.locator("context-badge")).to_have_text(re.compile("^MOUNTED"))
    send(page, "What should we pack for **Sydney** in `October`?")
    sid = session_id(page)
    # A fork on its own branch, so the graph shows two lanes.
    page.locator("checkpoint-details").get_by_label("New branch name").fill("tasmania")
    page.locator("checkpoint-details").get_by_role("button", name="Fork").click()
    expect(page.locator("session-header")).to_contain_text("Branch tasmania")
    send(page, "Swap New Zealand for Tasmania.")
    save_checkpoint(page, "Tasmania variant", decisions=["Fly into Sydney", "Ferry to Hobart"])
    new_session(page, None)
    return sid


def shoot(browser: Browser, base_url: str, sid: str, scheme: str) -> None:
    context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    open_app(page, base_url, f"/?session={sid}")
    expect(page.locator("context-badge")).to_have_text(re.compile("^MOUNTED"))
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Australia plan")).click()
    page.locator("checkpoint-cell summary").first.click()
    page.locator(".centre").evaluate("el => el.scrollTop = el.scrollHeight")
    page.wait_for_timeout(300)
    page.screenshot(path=OUT / f"notebook-{scheme}.png")
    if scheme != "light":
        return context.close()

    page.get_by_role("button", name="Show context").click()
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "context.png")
    page.keyboard.press("Escape")

    details = page.locator("checkpoint-details")
    other = details.get_by_label("Compare with")
    other.select_option(other.locator("option", has_text="Tasmania").get_attribute("value"))
    details.get_by_role("button", name="Compare").click()
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "compare.png")
    page.keyboard.press("Escape")

    # The review of merging the Tasmania variant into main (nothing is saved).
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Tasmania variant")).click()
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    expect(page.get_by_role("dialog", name="Merge checkpoints")).to_be_visible()
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "merge-review.png")
    page.keyboard.press("Escape")
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Australia plan")).click()

    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    page.locator("checkpoint-form").get_by_role("button", name="Draft with AI").click()
    expect(page.locator("checkpoint-form")).to_contain_text("Drafted by")
    page.locator("checkpoint-form").scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "checkpoint-form.png")
    page.locator("checkpoint-form").get_by_role("button", name="Cancel").click()

    # `/` and a word: the hits grouped by session and checkpoint, matches marked.
    page.keyboard.press("/")
    page.get_by_role("searchbox", name="Search").fill("Sydney")
    page.get_by_role("searchbox", name="Search").press("Enter")
    results = page.get_by_role("dialog", name="Search results")
    expect(results.get_by_role("status")).to_contain_text("results for “Sydney”")
    results.get_by_role("button", name="Close search results").blur()
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "search-results.png")
    context.close()


def shoot_phone(browser: Browser, base_url: str, sid: str) -> None:
    """The same session on a 390 px phone: the notebook, then the lineage drawer."""
    context = browser.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True, color_scheme="light"
    )
    page = context.new_page()
    open_app(page, base_url, f"/?session={sid}")
    expect(page.locator("context-badge")).to_have_text(re.compile("^MOUNTED"))
    page.locator(".centre").evaluate("el => el.scrollTop = el.scrollHeight")
    page.wait_for_timeout(300)
    page.screenshot(path=OUT / "notebook-phone.png")
    page.locator("#right-toggle").tap()
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Australia plan")).tap()
    page.wait_for_timeout(300)
    page.screenshot(path=OUT / "lineage-phone.png")
    context.close()


def build_conflict(base_url: str) -> str:
    """A Japan trip whose "rail" branch respells the JR pass that main dropped (a
    conflict), where main drops the Nara question rail left alone (dropped), and main
    rents a campervan while rail says no campervan (a contradiction warning), seeded
    through the API; the main session's id."""
    space = gql(base_url, 'mutation { createSpace(input: {name: "Japan"}) { space { id } } }')
    space_id = space["createSpace"]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "Japan in autumn"}) '
        "{ session { id } } }",
        s=space_id,
    )["createSession"]["session"]["id"]

    def save(session: str, title: str, **lists: list[str]) -> str:
        payload = gql(
            base_url, CREATE_CHECKPOINT, input={"sessionId": session, "title": title, **lists}
        )["createCheckpoint"]
        assert payload["errors"] == [], payload
        cid: str = payload["checkpoint"]["id"]
        return cid

    base = save(
        main,
        "Japan plan",
        decisions=["Fly into Tokyo", "JR pass for 7 days", "Three nights in Kyoto"],
        tasks=["Book the Kyoto ryokan"],
        openQuestions=["Day trip to Nara?"],
    )
    rail = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "rail",
           title: "By train"}) { session { id } } }""",
        c=base,
    )["forkSession"]["session"]["id"]
    save(
        main,
        "Budget trim",
        decisions=[
            "Fly into Tokyo",
            "Three nights in Kyoto",
            "Hostels in Osaka",
            "Rent a campervan in Hokkaido",
        ],
        tasks=["Book the Kyoto ryokan", "Compare hostel prices"],
    )
    save(
        rail,
        "Rail itinerary",
        decisions=[
            "Fly into Tokyo",
            "JR Pass for 7 days.",
            "Three nights in Kyoto",
            "Shinkansen to Hiroshima",
            "No campervan: trains only",
        ],
        tasks=["Book the Kyoto ryokan", "Reserve Shinkansen seats"],
        openQuestions=["Day trip to Nara?"],
    )
    return main


def shoot_merge(browser: Browser, base_url: str, sid: str) -> None:
    """Merging the "rail" branch from the branch list: the review with its conflict,
    then the lineage pane with the merge checkpoint it saved."""
    context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = context.new_page()
    open_app(page, base_url, f"/?session={sid}")
    graph = page.locator("lineage-graph")
    graph.get_by_role("button", name="Branch rail", exact=True).click()
    graph.get_by_role("group", name="Branch rail").get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_contain_text("1 conflict(s)")
    expect(dialog.get_by_role("note", name="Merge warnings").locator("li")).to_have_count(1)
    expect(dialog.locator("li.dropped")).to_have_count(1)
    page.wait_for_timeout(200)
    page.screenshot(path=OUT / "merge-conflict.png")
    # A conflict starts undecided: keep the first choice offered (a branch's text).
    dialog.locator("li.conflict input[type=radio]").first.check()
    dialog.get_by_role("button", name="Save merge").click()
    expect(dialog).to_be_hidden()
    expect(graph.locator("g.node.merge")).to_have_count(1)
    page.wait_for_timeout(200)
    page.locator("#right-pane").screenshot(path=OUT / "lineage-merge.png")
    context.close()


MEMBER_PASSWORD = "screenshot passphrase 1"


def shoot_members(browser: Browser) -> None:
    """Accounts mode: ana's space "Trips" shared with bob (editor) and cy (viewer), a
    session of hers shared with it, and the members dialog over it."""
    with tempfile.TemporaryDirectory() as tmp:
        url = sqlite_url(Path(tmp) / "members.sqlite3")
        for name in ("ana", "bob", "cy"):
            add_user(url, name, MEMBER_PASSWORD)
        with SmritiServer(url) as server:
            context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
            page = context.new_page()
            page.goto(server.base_url + "/login.html")
            page.fill("#login-name", "ana")
            page.fill("#login-password", MEMBER_PASSWORD)
            page.click("#login-submit")
            expect(page.locator("smriti-app[data-ready]")).to_be_attached()
            create_space(page, "Trips")
            new_session(page, "Trips")
            send(page, "Plan two weeks in Australia. We decided to fly into Sydney.")
            save_checkpoint(page, "Australia plan", decisions=["Fly into Sydney"])
            page.get_by_label("Shared with the space").check()
            page.get_by_role("button", name="Members of space Trips").click()
            dialog = page.locator("#members-dialog")
            for name, role in (("bob", "EDITOR"), ("cy", "VIEWER")):
                dialog.get_by_label("User name").fill(name)
                dialog.get_by_label("Role of the new member").select_option(role)
                dialog.get_by_role("button", name="Add").click()
                expect(dialog.locator("#members-note")).to_contain_text(f"{name} added")
            page.wait_for_timeout(300)
            page.screenshot(path=OUT / "space-members.png")
            context.close()


def main() -> None:
    # As in the browser tests (conftest.py): on a busy machine a reply can take over 5 s.
    expect.set_options(timeout=10_000)
    OUT.mkdir(parents=True, exist_ok=True)
    if sys.argv[1:] == ["members"]:
        with chromium() as browser:
            shoot_members(browser)
        return print((OUT / "space-members.png").relative_to(REPOSITORY_ROOT))
    if sys.argv[1:] == ["merge"]:
        with (
            tempfile.TemporaryDirectory() as tmp,
            SmritiServer(sqlite_url(Path(tmp) / "merge.sqlite3")) as server,
            chromium() as browser,
        ):
            shoot_merge(browser, server.base_url, build_conflict(server.base_url))
        for name in ("merge-conflict.png", "lineage-merge.png"):
            print((OUT / name).relative_to(REPOSITORY_ROOT))
        return
    with (
        tempfile.TemporaryDirectory() as tmp,
        SmritiServer(sqlite_url(Path(tmp) / "screens.sqlite3")) as server,
        chromium() as browser,
    ):
        warm_up(server.base_url)
        context = browser.new_context(viewport=VIEWPORT)
        sid = build(context.new_page(), server.base_url)
        context.close()
        for scheme in ("light", "dark"):
            shoot(browser, server.base_url, sid, scheme)
        shoot_phone(browser, server.base_url, sid)
        shoot_merge(browser, server.base_url, build_conflict(server.base_url))
        shoot_members(browser)
    for path in sorted(OUT.glob("*.png")):
        print(path.relative_to(REPOSITORY_ROOT))


if __name__ == "__main__":
    main()
