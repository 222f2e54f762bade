"""A question whose reply failed stays marked "no reply" with Retry, after later
sends and reloads, until it is answered; Show context says it will be sent."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import gql, saved_turns, start, type_and_send
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

WINDOW = """query($s: ID!) { contextPreview(input: {sessionId: $s, content: "", model: "lab/my-model"}) {
  contextWindow tokenEstimate } }"""


@pytest.fixture(scope="module")
def server(lab_server: SmritiServer) -> SmritiServer:
    return lab_server


def test_a_failed_question_keeps_its_retry_until_answered_and_shows_in_the_context(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    sid = start(page, server)
    fake.fail(500, message="upstream exploded")
    type_and_send(page, "Will you answer?")
    expect(page.locator(".cell.error")).to_be_visible()
    question = page.locator("#turn-1")
    expect(question.locator(".tag")).to_have_count(0)  # the error cell has the Retry for now

    fake.reply("Second answer.")
    type_and_send(page, "Another question")
    expect(page.locator("turn-cell.assistant")).to_have_count(1)
    expect(page.locator(".cell.error")).to_have_count(0)
    expect(question.locator(".tag.warn")).to_have_text("no reply")
    expect(question.get_by_role("button", name="Retry")).to_be_visible()
    expect(page.locator("#turn-2 .tag")).to_have_count(0)

    # Show context: a drawer over the page, with the gauge and the note.
    notebook = page.locator("notebook-view").bounding_box()
    page.get_by_role("button", name="Show context").click()
    drawer = page.get_by_role("dialog", name="What the model will receive")
    expect(drawer).to_be_visible()
    expect(drawer.get_by_role("note")).to_have_text(
        "Turn 1 got no reply: it will be sent to the model with your message, merged into "
        "one message with what follows it (see “merged” below)."
    )
    # The model gets one user message, not two in a row: the drawer says which turns it joins.
    messages = drawer.locator(".ctx-message")
    expect(messages).to_have_count(3)
    expect(messages.locator(".ctx-role")).to_have_text(
        ["usermerged: turns 1, 2", "assistant", "user"]
    )
    expect(messages.nth(0).locator("pre")).to_have_text("Will you answer?\n\nAnother question")
    window = gql(server.base_url, WINDOW, s=sid)["contextPreview"]["contextWindow"]
    assert window > 0
    expect(drawer.locator("meter")).to_have_attribute("max", str(window))
    expect(drawer.locator(".gauge-label")).to_contain_text(f"of {window:,} in lab/my-model's")
    assert page.locator("notebook-view").bounding_box() == notebook  # not squeezed
    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    expect(page.get_by_role("button", name="Show context")).to_be_visible()

    page.reload()
    expect(question.locator(".tag.warn")).to_have_text("no reply")
    fake.reply("Late answer.")
    question.get_by_role("button", name="Retry").click()
    late = page.locator("turn-cell.assistant").last
    expect(late).to_contain_text("Late answer.")
    expect(late.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(question.locator(".tag")).to_have_count(0)
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    # The same turn was answered (its idempotencyKey): nothing asked twice.
    assert saved_turns(server, sid) == [
        ("USER", "Will you answer?", False),
        ("USER", "Another question", False),
        ("ASSISTANT", "Second answer.", False),
        ("ASSISTANT", "Late answer.", False),
    ]
    assert fake.requests[-1]["messages"] == [{"role": "user", "content": "Will you answer?"}]
