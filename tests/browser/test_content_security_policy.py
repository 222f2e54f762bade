"""The web UI and GraphiQL work under their Content-Security-Policy, with no violation,
and no other site can frame them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import create_space, new_session, open_app, save_checkpoint, send
from tests.support.servers import SmritiServer

# Reported by the browser for every blocked load, script, style or connection.
WATCH = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));"""


@pytest.fixture
def watched(page: Page) -> Iterator[tuple[Page, list[str]]]:
    console: list[str] = []
    page.on(
        "console",
        lambda m: console.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.add_init_script(WATCH)
    yield page, console
    assert console == []


def violations(page: Page) -> list[str]:
    found: list[str] = page.evaluate("window.__violations")
    return found


def test_the_web_ui_works_under_its_policy(
    server: SmritiServer, watched: tuple[Page, list[str]]
) -> None:
    page, _ = watched
    open_app(page, server.base_url)
    create_space(page, "Policies")
    new_session(page, "Policies")
    send(page, "Hello **there**, `code` and a [link](https://example.com)")  # streamed over SSE
    save_checkpoint(page, "Under CSP")
    expect(page.locator("lineage-graph")).to_contain_text("Under CSP")
    assert violations(page) == []


def test_graphiql_runs_a_query_under_its_policy(
    server: SmritiServer, watched: tuple[Page, list[str]]
) -> None:
    page, _ = watched
    page.goto(server.graphql_url)
    editor = page.locator(".graphiql-query-editor .CodeMirror")
    expect(editor).to_be_visible()
    editor.click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text("{ providers { chatDefault } }")
    page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()
    expect(page.locator(".graphiql-response")).to_contain_text('"chatDefault": "offline/echo"')
    page.get_by_role("button", name="Show Documentation Explorer").click()
    expect(page.locator(".graphiql-doc-explorer")).to_contain_text("Query")
    assert violations(page) == []


def test_no_other_page_can_frame_the_ui(server: SmritiServer, page: Page) -> None:
    # The browser's refusal, reported on the console, is the event to wait for.
    with page.expect_console_message(lambda m: "frame-ancestors 'none'" in m.text) as refused:
        page.set_content(f'<iframe src="{server.base_url}/"></iframe>')
    assert "The request has been blocked." in refused.value.text, refused.value.text
    frame = page.frames[1]
    assert frame.evaluate("document.querySelector('smriti-app') === null")
