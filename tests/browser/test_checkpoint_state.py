"""The notebook for a first-time user (issue 8 items 4, 5, 6, 10): one name per mode,
the scope in words and changeable in place, checkpoints that carry the state forward
(asserted on what the model received), a checkpoint form that fits, and the offline
model's stand-in hint and readable streaming pace."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from api.store.database import sqlite_url
from tests.browser.support import (
    create_space,
    gql,
    new_session,
    open_app,
    save_checkpoint,
    send,
    session_id,
    warm_up,
)
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

SESSION = """query($s: ID!) { session(id: $s) { memoryScope branchName space { name }
  turns(first: 50) { edges { node { role content interrupted } } } } }"""
LINEAGE = """query($s: ID!) { session(id: $s) { space { lineage(first: 10) { edges { node {
  id shortHash title objective decisions tasks openQuestions entities } } } } } }"""


@pytest.fixture(scope="module")
def server(lab_server: SmritiServer) -> SmritiServer:
    return lab_server


def checkpoints(server: SmritiServer, sid: str) -> dict[str, dict[str, object]]:
    edges = gql(server.base_url, LINEAGE, s=sid)["session"]["space"]["lineage"]["edges"]
    return {e["node"]["title"]: e["node"] for e in edges}


def start_in_space(page: Page, server: SmritiServer, space: str) -> str:
    open_app(page, server.base_url)
    create_space(page, space)
    new_session(page, space)
    return session_id(page)


def test_one_name_per_mode_and_the_scope_in_words_changed_in_place(
    page: Page, server: SmritiServer
) -> None:
    sid = start_in_space(page, server, "Names")
    badge = page.locator("context-badge")
    line = page.locator("composer-cell .ctx-line")
    expect(badge).to_have_text("HEAD · no checkpoint yet")
    expect(line).to_have_text(
        re.compile(r"^ctx: HEAD · no checkpoint yet \(0 checkpoints, 0 turns, ~\d+ tokens\)$")
    )

    send(page, "Plan two weeks in Australia.")
    # The offline echo names the modes its messages fit: never a contradiction.
    reply = page.locator("turn-cell.assistant").last
    expect(reply).to_contain_text(
        "Offline echo \u2014 mode: FRESH or HEAD (no checkpoint received)"
    )
    expect(reply).not_to_contain_text("CHECKPOINTED")

    scope = page.locator("session-header").get_by_label("Memory scope")
    expect(scope).to_have_value("LATEST_1")
    expect(scope.locator("option:checked")).to_have_text("latest checkpoint")
    scope.select_option(label="latest 3 checkpoints")
    expect(scope).to_have_value("LATEST_3")
    # The select shows the choice at once; the server has it once updateSession has
    # answered (CI read it a moment before).
    for _ in range(100):
        session = gql(server.base_url, SESSION, s=sid)["session"]
        if session["memoryScope"] == "LATEST_3":
            break
        page.wait_for_timeout(100)
    assert (session["memoryScope"], session["space"], session["branchName"]) == (
        "LATEST_3",
        {"name": "Names"},
        "main",
    )
    expect(badge).to_have_text("HEAD · no checkpoint yet")  # still attached
    page.reload()
    expect(page.locator("session-header").get_by_label("Memory scope")).to_have_value("LATEST_3")


def test_a_checkpoint_carries_the_parents_state_to_the_model(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    # Given "Australia plan" with a decision, then turns about New Zealand
    sid = start_in_space(page, server, "Carry")
    page.get_by_label("Model", exact=True).select_option("lab/my-model")
    fake.reply("Sydney first, then Melbourne.")
    send(page, "Plan two weeks in Australia.")
    save_checkpoint(page, "Australia plan", decisions=["Fly into Sydney"])
    australia = checkpoints(server, sid)["Australia plan"]
    fake.reply("Add a week in Auckland.")
    send(page, "Extend the trip to New Zealand.")

    # When the form opens, it starts from the parent's items, carried forward
    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    form = page.locator("checkpoint-form")
    expect(form.locator(".carried-note")).to_contain_text(
        f"Carried forward from {australia['shortHash']} Australia plan"
    )
    decisions = form.locator("list-editor[label=Decisions] textarea")
    expect(decisions).to_have_count(1)
    expect(decisions.first).to_have_value("Fly into Sydney")
    expect(form.locator("list-editor[label=Decisions] li.carried .tag")).to_have_text(
        ["carried forward"]
    )
    # And Draft with AI adds what the window gave as new items
    form.get_by_role("button", name="Draft with AI").click()
    expect(form).to_contain_text("Drafted by offline/extractor from turns 3\u20134")
    entities = form.locator("list-editor[label=Entities] textarea")
    expect(entities).to_have_count(2)
    assert [e.input_value() for e in entities.all()] == ["New Zealand", "Auckland"]
    expect(form.locator("list-editor[label=Entities] li.new .tag")).to_have_text(["new", "new"])
    expect(decisions.first).to_have_value("Fly into Sydney")
    form.get_by_label("Title").fill("Australia + NZ")
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form).to_be_hidden()
    expect(page.locator("checkpoint-cell")).to_have_count(2)

    # Then, with the default scope (the latest checkpoint), the model still gets
    # the parent's decision
    saved = checkpoints(server, sid)["Australia + NZ"]
    assert saved["decisions"] == ["Fly into Sydney"]
    assert saved["entities"] == ["New Zealand", "Auckland"]
    fake.reply("Layers and a rain jacket.")
    send(page, "What should we pack?")
    assert fake.requests[-1]["messages"] == [
        {
            "role": "system",
            "content": "You are continuing a conversation.\n\n"
            f"Checkpoint [1] \u2014 Australia + NZ ({saved['shortHash']})\n"
            "Objective: Extend the trip to New Zealand.\n"
            "Summary:\nExtend the trip to New Zealand. Add a week in Auckland.\n"
            "Key Decisions:\n- Fly into Sydney",
        },
        {"role": "user", "content": "What should we pack?"},
    ]


def test_the_form_fits_the_pane_with_one_save_and_edits_items_like_a_list(
    page: Page, server: SmritiServer
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    sid = start_in_space(page, server, "Form fit")
    send(page, "Plan the week.")
    tasks = [f"Task number {n} to do before the trip starts" for n in range(1, 9)]
    gql(
        server.base_url,
        """mutation($s: ID!, $t: [String!]) { createCheckpoint(input: {sessionId: $s,
             title: "Week plan", decisions: ["Walk every day"], tasks: $t,
             openQuestions: ["Which museum?", "Rent bikes?"]}) { errors { code } } }""",
        s=sid,
        t=tasks,
    )
    page.reload()
    expect(page.locator("checkpoint-cell")).to_have_count(1)
    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    form = page.locator("checkpoint-form")
    expect(form.locator("list-editor[label=Tasks] textarea")).to_have_count(8)

    # One Save button, and it is in view and on top (not under the composer)
    expect(page.get_by_role("button", name="Save checkpoint")).to_have_count(1)
    save = form.get_by_role("button", name="Save checkpoint")
    expect(save).to_be_in_viewport()
    box = save.bounding_box()
    assert box is not None
    on_top = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y)?.textContent",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert on_top == "Save checkpoint"
    assert box["y"] + box["height"] <= 800

    # Enter in an item adds the next one, focused
    questions = form.locator("list-editor[label='Open questions'] textarea")
    questions.first.click()
    questions.first.press("End")
    questions.first.press("Enter")
    expect(questions).to_have_count(3)
    expect(questions.nth(1)).to_be_focused()
    page.keyboard.type("Where to eat?")
    assert [q.input_value() for q in questions.all()] == [
        "Which museum?",
        "Where to eat?",
        "Rent bikes?",
    ]
    # A long item wraps in a field that grows
    decision = form.locator("list-editor[label=Decisions] textarea").first
    one_line = decision.bounding_box()["height"]  # type: ignore[index]
    decision.fill("Walk every day " * 12)
    assert decision.bounding_box()["height"] > one_line * 1.8  # type: ignore[index]
    decision.fill("Walk every day")

    # Ticked-off tasks and resolved questions are left out of the saved checkpoint
    form.get_by_label("Done: Tasks item 1").check()
    form.get_by_label("Resolved: Open questions item 3").check()
    expect(form.locator("list-editor[label=Tasks] li.done")).to_have_count(1)
    form.get_by_label("Title").fill("Week plan, later")
    save.click()
    expect(form).to_be_hidden()
    saved = checkpoints(server, sid)["Week plan, later"]
    assert saved["tasks"] == tasks[1:]
    assert saved["openQuestions"] == ["Which museum?", "Where to eat?"]
    assert saved["decisions"] == ["Walk every day"]
    # The composer is back once the form is closed
    expect(page.get_by_label("Message", exact=True)).to_be_visible()


def test_the_offline_model_says_it_is_a_stand_in_and_how_to_add_a_real_one(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    new_session(page, None)
    hint = page.locator("composer-cell .model-hint")
    expect(hint).to_be_visible()
    expect(hint.locator("summary")).to_have_text(
        "Offline models are stand-ins: echo describes the context it got. "
        "How to add a real provider"
    )
    hint.locator("summary").click()
    expect(hint).to_contain_text("providers.yaml")
    expect(hint).to_contain_text("Adding a real provider")
    page.get_by_label("Model", exact=True).select_option("lab/my-model")
    expect(hint).to_be_hidden()


@pytest.fixture(scope="module")
def paced_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmritiServer]:
    """Offline models only, streamed at 150 ms a word."""
    database = tmp_path_factory.mktemp("paced") / "smriti.sqlite3"
    env = {"SMRITI_OFFLINE_STREAM_DELAY_MS": "150"}
    with SmritiServer(sqlite_url(database), env=env) as running:
        warm_up(running.base_url)
        yield running


def test_stop_can_be_tried_with_the_offline_model(page: Page, paced_server: SmritiServer) -> None:
    open_app(page, paced_server.base_url)
    new_session(page, None)
    sid = session_id(page)
    box = page.get_by_label("Message", exact=True)
    box.fill("Tell me about the trip")
    box.press("Shift+Enter")
    streaming = page.locator(".cell.assistant.pending")
    expect(streaming.locator(".cell-body")).to_contain_text("Offline echo")
    streaming.get_by_role("button", name="Stop").click()

    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    expect(reply.get_by_role("button", name="Continue")).to_be_visible()
    edges = gql(paced_server.base_url, SESSION, s=sid)["session"]["turns"]["edges"]
    saved = edges[-1]["node"]
    assert saved["role"] == "ASSISTANT"
    assert saved["interrupted"] is True
    assert saved["content"].startswith("Offline echo")
    assert not saved["content"].endswith("You asked: Tell me about the trip")
