"""Branching a conversation in the notebook (issue 21 §1): Edit a sent message,
Regenerate a reply, switch between the alternatives ("2 / 3" between arrows) in place;
the old line stays as it was. At 390 px and 1440 px."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import gql, open_app, send, session_id
from tests.support.servers import SmritiServer

TURNS = """query($id: ID!) { session(id: $id) { turns(first: 20) { nodes { role content } } } }"""


def contents(server: SmritiServer, sid: str) -> list[str]:
    data = gql(server.base_url, TURNS, id=sid)["session"]["turns"]["nodes"]
    return [
        t["content"].split("\n")[-1] if t["role"] == "ASSISTANT" else t["content"] for t in data
    ]


@pytest.mark.parametrize("width", [390, 1440])
def test_edit_regenerate_and_switch_alternatives(
    page: Page, server: SmritiServer, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    created = gql(server.base_url, "mutation { createSession(input: {}) { session { id } } }")
    open_app(page, server.base_url, f"/?session={created['createSession']['session']['id']}")
    send(page, "Plan a trip to Kyoto")
    send(page, "How many days?")
    origin = session_id(page)
    before = contents(server, origin)
    assert before == [
        "Plan a trip to Kyoto",
        "You asked: Plan a trip to Kyoto",
        "How many days?",
        "You asked: How many days?",
    ]

    # Edit the second message: a textarea in place; Escape leaves it as it was.
    question = page.locator("#turn-3")
    question.get_by_role("button", name="Edit").click()
    editor = question.get_by_label("Edit message")
    expect(editor).to_be_focused()
    expect(editor).to_have_value("How many days?")
    editor.press("Escape")
    expect(question.get_by_label("Edit message")).to_have_count(0)
    expect(question.locator(".cell-body")).to_have_text("How many days?")
    question.get_by_role("button", name="Edit").click()
    editor = question.get_by_label("Edit message")
    expect(editor).to_be_focused()
    editor.fill("How many nights?")
    expect(question.get_by_role("button", name="Save & send")).to_be_visible()
    editor.press("Control+Enter")

    # The branch opens in place of the conversation, its reply saved.
    expect(page).not_to_have_url(f"{server.base_url}/?session={origin}")
    edited = session_id(page)
    assert edited != origin
    expect(page.locator("#turn-3 .cell-body")).to_have_text("How many nights?")
    expect(page.locator("#turn-4")).to_contain_text("Earlier turns: 2")
    expect(page.locator("#turn-4")).to_contain_text("You asked: How many nights?")
    switcher = page.locator("#turn-3").get_by_role("group", name="Alternatives")
    expect(switcher).to_contain_text("2 / 2")
    expect(switcher.get_by_role("button", name="Next alternative")).to_be_disabled()
    # The context preview describes the branch on screen.
    page.get_by_label("Message", exact=True).fill("And then?")
    page.get_by_role("button", name="Show context").click()
    drawer = page.get_by_role("dialog", name="What the model will receive")
    expect(drawer.locator(".ctx-message pre").nth(2)).to_have_text("How many nights?")
    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    page.get_by_label("Message", exact=True).fill("")

    # Previous alternative: the original line, the cell in view.
    switcher.get_by_role("button", name="Previous alternative").click()
    expect(page.locator("#turn-3 .cell-body")).to_have_text("How many days?")
    assert session_id(page) == origin
    switcher = page.locator("#turn-3").get_by_role("group", name="Alternatives")
    expect(switcher).to_contain_text("1 / 2")
    expect(page.locator("#turn-3")).to_be_in_viewport()

    # Regenerate the last reply: another branch, alternatives at the reply.
    page.locator("#turn-4").get_by_role("button", name="Regenerate").click()
    expect(page.locator("#turn-4").get_by_role("group", name="Alternatives")).to_contain_text(
        "2 / 2"
    )
    regenerated = session_id(page)
    assert regenerated not in (origin, edited)
    expect(page.locator("#turn-4")).to_contain_text("You asked: How many days?")
    # It holds the origin's message at 3, which has the edited one as its alternative.
    expect(page.locator("#turn-3").get_by_role("group", name="Alternatives")).to_contain_text(
        "1 / 2"
    )
    page.locator("#turn-4").get_by_role("button", name="Previous alternative").click()
    expect(page.locator("#turn-4").get_by_role("group", name="Alternatives")).to_contain_text(
        "1 / 2"
    )
    assert session_id(page) == origin

    # The sidebar lists the conversation once, with its branches counted.
    page.reload()
    expect(page.locator(".session-row.current .tag")).to_have_text("3 branches")
    # The fork before the count is drawn (a mask), not a character most fonts lack.
    icon = page.locator(".session-row.current .tag.branches").evaluate(
        "el => { const s = getComputedStyle(el, '::before');"
        " return [s.content, s.maskImage.slice(0, 30), Math.round(parseFloat(s.width))]; }"
    )
    assert icon == ['""', 'url("data:image/svg+xml,%3Csvg', 10]
    # The count leaves the title its room: at 1440 px "3 branches" in words cut the
    # title to its first five characters.
    name = page.locator(".session-row.current a.name")
    if width == 1440:
        assert (name.bounding_box() or {"width": 0})["width"] >= 120
    expect(page.locator(".session-row.current a.name")).to_have_attribute(
        "href",
        f"/?session={quote(regenerated, safe='')}",  # the branch active most recently
    )

    # Nothing was rewritten: the original line is intact.
    assert contents(server, origin) == before
    assert contents(server, edited)[2] == "How many nights?"
    assert len(contents(server, regenerated)) == 4
