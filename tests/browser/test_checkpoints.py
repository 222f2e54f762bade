"""Checkpoints and mounting from the UI: the Australia / New Zealand scenario."""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import Page, expect

from tests.browser.support import (
    badge,
    create_space,
    gql,
    new_session,
    open_app,
    save_checkpoint,
    send,
    session_id,
)
from tests.support.servers import SmritiServer

PREVIEW = """query($s: ID!) { contextPreview(input: {sessionId: $s, content: ""}) {
  mode checkpoints { shortHash } turns { sequenceNumber } tokenEstimate } }"""
LINEAGE = """query($s: ID!) { session(id: $s) { space { lineage(first: 10) { edges { node { id shortHash title } } } } } }"""


def hashes(server: SmritiServer, sid: str) -> dict[str, str]:
    edges = gql(server.base_url, LINEAGE, s=sid)["session"]["space"]["lineage"]["edges"]
    return {e["node"]["title"]: e["node"]["shortHash"] for e in edges}


def server_badge(server: SmritiServer, sid: str) -> str:
    plan = gql(server.base_url, PREVIEW, s=sid)["contextPreview"]
    if plan["mode"] == "FRESH":
        return "FRESH"
    return f"{plan['mode']} · {plan['checkpoints'][-1]['shortHash'] if plan['checkpoints'] else 'no checkpoint yet'}"


def test_mounting_australia_hides_new_zealand_from_the_model(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Trips")
    new_session(page, "Trips")
    sid = session_id(page)
    expect(page.locator("context-badge")).to_have_text("HEAD · no checkpoint yet")

    send(page, "Plan two weeks in Australia.")
    save_checkpoint(page, "Australia plan", decisions=["Fly into Sydney"])
    australia = hashes(server, sid)["Australia plan"]
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {australia}")

    send(page, "Extend the trip to New Zealand.")
    save_checkpoint(page, "New Zealand extension")
    new_zealand = hashes(server, sid)["New Zealand extension"]
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {new_zealand}")
    assert badge(page) == server_badge(server, sid)

    # Open the first checkpoint from the lineage graph and mount it.
    page.get_by_role("button", name=re.compile(f"^{australia} Australia plan")).click()
    details = page.locator("checkpoint-details")
    expect(details).to_contain_text("Fly into Sydney")
    details.get_by_role("button", name="Mount").click()
    expect(page.locator("context-badge")).to_have_text(f"MOUNTED · {australia}")
    assert badge(page) == server_badge(server, sid)
    expect(page.locator("composer-cell .ctx-line")).to_have_text(
        re.compile(rf"^ctx: MOUNTED · {australia} \(1 checkpoint, 0 turns, ~\d+ tokens\)$")
    )
    # Every turn so far is at or before the boundary: dimmed, behind the divider.
    expect(page.locator("turn-cell.dimmed")).to_have_count(4)
    expect(page.locator(".mount-divider")).to_contain_text(f"Mounted {australia}")
    expect(page.locator("lineage-graph g.node.mounted")).to_have_count(1)

    send(page, "What should we pack?")
    reply = page.locator("turn-cell.assistant").last
    expect(reply).to_contain_text(f"Checkpoints (1): [1] Australia plan ({australia})")
    expect(reply).not_to_contain_text("New Zealand")
    expect(reply).to_contain_text("Earlier turns: 0")
    expect(page.locator("turn-cell.dimmed")).to_have_count(4)

    # Unmount: back to the head of main.
    page.locator("session-header").get_by_role("button", name="Unmount").click()
    expect(page.locator("context-badge")).to_have_text(f"HEAD · {new_zealand}")
    expect(page.locator(".mount-divider")).to_have_count(0)


CHECKPOINT = """query($id: ID!) { checkpoint(id: $id) { title objective summary decisions tasks openQuestions entities } }"""


def start_trip(page: Page, server: SmritiServer, space: str) -> str:
    open_app(page, server.base_url)
    create_space(page, space)
    new_session(page, space)
    return session_id(page)


def test_the_checkpoint_form_drafts_with_ai_adding_new_items_then_saves_the_edits(
    page: Page, server: SmritiServer
) -> None:
    sid = start_trip(page, server, "Form")
    send(page, "We decided to fly into Sydney. TODO book the harbour hotel. Should we rent a car?")
    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    form = page.locator("checkpoint-form")
    expect(form.get_by_label("Title")).to_be_focused()
    form.get_by_label("Title").fill("typed by hand")
    form.get_by_role("button", name="Add decisions item").click()
    form.locator("list-editor[label=Decisions] textarea").last.fill("a hand-written decision")

    form.get_by_role("button", name="Draft with AI").click()
    expect(form).to_contain_text("Drafted by offline/extractor")
    expect(form.get_by_label("Title")).not_to_have_value("typed by hand")
    decisions = form.locator("list-editor[label=Decisions] textarea")
    # Your own items stay; the draft's are added after them, marked new.
    assert [d.input_value() for d in decisions.all()] == [
        "a hand-written decision",
        "We decided to fly into Sydney.",
    ]
    expect(form.locator("list-editor[label=Decisions] li.new .tag")).to_have_text(["new"])
    expect(form.locator("list-editor[label=Tasks] textarea").first).to_have_value(
        re.compile("book the harbour hotel")
    )
    expect(form.locator("list-editor[label='Open questions'] textarea").first).to_have_value(
        "Should we rent a car?"
    )
    # Drafting again replaces the previous draft's items: nothing doubles.
    form.get_by_role("button", name="Draft with AI").click()
    expect(form.get_by_role("button", name="Draft with AI")).to_be_enabled()
    expect(decisions).to_have_count(2)

    # Review: edit the title, edit one item, remove the rest, add one.
    form.get_by_label("Title").fill("Sydney arrival")
    decisions.first.fill("Fly into Sydney")
    while decisions.count() > 1:
        form.get_by_role("button", name="Remove Decisions item 2").click()
    form.get_by_role("button", name="Add entities item").click()
    form.locator("list-editor[label=Entities] textarea").last.fill("Opera House")
    entities = [e.input_value() for e in form.locator("list-editor[label=Entities] textarea").all()]
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form).to_be_hidden()

    cell = page.locator("checkpoint-cell")
    expect(cell).to_contain_text("Sydney arrival")
    node_id = cell.get_attribute("data-checkpoint")
    saved = gql(server.base_url, CHECKPOINT, id=node_id)["checkpoint"]
    assert saved["title"] == "Sydney arrival"
    assert saved["decisions"] == ["Fly into Sydney"]
    assert saved["openQuestions"] == ["Should we rent a car?"]
    assert saved["entities"] == entities and entities[-1] == "Opera House"
    assert sid


def test_save_errors_from_the_payload_are_shown_in_the_form(
    page: Page, server: SmritiServer
) -> None:
    start_trip(page, server, "Errors")
    page.locator("session-header").get_by_role("button", name="Save checkpoint").click()
    form = page.locator("checkpoint-form")
    form.get_by_label("Objective").fill("no title given")
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form.locator(".error-text")).to_have_text("INVALID A checkpoint needs a title.")
    expect(form).to_be_visible()
    form.get_by_role("button", name="Cancel").click()
    expect(form).to_be_hidden()


def test_checkpoint_cells_sit_after_their_last_turn_and_collapse(
    page: Page, server: SmritiServer
) -> None:
    start_trip(page, server, "Cells")
    send(page, "Day one in Perth.")
    save_checkpoint(page, "Perth", decisions=["See Kings Park"])
    send(page, "Day two in Broome.")
    cell = page.locator("checkpoint-cell")
    # Placed after the turn its sourceTurnRange ends with (turn 2), before turn 3.
    assert page.locator("#turn-2 + checkpoint-cell").count() == 1
    assert page.locator("checkpoint-cell + #turn-3").count() == 1
    body = cell.locator(".cp-body")
    expect(body).to_be_hidden()
    cell.locator("summary").click()
    expect(body).to_contain_text("See Kings Park")
    cell.locator("summary").click()
    expect(body).to_be_hidden()


def test_forking_opens_a_new_session_on_its_own_lane_of_the_graph(
    page: Page, server: SmritiServer
) -> None:
    original = start_trip(page, server, "Forks")
    send(page, "Plan Japan.")
    save_checkpoint(page, "Japan plan", decisions=["Start in Tokyo"])
    page.locator("lineage-graph g.node").first.click()
    details = page.locator("checkpoint-details")
    details.get_by_label("New branch name").fill("kyoto")
    details.get_by_role("button", name="Fork").click()
    expect(page).not_to_have_url(re.compile(f"session={re.escape(quote(original, safe=''))}$"))
    header = page.locator("session-header")
    expect(header).to_contain_text("Branch kyoto")
    # The fork starts from its checkpoint, shown at the top of the new notebook.
    expect(page.locator("checkpoint-cell")).to_contain_text("Japan plan")
    expect(page.locator("context-badge")).to_have_text(re.compile(r"^HEAD · [0-9a-f]{7}$"))

    send(page, "Go to Kyoto instead of Osaka.")
    save_checkpoint(page, "Kyoto detour")
    graph = page.locator("lineage-graph")
    expect(graph.locator("g.node")).to_have_count(2)
    expect(graph.locator(".legend")).to_have_text("mainkyoto")
    expect(graph.locator("g.node.head")).to_have_count(2)
    expect(graph.locator("path.edge")).to_have_count(1)
    expect(graph.locator("g.node.lane-1")).to_contain_text("Kyoto detour")


def test_compare_two_checkpoints_side_by_side(page: Page, server: SmritiServer) -> None:
    start_trip(page, server, "Compare")
    send(page, "Plan Peru.")
    save_checkpoint(page, "Peru v1", decisions=["Visit Cusco", "Fly via Lima"])
    send(page, "Change of plan.")
    save_checkpoint(
        page, "Peru v2", decisions=["Visit Cusco", "Hike the Inca Trail"], drop=["Fly via Lima"]
    )
    page.get_by_role("button", name=re.compile("^[0-9a-f]{7} Peru v1")).click()
    details = page.locator("checkpoint-details")
    other = details.get_by_label("Compare with")
    other.select_option(other.locator("option", has_text="Peru v2").get_attribute("value"))
    details.get_by_role("button", name="Compare").click()
    dialog = page.get_by_role("dialog", name="Compare checkpoints")
    expect(dialog).to_be_visible()
    row = dialog.locator("tr[data-field=decisions]")
    expect(row.locator(".only-a")).to_have_text("Fly via Lima")
    expect(row.locator(".shared")).to_have_text("Visit Cusco")
    expect(row.locator(".only-b")).to_have_text("Hike the Inca Trail")
    expect(dialog).to_contain_text(re.compile(r"Common ancestor: [0-9a-f]{7} Peru v1"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_open_the_conversation_a_checkpoint_came_from(page: Page, server: SmritiServer) -> None:
    original = start_trip(page, server, "Sources")
    send(page, "Plan Chile.")
    send(page, "Add Patagonia.")
    save_checkpoint(page, "Chile plan")
    page.locator("checkpoint-cell summary").click()
    page.locator("checkpoint-cell").get_by_role("button", name="Fork").click()
    expect(page).not_to_have_url(re.compile(f"session={re.escape(quote(original, safe=''))}$"))
    page.locator("lineage-graph g.node").first.click()
    details = page.locator("checkpoint-details")
    expect(details).to_contain_text("From turns 1\u20134")
    details.get_by_role("button", name="Open source conversation").click()
    expect(page).to_have_url(re.compile(f"session={re.escape(quote(original, safe=''))}$"))
    expect(page.locator("#turn-1")).to_be_focused()


ITEMS = """query($s: ID!) { session(id: $s) { space { lineage(first: 10) { edges { node {
  title decisionItems { id text } } } } } } }"""


def test_an_item_edited_in_the_form_keeps_its_identity(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    create_space(page, "Coast")
    new_session(page, "Coast")
    sid = session_id(page)
    send(page, "Plan the Queensland coast.")
    save_checkpoint(page, "Base", decisions=["Rent a campervan", "Start in Cairns"])
    send(page, "Beach roads?")
    # The carried campervan is edited, "Start in Cairns" removed, one item added.
    page.get_by_role("button", name="Save checkpoint").first.click()
    form = page.locator("checkpoint-form")
    form.get_by_label("Title").fill("4WD")
    items = form.locator("list-editor[label=Decisions] textarea")
    expect(items).to_have_count(2)
    items.first.fill("Rent a 4WD campervan")
    form.get_by_role("button", name="Remove Decisions item 2").click()
    form.get_by_role("button", name="Add decisions item").click()
    items.last.fill("Drive on sand")
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form).to_be_hidden()
    edges = gql(server.base_url, ITEMS, s=sid)["session"]["space"]["lineage"]["edges"]
    found = {e["node"]["title"]: e["node"]["decisionItems"] for e in edges}
    rent, _cairns = found["Base"]
    edited, added = found["4WD"]
    assert edited == {"id": rent["id"], "text": "Rent a 4WD campervan"}
    assert added["text"] == "Drive on sand"
    assert added["id"] not in {i["id"] for i in found["Base"]}
