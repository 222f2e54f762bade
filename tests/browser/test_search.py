"""The search box: `/` focuses it, hits come grouped with safe snippets and pages,
opening a hit goes to it (a turn 120+ turns back included), bad searches say why."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.support import gql, open_app
from tests.support.servers import SmritiServer

ERRORS = "errors { code message }"


def _payload(base_url: str, mutation: str, type_: str, result: str, **input_: Any) -> Any:
    data = gql(
        base_url,
        f"mutation($input: {type_}!) {{ {mutation}(input: $input) {{ {result} {ERRORS} }} }}",
        input=input_,
    )[mutation]
    assert data["errors"] == []
    return data


def make_space(base_url: str, name: str, description: str = "") -> str:
    space: str = _payload(
        base_url,
        "createSpace",
        "CreateSpaceInput",
        "space { id }",
        name=name,
        description=description,
    )["space"]["id"]
    return space


def make_session(base_url: str, title: str, space_id: str | None = None) -> str:
    fields: dict[str, Any] = {"title": title}
    if space_id:
        fields["spaceId"] = space_id
    sid: str = _payload(
        base_url, "createSession", "CreateSessionInput", "session { id }", **fields
    )["session"]["id"]
    return sid


def send(base_url: str, session_id: str, content: str) -> None:
    _payload(
        base_url,
        "sendMessage",
        "SendMessageInput",
        "userTurn { id }",
        sessionId=session_id,
        content=content,
    )


def make_checkpoint(base_url: str, session_id: str, title: str, decisions: list[str]) -> str:
    short: str = _payload(
        base_url,
        "createCheckpoint",
        "CreateCheckpointInput",
        "checkpoint { shortHash }",
        sessionId=session_id,
        title=title,
        decisions=decisions,
    )["checkpoint"]["shortHash"]
    return short


def search(page: Page, query: str) -> Locator:
    """Type a search with `/` and Enter; the results dialog once it has answered."""
    page.keyboard.press("/")
    box = page.get_by_role("searchbox", name="Search")
    expect(box).to_be_focused()
    box.fill(query)
    box.press("Enter")
    dialog = page.get_by_role("dialog", name="Search results")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".search-groups")).not_to_have_attribute("aria-busy", "true")
    return dialog


def groups(dialog: Locator) -> list[tuple[str, list[str]]]:
    """Each group's heading and its hits' texts, as shown (whitespace collapsed)."""
    found: list[tuple[str, list[str]]] = dialog.locator(".search-group").evaluate_all(
        """gs => gs.map((g) => [g.querySelector("h3").textContent.replace(/\\s+/g, " ").trim(),
          [...g.querySelectorAll("button.hit")].map(
            (b) => b.textContent.replace(/\\s+/g, " ").trim())])"""
    )
    return [(heading, hits) for heading, hits in found]


def marks(dialog: Locator) -> list[str]:
    return dialog.locator(".snippet mark").all_inner_texts()


def test_hits_are_grouped_by_session_checkpoint_and_space_with_safe_snippets(
    page: Page, server: SmritiServer
) -> None:
    base = server.base_url
    space = make_space(base, "Lagoon atlas", "Ferries <b>and</b> tides")
    crossing = make_session(base, "Lagoon crossing", space)
    send(base, crossing, "Which lagoon ferry leaves first? <img src=x onerror=alert(1)>")
    short = make_checkpoint(base, crossing, "Lagoon plan", ["Take the early lagoon ferry"])
    harbour = make_session(base, "Harbour notes", space)
    send(base, harbour, "Is the lagoon calm & quiet at dawn?")
    open_app(page, base)

    dialog = search(page, "lagoon")
    expect(dialog.get_by_role("status")).to_have_text("7 results for “lagoon”.")
    echo = "0 (0 from the user, 0 from the assistant) You asked:"
    assert groups(dialog) == [
        (
            f"Checkpoint {short} Lagoon plan in Lagoon atlas · main",
            ["Content Lagoon plan Take the early lagoon ferry"],
        ),
        (
            "Session Lagoon crossing in Lagoon atlas",
            [
                "Title Lagoon crossing",
                "In [1] Which lagoon ferry leaves first? <img src=x onerror=alert(1)>",
                f"Out [1] … {echo} Which lagoon ferry leaves first? <img src=x onerror=alert(1)>",
            ],
        ),
        (
            "Session Harbour notes in Lagoon atlas",
            [
                "In [1] Is the lagoon calm & quiet at dawn?",
                "Out [1] …HEAD or MOUNTED (checkpoints received) Checkpoints (1): [1] Lagoon plan "
                f"({short}) Earlier turns: {echo} Is the lagoon calm & quiet at dawn?",
            ],
        ),
        ("Space Lagoon atlas", ["Name Lagoon atlas Ferries <b>and</b> tides"]),
    ]
    # Only the matches are marked; the markup people wrote stays text.
    assert marks(dialog) == [
        *("Lagoon", "lagoon"),  # the checkpoint
        *("Lagoon", "lagoon", "lagoon"),  # Lagoon crossing
        *("lagoon", "Lagoon", "lagoon"),  # Harbour notes
        "Lagoon",  # the space
    ]
    assert dialog.locator(".snippet *:not(mark)").count() == 0

    # Filters search again: one kind; then only the open session's space.
    dialog.get_by_label("Show").select_option(label="Checkpoints")
    expect(dialog.get_by_role("status")).to_have_text("1 result for “lagoon”.")
    assert [heading for heading, _ in groups(dialog)] == [
        f"Checkpoint {short} Lagoon plan in Lagoon atlas · main"
    ]
    dialog.get_by_label("Show").select_option(label="Everything")
    expect(dialog.get_by_role("status")).to_have_text("7 results for “lagoon”.")
    expect(dialog.get_by_label("Only in space")).to_be_hidden()  # no session is open


def test_a_turn_hit_121_turns_back_opens_its_session_scrolled_to_that_cell(
    page: Page, server: SmritiServer
) -> None:
    base = server.base_url
    sid = make_session(base, "Airship voyage")
    for n in range(1, 67):  # 132 turns; the 6th question is turn 11
        send(base, sid, "Where is the zeppelin hangar?" if n == 6 else f"Leg {n}: any headwind?")
    open_app(page, base)

    dialog = search(page, "zeppelin")
    assert groups(dialog) == [
        (
            "Session Airship voyage in no space",
            [
                "In [6] Where is the zeppelin hangar?",
                "Out [6] … the user, 5 from the assistant) You asked: Where is the zeppelin "
                "hangar?",
            ],
        )
    ]
    dialog.get_by_role("button", name="In [6] Where is the zeppelin hangar?").click()
    expect(dialog).to_be_hidden()
    cell = page.locator("#turn-11")
    expect(cell).to_be_focused()
    expect(cell).to_have_class(re.compile(r"\bflash\b"))  # highlighted briefly
    expect(cell.locator(".cell-gutter")).to_have_text("In [6]")  # the 6th exchange, turn 11
    # The older pages were loaded (50 turns each), and the cell is where the view is.
    expect(page.locator("turn-cell")).to_have_count(132)
    assert page.evaluate(CENTRED, "#turn-11")
    expect(cell).not_to_have_class(re.compile(r"\bflash\b"), timeout=3000)
    assert page.evaluate(CENTRED, "#turn-11")


# In-page: is the cell in the middle of the notebook's visible part (as scrollIntoView
# with block "center" leaves it)?
CENTRED = """(selector) => {
  const cell = document.querySelector(selector).getBoundingClientRect();
  const view = document.querySelector(".centre").getBoundingClientRect();
  return Math.abs((cell.top + cell.bottom) / 2 - (view.top + view.bottom) / 2) <= 2;
}"""


def test_empty_unmatched_and_invalid_searches_each_say_so(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    status = page.get_by_role("dialog", name="Search results").get_by_role("status")
    syntax = 'Words in any order, "a phrase" in quotes, word* for a prefix.'
    cases = [
        ("   ", f"Type what to search for. {syntax}"),
        ("xylophonequartz", "No results for “xylophonequartz”."),
        (
            '" ( * ^',
            "That search cannot be run: A search needs at least one word (letters or digits). "
            + syntax,
        ),
        ("x" * 501, f"That search cannot be run: A search is at most 500 characters. {syntax}"),
    ]
    for query, message in cases:
        dialog = search(page, query)
        expect(status).to_have_text(message)
        expect(dialog.locator(".search-group")).to_have_count(0)
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        # Back in the box, with what was typed, to change it.
        expect(page.get_by_role("searchbox", name="Search")).to_be_focused()
        expect(page.get_by_role("searchbox", name="Search")).to_have_value(query)
        page.locator("#scroller").click(position={"x": 5, "y": 5})


def test_more_results_reads_the_next_page(page: Page, server: SmritiServer) -> None:
    for n in range(1, 24):
        make_session(server.base_url, f"Marmot trail {n}")
    open_app(page, server.base_url)
    dialog = search(page, "marmot")
    status = dialog.get_by_role("status")
    expect(status).to_have_text("The best 20 results for “marmot”; more below.")
    expect(dialog.locator("button.hit")).to_have_count(20)
    dialog.get_by_role("button", name="More results").click()
    expect(status).to_have_text("23 results for “marmot”.")
    expect(dialog.get_by_role("button", name="More results")).to_be_hidden()
    # Equal ranks: oldest first; the second page went on after the first.
    assert groups(dialog) == [
        (f"Session Marmot trail {n} in no space", [f"Title Marmot trail {n}"]) for n in range(1, 24)
    ]
    expect(dialog.locator("button.hit").nth(20)).to_be_focused()  # where the new page starts


def test_typing_a_slash_in_the_message_box_types_it(page: Page, server: SmritiServer) -> None:
    sid = make_session(server.base_url, "Slashes")
    open_app(page, server.base_url, f"/?session={sid}")
    box = page.get_by_label("Message", exact=True)
    box.click()
    page.keyboard.type("a/b")
    expect(box).to_have_value("a/b")
    expect(box).to_be_focused()


SIZES = [(390, 844), (1024, 768), (1440, 900)]


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_opening_each_kind_of_hit_at_any_width(
    browser: Browser, server: SmritiServer, width: int, height: int
) -> None:
    base = server.base_url
    word = f"fjord{width}"
    space = make_space(base, f"Norway {word}")
    cruise = make_session(base, f"Cruise {word}", space)
    send(base, cruise, f"Which {word} has the steepest walls?")
    short = make_checkpoint(base, cruise, f"Plan {word}", ["Sail at noon"])
    elsewhere = make_session(base, "Somewhere else")
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    open_app(page, base, f"/?session={elsewhere}")
    sideways = "document.documentElement.scrollWidth - window.innerWidth"

    dialog = search(page, word)
    box = dialog.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
    assert page.evaluate(sideways) <= 0
    # A checkpoint of another space: its session opens, the checkpoint is shown.
    dialog.locator("button.hit[data-kind=CHECKPOINT]").click()
    expect(page).to_have_url(f"{base}/?session={quote(cruise, safe='')}")
    details = page.locator("checkpoint-details")
    expect(details).to_be_visible()
    expect(details.locator("h3")).to_have_text(f"{short} Plan {word}")
    if width < 900:
        page.keyboard.press("Escape")  # close the lineage drawer

    search(page, word).locator("button.hit[data-kind=TURN]").first.click()
    expect(page.locator("#turn-1")).to_be_focused()
    expect(page.locator("#turn-1")).to_be_in_viewport()

    page.goto(f"{base}/?session={elsewhere}")
    search(page, word).locator("button.hit[data-kind=SESSION]").click()
    expect(page).to_have_url(f"{base}/?session={quote(cruise, safe='')}")
    expect(page.locator("session-header h1")).to_have_text(f"Cruise {word}")

    search(page, word).locator("button.hit[data-kind=SPACE]").click()
    group = page.locator(f'.space-group[data-space="{space}"]')
    expect(group).to_be_focused()
    expect(group).to_be_in_viewport()
    expect(group).to_have_class(re.compile(r"\bflash\b"))
    assert page.evaluate(sideways) <= 0
    context.close()


def test_only_in_space_narrows_to_the_open_sessions_space(page: Page, server: SmritiServer) -> None:
    base = server.base_url
    space = make_space(base, "Delta")
    inside = make_session(base, "Tides", space)
    send(base, inside, "When is the estuary at low tide?")
    make_session(base, "Estuary birds")  # in no space
    open_app(page, base, f"/?session={quote(inside, safe='')}")

    dialog = search(page, "estuary")
    assert [heading for heading, _ in groups(dialog)] == [
        "Session Estuary birds in no space",
        "Session Tides in Delta",
    ]
    dialog.get_by_label("Only in space Delta").check()
    expect(dialog.get_by_role("status")).to_have_text("2 results for “estuary”.")
    assert [heading for heading, _ in groups(dialog)] == ["Session Tides in Delta"]
    dialog.get_by_label("Show").select_option(label="Spaces")
    expect(dialog.get_by_role("status")).to_have_text(
        "No results for “estuary” with these filters."
    )
