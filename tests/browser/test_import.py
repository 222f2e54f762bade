"""Import in the UI: a ChatGPT conversations.json and a Smriti JSON export become
sessions in the sidebar that open with their turns; a broken file shows the server's
error; "Session as JSON" downloads a document that imports again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from api.store.database import sqlite_url
from tests.browser.axe import blocking, run_axe, summary
from tests.browser.support import gql, open_app
from tests.support.servers import SmritiServer

SPACE = "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }"
SESSION = """mutation($s: ID, $t: String) { createSession(input: {spaceId: $s, title: $t}) {
  session { id } } }"""
SEND = """mutation($s: ID!, $c: String!) { sendMessage(input: {sessionId: $s, content: $c}) {
  assistantTurn { content } errors { message } } }"""
EXPORT_SPACE = """query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) {
  document } }"""
DELETE_SPACE = "mutation($i: ID!) { deleteSpace(input: {id: $i}) { deletedId } }"
DELETE_SESSION = "mutation($i: ID!) { deleteSession(input: {id: $i}) { deletedId } }"
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  errors { code message field } } }"""


def chatgpt(title: str) -> bytes:
    """A handmade conversations.json: one conversation, a question and its answer."""

    def node(key: str, parent: str | None, child: str | None, role: str, text: str) -> Any:
        return {
            "id": key,
            "parent": parent,
            "children": [child] if child else [],
            "message": {
                "id": key,
                "author": {"role": role},
                "create_time": 1714564801.0,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
            },
        }

    conversation = {
        "title": title,
        "create_time": 1714564800.0,
        "update_time": 1714564900.0,
        "conversation_id": f"conv-{title}",
        "current_node": "a1",
        "mapping": {
            "root": {"id": "root", "message": None, "parent": None, "children": ["u1"]},
            "u1": node("u1", "root", "a1", "user", f"Question in {title}"),
            "a1": node("a1", "u1", None, "assistant", f"Answer in {title}"),
        },
    }
    return json.dumps([conversation]).encode()


def a_file(name: str, data: bytes) -> Any:
    return {"name": name, "mimeType": "application/json", "buffer": data}


def open_sidebar(page: Page) -> None:
    """On a phone the sidebar is a drawer: open it (unless it is open)."""
    toggle = page.locator("#left-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def open_import(page: Page) -> None:
    """The sidebar's "Import…"."""
    open_sidebar(page)
    page.locator("space-list").get_by_role("button", name="Import…").click()
    expect(page.locator("#import-dialog")).to_be_visible()


def sidebar_rows(page: Page, title: str) -> Any:
    return page.locator("space-list .session-row a.name", has_text=title)


def turns(page: Page) -> list[str]:
    cells = page.locator("turn-cell .cell-body")
    expect(cells).to_have_count(2)
    return [text.strip() for text in cells.all_inner_texts()]


@pytest.mark.parametrize("width", [390, 1440])
def test_import_a_chatgpt_file_a_smriti_export_and_a_broken_file(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    base = server.base_url
    context = browser.new_context(viewport={"width": width, "height": 844})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    open_app(page, base)

    # A ChatGPT export: its conversation becomes a session in no space.
    title = f"Kyoto at {width}"
    open_import(page)
    page.locator("#import-file").set_input_files(a_file("conversations.json", chatgpt(title)))
    result = page.locator("#import-result")
    expect(result).to_contain_text("Imported conversations.json: 1 new item.")
    expect(result.locator("li")).to_have_text([f"Session {title}"])
    no_space = page.locator("space-list .space-group[data-space='']")
    expect(no_space.locator(".session-row a.name", has_text=title)).to_have_count(1)
    result.get_by_role("link", name=title).click()
    expect(page.locator("#import-dialog")).to_be_hidden()
    expect(page.locator("#session-title")).to_have_text(title)
    assert turns(page) == [f"Question in {title}", f"Answer in {title}"]

    # The same file again: nothing new, and the sidebar lists it once.
    open_import(page)
    page.locator("#import-file").set_input_files(a_file("conversations.json", chatgpt(title)))
    expect(result).to_contain_text(
        "Nothing new: conversations.json was imported before (1 item already here)."
    )
    expect(sidebar_rows(page, title)).to_have_count(1)
    page.get_by_role("button", name="Close import").click()

    # A Smriti JSON export of a space, exported through GraphQL, its space deleted here.
    name = f"Exported at {width}"
    space = gql(base, SPACE, n=name)["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space, t=f"Notes at {width}")["createSession"]["session"]["id"]
    reply = gql(base, SEND, s=session, c="Remember the lanterns")["sendMessage"]
    assert reply["errors"] == []
    document = gql(base, EXPORT_SPACE, s=space)["exportSpace"]["document"]
    gql(base, DELETE_SPACE, i=space)
    open_import(page)
    page.locator("#import-file").set_input_files(a_file(f"{name}.json", document.encode()))
    expect(result).to_contain_text(f"Imported {name}.json: 1 new item.")
    expect(result.locator("li")).to_have_text([f"Space {name} (1 session)"])
    group = page.locator("space-list .space-group", has=page.locator("a.name", has_text=name))
    expect(group.locator(".session-row a.name")).to_have_text([f"Notes at {width}"])
    page.get_by_role("button", name="Close import").click()
    open_sidebar(page)
    group.locator(".session-row a.name").click()
    expect(page.locator("#session-title")).to_have_text(f"Notes at {width}")
    assert turns(page) == ["Remember the lanterns", reply["assistantTurn"]["content"]]

    # A broken file: the server's error, in its words, with the field it names.
    broken = '{"spaces": [{"name": 1}]'
    expected = gql(base, IMPORT, d=broken)["importSpace"]["errors"][0]
    open_import(page)
    page.locator("#import-file").set_input_files(a_file("broken.json", broken.encode()))
    alert = page.locator("#import-errors")
    expect(alert).to_have_text(
        f"broken.json was not imported:{expected['code']}: {expected['message']}"
        f" (field {expected['field']})"
    )
    page.get_by_role("button", name="Close import").click()
    context.close()
    assert errors == []


def test_session_as_json_downloads_and_imports_again(page: Page, server: SmritiServer) -> None:
    base = server.base_url
    loose = gql(base, SESSION, t="Loose thoughts")["createSession"]["session"]["id"]
    reply = gql(base, SEND, s=loose, c="A thought outside any space")["sendMessage"]
    open_app(page, base, f"/?session={loose}")
    picker = page.get_by_label("Export", exact=True)
    with page.expect_download() as download:
        picker.select_option("JSON")
    assert download.value.suggested_filename.endswith(".json")
    saved = Path(download.value.path())
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert [s["title"] for s in document["sessions"]] == ["Loose thoughts"]
    # "Import a file…" in the same menu opens the import dialog.
    picker.select_option("IMPORT")
    expect(page.locator("#import-dialog")).to_be_visible()
    expect(picker).to_have_value("")
    page.get_by_role("button", name="Close import").click()

    gql(base, DELETE_SESSION, i=loose)
    open_app(page, base)
    expect(sidebar_rows(page, "Loose thoughts")).to_have_count(0)
    open_import(page)
    page.locator("#import-file").set_input_files(str(saved))
    result = page.locator("#import-result")
    expect(result).to_contain_text(f"Imported {saved.name}: 1 new item.")
    expect(sidebar_rows(page, "Loose thoughts")).to_have_count(1)
    result.get_by_role("link", name="Loose thoughts").click()
    assert turns(page) == ["A thought outside any space", reply["assistantTurn"]["content"]]


def test_in_a_space_the_menu_offers_the_space_as_json(page: Page, server: SmritiServer) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Menu space")["createSpace"]["space"]["id"]
    session = gql(base, SESSION, s=space, t="In a space")["createSession"]["session"]["id"]
    open_app(page, base, f"/?session={session}")
    picker = page.get_by_label("Export", exact=True)
    options = picker.locator("option")
    expect(options).to_have_text(
        [
            "Export…",
            "Session as Markdown",
            "Session as notebook (.ipynb)",
            "Session as JSON: only for a session in no space",
            "Space as JSON (for import)",
            "Import a file…",
        ]
    )
    expect(picker.locator("option[value=JSON]")).to_be_disabled()


def test_a_file_larger_than_the_body_limit_says_so(browser: Browser, tmp_path: Path) -> None:
    env = {"SMRITI_MAX_BODY_BYTES": "4096"}
    with SmritiServer(sqlite_url(tmp_path / "small.sqlite3"), env=env) as small:
        page = browser.new_page()
        open_app(page, small.base_url)
        open_import(page)
        data = chatgpt("x" * 10_000)
        page.locator("#import-file").set_input_files(a_file("conversations.json", data))
        size = f"{len(data) // 1024 + (len(data) % 1024 >= 512)} KB"
        expect(page.locator("#import-errors")).to_have_text(
            f"conversations.json is {size}: larger than this server accepts in one request "
            "(its request body limit, SMRITI_MAX_BODY_BYTES). Import it with `smriti import`, "
            "or ask the server's operator to raise the limit."
        )
        page.close()


@pytest.mark.parametrize("width", [390, 1440])
def test_the_import_dialog_has_no_serious_or_critical_violations(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    context = browser.new_context(
        viewport={"width": width, "height": 844}, color_scheme="light", bypass_csp=True
    )
    page = context.new_page()
    open_app(page, server.base_url)
    open_import(page)
    found = {"empty": summary(blocking(run_axe(page)))}
    title = f"Axe import at {width}"
    page.locator("#import-file").set_input_files(a_file("conversations.json", chatgpt(title)))
    expect(page.locator("#import-result")).to_contain_text("1 new item")
    found["result"] = summary(blocking(run_axe(page)))
    page.locator("#import-file").set_input_files(a_file("broken.json", b"{not json"))
    expect(page.locator("#import-errors")).to_contain_text("INVALID")
    found["errors"] = summary(blocking(run_axe(page)))
    context.close()
    assert found == {"empty": [], "result": [], "errors": []}


DATA = Path(__file__).parents[1] / "data"


def renamed(file: str, key: str, suffix: str) -> bytes:
    """A handmade export of tests/data with each conversation's title made unique."""
    document = json.loads((DATA / file).read_text())
    for conversation in document:
        conversation[key] = f"{conversation[key] or 'Untitled'} {suffix}"
    return json.dumps(document).encode()


@pytest.mark.parametrize("width", [390, 1440])
def test_import_a_claude_and_an_open_webui_export_with_their_branches_said(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 844})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    open_app(page, server.base_url)
    result = page.locator("#import-result")

    # Claude: three conversations; the first had another branch, imported as alternatives.
    at = f"at {width}"
    open_import(page)
    claude = renamed("claude-conversations.json", "name", at)
    page.locator("#import-file").set_input_files(a_file("conversations.json", claude))
    expect(result).to_contain_text("Imported conversations.json: 3 new items.")
    expect(result.locator("li > a")).to_have_text(
        [f"Sourdough starter {at}", f"Haiku about rain {at}", f"Untitled {at}"]
    )
    branches = (
        "With 1 other branch (edited messages or regenerated replies), each an alternative "
        "of its cell."
    )
    expect(result.locator(".import-branches")).to_have_text([branches])

    # Open WebUI: its chat opens with the line last shown, replies by their model.
    owui = json.loads(renamed("openwebui-chat-export.json", "title", at))
    page.locator("#import-file").set_input_files(
        a_file("chat-export-1717300000.json", json.dumps(owui).encode())
    )
    expect(result).to_contain_text("Imported chat-export-1717300000.json: 2 new items.")
    expect(result.locator(".import-branches")).to_have_text([branches])
    result.get_by_role("link", name=f"Tomato blight {at}").click()
    expect(page.locator("#import-dialog")).to_be_hidden()
    expect(page.locator("#session-title")).to_have_text(f"Tomato blight {at}")
    cells = page.locator("turn-cell .cell-body")
    expect(cells).to_have_count(4)
    expect(cells.nth(3)).to_have_text("Copper spray, in dry weather.")
    expect(page.locator("turn-cell .cell-meta").nth(1)).to_contain_text("openwebui/mistral:7b")
    # The regenerated reply (llama's, the one not shown) is the other alternative of cell 2.
    switcher = page.locator("#turn-2").get_by_role("group", name="Alternatives")
    expect(switcher).to_contain_text("1 / 2")
    switcher.get_by_role("button", name="Next alternative").click()
    expect(page.locator("#turn-2 .cell-body")).to_have_text("Probably early blight.")
    expect(cells).to_have_count(2)
    expect(page.locator("#turn-2 .cell-meta")).to_contain_text("openwebui/llama3.1:8b")
    context.close()
    assert errors == []
