"""What a first-time user stumbled on (issue 18 §4): starting in a new space, `s`
outside a space, and the checkpoint form from the keyboard."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.support import create_space, gql, new_session, open_app, send, session_id
from tests.support.servers import SmritiServer

SESSION = "query($s: ID!) { session(id: $s) { space { name } } }"
CHECKPOINTS = """query($s: ID!) { session(id: $s) { space { lineage(first: 10) {
  edges { node { title objective decisions } } } } } }"""


def test_new_session_on_the_first_screen_offers_the_space_just_created(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    empty = page.locator("empty-state")
    empty.get_by_role("button", name="New space").click()
    page.get_by_label("New space name").fill("Kyoto trip")
    page.get_by_label("New space name").press("Enter")
    expect(page.locator(".space-row .name", has_text="Kyoto trip")).to_be_visible()

    expect(empty.get_by_role("button")).to_have_text(
        ["New session in Kyoto trip", "New session in no space", "New space"]
    )
    empty.get_by_role("button", name="New session in Kyoto trip").click()
    expect(page.get_by_label("Message", exact=True)).to_be_focused()
    space = gql(server.base_url, SESSION, s=session_id(page))["session"]["space"]
    assert space == {"name": "Kyoto trip"}


def test_s_outside_a_space_says_why_nothing_opens(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    page.evaluate("document.activeElement.blur()")  # out of the composer
    page.keyboard.press("s")
    expect(page.locator("#toast")).to_have_text("Checkpoints belong to a space: attach one first")
    expect(page.locator("checkpoint-form")).to_be_hidden()


def test_the_checkpoint_form_from_the_keyboard(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    create_space(page, "Keyboard trip")
    new_session(page, "Keyboard trip")
    send(page, "Plan two days in Nara.")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("s")
    form = page.locator("checkpoint-form")
    expect(form.get_by_label("Title")).to_be_focused()
    page.keyboard.type("Nara plan")
    page.keyboard.press("Enter")  # moves on, does not save
    expect(form.get_by_label("Objective")).to_be_focused()
    expect(form).to_be_visible()
    page.keyboard.type("Two easy days")
    form.get_by_role("button", name="Add decisions item").click()
    page.keyboard.type("Deer park first")
    page.keyboard.press("Control+Enter")  # saves from a list item
    expect(form).to_be_hidden()
    expect(page.locator("checkpoint-cell")).to_have_count(1)

    page.keyboard.press("s")
    form.get_by_label("Title").fill("Nara plan, day two")
    form.get_by_label("Summary").focus()
    page.keyboard.press("Meta+Enter")  # Cmd+Enter on a Mac
    expect(form).to_be_hidden()
    expect(page.locator("checkpoint-cell")).to_have_count(2)
    edges = gql(server.base_url, CHECKPOINTS, s=session_id(page))["session"]["space"]["lineage"]
    nodes = [edge["node"] for edge in edges["edges"]]
    assert nodes == [
        {"title": "Nara plan", "objective": "Two easy days", "decisions": ["Deer park first"]},
        {
            "title": "Nara plan, day two",
            "objective": "Two easy days",
            "decisions": ["Deer park first"],
        },
    ]
