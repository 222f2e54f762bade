"""A 5,000-turn session: opens at its end, loads page by page up to its start."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.support import SCROLL_TO_TOP, long_session, open_app
from tests.support.servers import SmritiServer

TURNS = 5000


def test_a_5000_turn_session_opens_at_the_end_and_scrolls_to_the_start(
    page: Page, server: SmritiServer, database: Path
) -> None:
    sid = long_session(server.base_url, database, TURNS)
    open_app(page, server.base_url, f"/?session={sid}")
    last = page.locator(f"#turn-{TURNS}")
    expect(last).to_be_in_viewport()
    # Numbered by exchange though the 4,950 turns before are not loaded (exchangeNumber).
    expect(last.locator(".cell-gutter")).to_have_text(f"Out [{TURNS // 2}]")
    expect(last.locator(".cell-gutter")).to_have_attribute(
        "title", f"Turn {TURNS}, the reply to turn {TURNS - 1}"
    )
    expect(page.locator("turn-cell")).to_have_count(50)  # only the newest page

    # Near the top, the next page loads above what is on screen, which stays in place.
    page.locator(f"#turn-{TURNS - 47}").scroll_into_view_if_needed()
    page.locator(".centre").evaluate("el => el.scrollTop = Math.min(el.scrollTop, 200)")
    expect(page.locator("turn-cell")).to_have_count(100)
    page.wait_for_timeout(100)
    expect(page.locator(f"#turn-{TURNS - 49}")).to_be_in_viewport()

    page.evaluate(SCROLL_TO_TOP)
    # A hundred pages, each loaded as the one before comes into view: on a loaded
    # machine that takes longer than one page's usual wait.
    expect(page.locator("turn-cell")).to_have_count(TURNS, timeout=60_000)
    expect(page.locator("notebook-view .sentinel")).to_be_hidden()
    expect(page.locator("#turn-1")).to_be_in_viewport()
    expect(page.locator("#turn-1 .cell-gutter")).to_have_text("In [1]")
    # Turns stay in order, every one exactly once.
    sequence = page.locator("turn-cell").evaluate_all(
        "cells => cells.map(c => Number(c.dataset.seq))"
    )
    assert sequence == list(range(1, TURNS + 1))
