"""The left pane, the URL, attaching a space, the keyboard and the themes."""

from __future__ import annotations

import re

from playwright.sync_api import APIResponse, Browser, Page, Route, expect

from tests.browser.support import VIEWPORT, create_space, new_session, open_app, send, session_id
from tests.support.servers import SmritiServer


def sidebar_session(page: Page, title: str):  # type: ignore[no-untyped-def]
    return page.locator("space-list .session-row", has_text=title)


def test_spaces_and_sessions_are_created_renamed_and_deleted(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Work")
    page.get_by_role("button", name="Rename space Work").click()
    page.get_by_label("Space name").fill("Work notes")
    page.get_by_label("Space name").press("Enter")
    group = page.locator(
        "space-list .space-group", has=page.locator(".name", has_text="Work notes")
    )
    expect(group).to_be_visible()

    new_session(page, "Work notes")
    expect(group.locator(".session-row.current")).to_have_text(re.compile("Untitled session"))
    page.get_by_role("button", name="Rename session Untitled session").click()
    page.get_by_label("Session title").fill("Quarterly plan")
    page.get_by_label("Session title").press("Enter")
    expect(group.locator(".session-row.current")).to_contain_text("Quarterly plan")
    expect(page.locator("session-header h1")).to_have_text("Quarterly plan")

    new_session(page, None)
    loose = page.locator("space-list .space-group[data-space='']")
    expect(loose.locator(".session-row.current")).to_have_count(1)
    page.get_by_role("button", name="Rename session Untitled session").click()
    page.get_by_label("Session title").fill("Scratch")
    page.get_by_label("Session title").press("Enter")
    expect(loose.locator(".session-row", has_text="Scratch")).to_be_visible()

    # Deleting asks for a second click.
    page.get_by_role("button", name="Delete session Scratch").click()
    expect(loose.locator(".session-row", has_text="Scratch")).to_be_visible()
    page.get_by_role("button", name="Confirm delete session Scratch").click()
    expect(loose.locator(".session-row", has_text="Scratch")).to_have_count(0)
    expect(page).to_have_url(f"{server.base_url}/")

    page.get_by_role("button", name="Delete space Work notes").click()
    page.get_by_role("button", name="Confirm delete space Work notes").click()
    expect(page.locator("space-list .space-row .name", has_text="Work notes")).to_have_count(0)


def test_the_url_names_the_open_session_for_reload_and_back_forward(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Travel")
    new_session(page, "Travel")
    send(page, "First session message")
    first = session_id(page)
    new_session(page, "Travel")
    second = session_id(page)
    assert first != second
    expect(page.locator("turn-cell")).to_have_count(0)

    page.go_back()
    expect(page).to_have_url(f"{server.base_url}/?session={first}")
    expect(page.locator("turn-cell.user")).to_contain_text("First session message")
    page.go_forward()
    expect(page).to_have_url(f"{server.base_url}/?session={second}")
    expect(page.locator("turn-cell")).to_have_count(0)

    sidebar_session(page, "First session").get_by_role("link").click()
    expect(page).to_have_url(f"{server.base_url}/?session={first}")
    page.reload()
    expect(page.locator("turn-cell.user")).to_contain_text("First session message")
    expect(page.locator("space-list .session-row.current")).to_contain_text("First session")


def test_attaching_and_detaching_a_space_changes_the_context_mode(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Research")
    new_session(page, None)
    expect(page.locator("context-badge")).to_have_text("FRESH")
    header = page.locator("session-header")
    header.get_by_label("Space to attach").select_option(label="Research")
    header.get_by_label("Memory scope").select_option("LATEST_3")
    header.get_by_role("button", name="Attach").click()
    expect(page.locator("context-badge")).to_have_text("HEAD · no checkpoint yet")
    expect(header).to_contain_text("Space Research")
    expect(header.get_by_label("Memory scope")).to_have_value("LATEST_3")
    group = page.locator("space-list .space-group", has=page.locator(".name", has_text="Research"))
    expect(group.locator(".session-row.current")).to_have_count(1)

    header.get_by_role("button", name="Detach space").click()
    expect(page.locator("context-badge")).to_have_text("FRESH")
    expect(header).to_contain_text("No space (FRESH)")


def test_the_keyboard_alone_moves_between_cells_and_lists_shortcuts(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    send(page, "One")
    send(page, "Two")
    page.get_by_label("Message", exact=True).press("Escape")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Next / previous cell")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.keyboard.press("k")  # from the composer: the last turn
    expect(page.locator("#turn-4")).to_be_focused()
    page.keyboard.press("k")
    expect(page.locator("#turn-3")).to_be_focused()
    page.keyboard.press("k")
    page.keyboard.press("j")
    expect(page.locator("#turn-3")).to_be_focused()
    focus_ring = page.locator("#turn-3").evaluate("el => getComputedStyle(el).boxShadow")
    assert focus_ring != "none"
    page.keyboard.press("i")
    expect(page.get_by_label("Message", exact=True)).to_be_focused()
    # Tab reaches the buttons: everything is a button or a link.
    page.keyboard.press("Tab")
    expect(page.get_by_label("Model", exact=True)).to_be_focused()


def test_light_and_dark_follow_the_system_preference(
    browser: Browser, server: SmritiServer
) -> None:
    backgrounds = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        open_app(page, server.base_url)
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        context.close()
    assert backgrounds == {"light": "rgb(247, 247, 245)", "dark": "rgb(20, 22, 27)"}


def test_a_late_session_reload_does_not_reopen_a_session_you_left(
    page: Page, server: SmritiServer
) -> None:
    """After a reply the notebook reloads the session (its title, its mount); a user
    who opened the space meanwhile stays on the space when that answer arrives."""
    open_app(page, server.base_url)
    create_space(page, "Late answers")
    new_session(page, "Late answers")
    send(page, "First question.")
    held: list[Route] = []

    def hold_session_reads(route: Route) -> None:
        body = route.request.post_data_json or {}
        if str(body.get("query", "")).startswith("query($id: ID!) { session(id: $id)"):
            held.append(route)
        else:
            route.continue_()

    page.route("**/graphql", hold_session_reads)
    send(page, "Second question.")
    for _ in range(100):  # the reload starts once the reply is shown
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the notebook did not reload the session after the reply"
    page.locator("space-list .space-row a.name", has_text="Late answers").click()
    expect(page).to_have_url(re.compile(r"\?space="))
    expect(page.locator("session-header h1")).to_have_text("Late answers")
    for route in held:
        route.continue_()
    # Every reload's answer handled (here: dropped, the space is shown now).
    expect(page.locator("smriti-app")).to_have_attribute("data-reloading", "0")
    expect(page).to_have_url(re.compile(r"\?space="))
    expect(page.locator("session-header h1")).to_have_text("Late answers")
    assert page.locator("turn-cell").count() == 0


def test_a_late_session_reload_does_not_undo_a_newer_change(
    page: Page, server: SmritiServer
) -> None:
    """The reload's answer was read before the user renamed the session: the new name stays."""
    open_app(page, server.base_url)
    new_session(page, None)
    send(page, "First question.")
    held: list[tuple[Route, APIResponse]] = []

    def read_now_answer_later(route: Route) -> None:
        body = route.request.post_data_json or {}
        if str(body.get("query", "")).startswith("query($id: ID!) { session(id: $id)"):
            held.append((route, route.fetch()))  # the server's answer as of now
        else:
            route.continue_()

    page.route("**/graphql", read_now_answer_later)
    send(page, "Second question.")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the notebook did not reload the session after the reply"
    current = page.locator("space-list .session-row.current")
    current.get_by_role("button", name=re.compile("^Rename session")).click()
    page.get_by_label("Session title").fill("Renamed meanwhile")
    page.get_by_label("Session title").press("Enter")
    expect(page.locator("session-header h1")).to_have_text("Renamed meanwhile")
    for route, answer in held:
        route.fulfill(response=answer)
    # Every reload's answer handled (here: dropped, older than the rename).
    expect(page.locator("smriti-app")).to_have_attribute("data-reloading", "0")
    expect(page.locator("session-header h1")).to_have_text("Renamed meanwhile")
