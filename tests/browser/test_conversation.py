"""The composer, the notebook cells, errors and retry, drafts, the context line, safety."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import gql, new_session, open_app, send, session_id
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

USER_TURNS = """query($s: ID!) { session(id: $s) { turns(first: 50) { edges { node { role content } } } } }"""
PREVIEW = """query($s: ID!, $c: String!) { contextPreview(input: {sessionId: $s, content: $c}) {
  tokenEstimate messages { role content } } }"""


@pytest.fixture(scope="module")
def server(lab_server: SmritiServer) -> SmritiServer:
    return lab_server


def test_model_picker_lists_providers_and_disables_unavailable_ones(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    picker = page.get_by_label("Model", exact=True)
    expect(picker).to_have_value("offline/echo")
    expect(picker.locator("option[value='lab/my-model']")).to_be_enabled()
    expect(picker.locator("option[value='openai/gpt-4o-mini']")).to_be_disabled()
    group = picker.locator("optgroup", has=page.locator("option[value='openai/gpt-4o-mini']"))
    expect(group).to_have_attribute(
        "label", "openai — unavailable: SMRITI_TEST_UNSET_OPENAI_KEY is not set"
    )


def test_sending_shows_the_user_cell_at_once_then_the_reply(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    page.get_by_label("Model", exact=True).select_option("lab/my-model")
    fake.delay(1.5)
    try:
        box = page.get_by_label("Message", exact=True)
        box.fill("First question")
        box.press("Shift+Enter")
        # Pending, then numbered as soon as the server has saved it (before the reply).
        expect(page.locator(".cell.user")).to_contain_text("First question")
        expect(page.locator(".cell.pending.assistant")).to_contain_text("Waiting for the reply")
        expect(box).to_have_value("")
    finally:
        fake.delay(0)
    expect(page.locator("turn-cell")).to_have_count(2)
    expect(page.locator(".cell.pending")).to_have_count(0)
    first, reply = page.locator("turn-cell").all()
    expect(first.locator(".cell-gutter")).to_have_text("In [1]")
    expect(first).to_contain_text("First question")
    # Numbered as in Jupyter: the reply shows its question's number, its own in the title.
    expect(reply.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(reply.locator(".cell-gutter")).to_have_attribute("title", "Turn 2, the reply to turn 1")
    expect(reply.locator(".cell-meta")).to_have_text("lab/my-model")
    expect(reply).to_contain_text(re.compile(r"fake reply #\d+"))

    page.get_by_label("Model", exact=True).select_option("offline/echo")
    box.fill("Second question")
    box.press("Control+Enter")
    expect(page.locator("turn-cell")).to_have_count(4)
    # Numbered by exchange: the second question and its reply are 2 (turns 3 and 4).
    expect(page.locator("turn-cell").nth(2).locator(".cell-gutter")).to_have_text("In [2]")
    expect(page.locator("turn-cell").nth(2).locator(".cell-gutter")).to_have_attribute(
        "title", "Turn 3"
    )
    expect(page.locator("turn-cell").nth(3).locator(".cell-gutter")).to_have_text("Out [2]")
    expect(page.locator("turn-cell").nth(3).locator(".cell-gutter")).to_have_attribute(
        "title", "Turn 4, the reply to turn 3"
    )
    expect(page.locator("turn-cell").nth(3).locator(".cell-meta")).to_have_text("offline/echo")
    expect(page.locator("turn-cell").nth(3)).to_contain_text("Earlier turns: 2")

    box.fill("not sent")
    box.press("Escape")
    expect(box).not_to_be_focused()
    expect(page.locator("composer-cell")).to_be_focused()
    expect(page.locator("turn-cell")).to_have_count(4)


def test_a_failed_reply_shows_an_error_cell_and_retry_writes_no_second_user_turn(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    sid = session_id(page)
    page.get_by_label("Model", exact=True).select_option("lab/my-model")
    fake.fail(500)
    box = page.get_by_label("Message", exact=True)
    box.fill("Will this fail?")
    box.press("Shift+Enter")
    error = page.locator(".cell.error")
    expect(error).to_contain_text("PROVIDER_")
    # The user's turn was kept by the server and is shown as a real cell.
    expect(page.locator("turn-cell.user")).to_have_count(1)
    expect(page.locator("turn-cell.assistant")).to_have_count(0)

    fake.reply("It worked the second time.")
    error.get_by_role("button", name="Retry").click()
    expect(page.locator("turn-cell.assistant")).to_contain_text("It worked the second time.")
    expect(page.locator(".cell.error")).to_have_count(0)
    expect(page.locator("turn-cell.user")).to_have_count(1)
    turns = gql(server.base_url, USER_TURNS, s=sid)["session"]["turns"]["edges"]
    assert [(t["node"]["role"], t["node"]["content"]) for t in turns] == [
        ("USER", "Will this fail?"),
        ("ASSISTANT", "It worked the second time."),
    ]


def test_a_draft_survives_reload_and_is_cleared_once_sent(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    page.get_by_label("Message", exact=True).fill("Half-written thought")
    page.reload()
    box = page.get_by_label("Message", exact=True)
    expect(box).to_have_value("Half-written thought")
    box.press("Shift+Enter")
    expect(page.locator("turn-cell.assistant")).to_have_count(1)
    page.reload()
    expect(page.locator("turn-cell")).to_have_count(2)
    expect(page.get_by_label("Message", exact=True)).to_have_value("")


def test_markup_in_messages_and_replies_is_shown_as_text_and_never_runs(
    page: Page, server: SmritiServer
) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_app(page, server.base_url)
    new_session(page, None)
    attack = '<script>window.__pwned = 1; alert(1)</script> <img src=x onerror="window.__pwned = 2; alert(2)">'
    send(page, f"Look: {attack}")
    reply = page.locator("turn-cell.assistant").last
    # Rendered from the server's contentHtml (sanitised Markdown), not from raw content.
    expect(reply.locator(".cell-body.markdown")).to_have_count(1)
    expect(reply).to_contain_text("<script>window.__pwned = 1; alert(1)</script>")
    expect(reply).to_contain_text('<img src=x onerror="window.__pwned = 2; alert(2)">')
    expect(page.locator("turn-cell.user").last).to_contain_text(attack)
    # Nothing left to run later: no script or img element was made (a script put
    # in as markup never runs; an img's onerror would, once its load failed).
    assert page.locator("turn-cell script, turn-cell img").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


def test_the_context_line_follows_typing_and_shows_the_exact_messages(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    sid = session_id(page)
    send(page, "Remember the number 42.")
    draft = "What number did I ask you to remember? " * 20
    page.get_by_label("Message", exact=True).fill(draft)
    plan = gql(server.base_url, PREVIEW, s=sid, c=draft)["contextPreview"]
    tokens = plan["tokenEstimate"]
    shown = f"~{tokens}" if tokens < 1000 else f"~{tokens / 1000:.1f}k"
    line = page.locator("composer-cell .ctx-line")
    expect(line).to_have_text(f"ctx: FRESH (0 checkpoints, 2 turns, {shown} tokens)")
    expect(page.locator("context-badge")).to_have_text("FRESH")

    page.get_by_role("button", name="Show context").click()
    messages = page.locator(".ctx-message")
    expect(messages).to_have_count(len(plan["messages"]))
    for shown_message, expected in zip(messages.all(), plan["messages"], strict=True):
        expect(shown_message.locator(".ctx-role")).to_have_text(expected["role"])
        expect(shown_message.locator("pre")).to_have_text(expected["content"])
    page.get_by_role("button", name="Close context").click()
    expect(messages).to_have_count(len(plan["messages"]))
    expect(page.locator(".ctx-messages")).to_be_hidden()
