"""Helpers for the browser tests: Chromium, a GraphQL shortcut, seeding, UI steps."""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.servers import SmritiServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
VIEWPORT = {"width": 1440, "height": 900}


@contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Debian Chromium (the Playwright download is not used)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def gql(base_url: str, query: str, **variables: Any) -> dict[str, Any]:
    """POST a GraphQL document; the ``data`` (top-level errors fail the test)."""
    body = httpx.post(
        f"{base_url}/graphql", json={"query": query, "variables": variables}, timeout=30
    ).json()
    assert not body.get("errors"), body["errors"]
    data: dict[str, Any] = body["data"]
    return data


def warm_up(base_url: str, model: str | None = None) -> None:
    """Load what the first message to ``model`` would, and return once it is loaded,
    leaving nothing behind.

    For a LiteLLM model that is LiteLLM, which test servers do not preload: its
    import took 4-7 s on a busy machine and 15-20 s at load 15, more than a test
    waits for a reply. A context preview only starts that import (the server's
    estimates never wait for it), so a message is sent: its reply comes once the
    import is done. The session has a title, so no title is asked for after it."""
    created = gql(
        base_url, 'mutation { createSession(input: {title: "warm-up"}) { session { id } } }'
    )
    sid = created["createSession"]["session"]["id"]
    if model is None:  # offline: nothing to load but the server's own code
        gql(
            base_url,
            'query($s: ID!) { contextPreview(input: {sessionId: $s, content: "hi"}) { mode } }',
            s=sid,
        )
    else:
        sent = httpx.post(
            f"{base_url}/graphql",
            json={
                "query": "mutation($s: ID!, $m: String) { sendMessage(input: {sessionId: $s, "
                'content: "hi", model: $m}) { assistantTurn { model } errors { code } } }',
                "variables": {"s": sid, "m": model},
            },
            # Generous: the import runs on a machine other tests are loading too.
            timeout=180,
        ).json()
        assert sent["data"]["sendMessage"]["errors"] == [], sent
    gql(base_url, "mutation($s: ID!) { deleteSession(input: {id: $s}) { deletedId } }", s=sid)


def database_pk(global_id: str) -> int:
    """The row id inside a Relay global id ("Session:12" → 12)."""
    return int(base64.b64decode(global_id).decode().split(":", 1)[1])


def seed_turns(database: Path, session_id: str, count: int) -> None:
    """Bulk-insert ``count`` alternating user/assistant turns into a session, as the
    app writes them (1..count, then last_sequence_number = count)."""
    pk = database_pk(session_id)
    start = datetime.now(UTC) - timedelta(days=1)
    rows = []
    for seq in range(1, count + 1):
        user = seq % 2 == 1
        text = (
            f"Question {seq}: how should we pace day {seq // 2 + 1} of the trip?"
            if user
            else f"Answer {seq}: keep **day {seq // 2}** light.\n\n- morning walk\n- museum"
        )
        rows.append(
            (
                seq,
                "USER" if user else "ASSISTANT",
                text,
                "offline",
                "echo",
                len(text) // 4,
                0,
                None if user else seq - 1,
                str(start + timedelta(milliseconds=seq)),
                pk,
            )
        )
    with sqlite3.connect(database) as db:
        db.executemany(
            "INSERT INTO turn (sequence_number, role, content, provider, model, token_count, "
            "interrupted, reply_to_sequence, created_at, session_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        db.execute(
            "UPDATE session SET last_sequence_number = ?, title = ? WHERE id = ?",
            (count, f"Long trip ({count} turns)", pk),
        )


# In-page: is the element at the centre of `selector` that element (or inside it)?
HIT = """(selector) => {
  const el = document.querySelector(selector);
  const box = el.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  return Boolean(hit) && (hit === el || el.contains(hit));
}"""
SIDEWAYS = "document.documentElement.scrollWidth - window.innerWidth"


# --- UI steps ----------------------------------------------------------------


def open_app(page: Page, base_url: str, path: str = "/") -> None:
    page.goto(base_url + path)
    expect(page.locator("smriti-app[data-ready]")).to_be_attached()


def create_space(page: Page, name: str) -> None:
    page.locator("space-list").get_by_role("button", name="New space").click()
    page.get_by_label("New space name").fill(name)
    page.get_by_label("New space name").press("Enter")
    expect(page.locator(".space-row .name", has_text=name)).to_be_visible()


def new_session(page: Page, space: str | None) -> None:
    label = f"New session in space {space}" if space else "New session without a space"
    before = page.url
    page.get_by_role("button", name=label, exact=True).click()
    expect(page).not_to_have_url(before)
    expect(page.get_by_label("Message", exact=True)).to_be_focused()


def session_id(page: Page) -> str:
    """The open session's global id, from the URL the app wrote (`?session=<id>`, the id
    percent-encoded: an id with base64 padding ends in %3D)."""
    return parse_qs(urlsplit(page.url).query)["session"][0]


def send(page: Page, text: str) -> None:
    """Type a message and send it with Shift+Enter; wait for the reply cell."""
    box = page.get_by_label("Message", exact=True)
    replies = page.locator("turn-cell.assistant").count()
    box.fill(text)
    box.press("Shift+Enter")
    expect(page.locator("turn-cell.assistant")).to_have_count(replies + 1)


def badge(page: Page) -> str:
    return page.locator("context-badge").inner_text()


def save_checkpoint(
    page: Page,
    title: str,
    decisions: list[str] = (),  # type: ignore[assignment]
    drop: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Save a checkpoint from the form: the parent's decisions are carried forward;
    ``drop`` removes some of them, ``decisions`` adds those not already there."""
    page.get_by_role("button", name="Save checkpoint").first.click()
    form = page.locator("checkpoint-form")
    form.get_by_label("Title").fill(title)
    items = form.locator("list-editor[label=Decisions] textarea")
    for item in drop:
        index = [field.input_value() for field in items.all()].index(item)
        form.get_by_role("button", name=f"Remove Decisions item {index + 1}").click()
    for item in decisions:
        if item in [field.input_value() for field in items.all()]:
            continue
        form.get_by_role("button", name="Add decisions item").click()
        items.last.fill(item)
    count = page.locator("checkpoint-cell").count()
    form.get_by_role("button", name="Save checkpoint").click()
    expect(form).to_be_hidden()
    expect(page.locator("checkpoint-cell")).to_have_count(count + 1)


# In-page: scroll the notebook to its top until turn 1 is loaded; milliseconds taken.
SCROLL_TO_TOP = """async () => {
  const scroller = document.querySelector(".centre");
  const started = performance.now();
  while (!document.getElementById("turn-1")) {
    scroller.scrollTop = 0;
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  scroller.scrollTop = 0;
  return performance.now() - started;
}"""

# In-page: resolves with performance.now() once a turn cell has been painted.
FIRST_CELL_PAINTED = """() => new Promise((resolve) => {
  const check = () => {
    const cell = document.querySelector("turn-cell");
    if (cell && cell.getBoundingClientRect().height > 0) {
      requestAnimationFrame(() => resolve(performance.now()));
    } else {
      requestAnimationFrame(check);
    }
  };
  check();
})"""


def long_session(base_url: str, database: Path, count: int) -> str:
    """A session in no space with ``count`` seeded turns; its id."""
    created = gql(base_url, 'mutation { createSession(input: {title: "long"}) { session { id } } }')
    sid: str = created["createSession"]["session"]["id"]
    seed_turns(database, sid, count)
    return sid


# --- Lineages made through the API ---------------------------------------------

CREATE_CHECKPOINT = """mutation($input: CreateCheckpointInput!) { createCheckpoint(input: $input) {
  checkpoint { id shortHash } errors { message } } }"""


def checkpoint_of(base_url: str, session: str, title: str, decisions: list[str]) -> dict[str, Any]:
    """A checkpoint of ``session`` with a title and decisions: its id and short hash."""
    data = gql(
        base_url,
        CREATE_CHECKPOINT,
        input={"sessionId": session, "title": title, "decisions": decisions},
    )
    saved: dict[str, Any] = data["createCheckpoint"]["checkpoint"]
    return saved


def lineage_with_a_conflict(base_url: str) -> dict[str, Any]:
    """main: Base → M1 drops "Use SQLite"; alt: Base → A1 respells it (a conflict)."""
    space = gql(base_url, 'mutation { createSpace(input: {name: "Merges"}) { space { id } } }')
    space_id = space["createSpace"]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "main"}) { session { id } } }',
        s=space_id,
    )["createSession"]["session"]["id"]

    def save(session: str, title: str, decisions: list[str]) -> dict[str, Any]:
        return checkpoint_of(base_url, session, title, decisions)

    base = save(main, "Base", ["Use Postgres", "Use SQLite"])
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base["id"],
    )["forkSession"]["session"]["id"]
    m1 = save(main, "M1", ["Use Postgres", "Add a cache"])
    a1 = save(alt, "A1", ["Use Postgres", "use SQLite!"])
    return {"space": space_id, "main": main, "m1": m1, "a1": a1}


def open_lineage(page: Page) -> None:
    """Open the lineage drawer when the pane is one (below 900 px)."""
    toggle = page.locator("#right-toggle")
    if toggle.is_visible():
        toggle.click()
    expect(page.locator("lineage-graph svg")).to_be_visible()


def travel_lineage(base_url: str) -> dict[str, Any]:
    """Base on main; main adds "Rent a campervan for the coast", rail adds "Do not rent
    a campervan" (a contradiction the offline heuristic flags); sea is forked from Base
    and has saved nothing."""
    space_id = gql(base_url, 'mutation { createSpace(input: {name: "Trip"}) { space { id } } }')[
        "createSpace"
    ]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "m"}) { session { id } } }',
        s=space_id,
    )["createSession"]["session"]["id"]

    def save(session: str, title: str, decisions: list[str]) -> dict[str, Any]:
        return checkpoint_of(base_url, session, title, decisions)

    def fork(checkpoint_id: str, branch: str) -> str:
        forked = gql(
            base_url,
            """mutation($c: ID!, $b: String!) { forkSession(input: {checkpointId: $c,
               branchName: $b}) { session { id } } }""",
            c=checkpoint_id,
            b=branch,
        )
        session_id: str = forked["forkSession"]["session"]["id"]
        return session_id

    base = save(main, "Base", ["Go north"])
    rail = fork(base["id"], "rail")
    sea = fork(base["id"], "sea")
    save(main, "M1", ["Go north", "Rent a campervan for the coast"])
    r1 = save(rail, "R1", ["Go north", "Do not rent a campervan"])
    return {"space": space_id, "main": main, "rail": rail, "sea": sea, "base": base, "r1": r1}


TURNS = """query($s: ID!) { session(id: $s) { turns(first: 50) { edges { node {
  sequenceNumber role content interrupted replyToSequence finishReason continuesSequence
} } } } }"""


def saved_turns(server: SmritiServer, sid: str) -> list[tuple[str, str, bool]]:
    edges = gql(server.base_url, TURNS, s=sid)["session"]["turns"]["edges"]
    return [(e["node"]["role"], e["node"]["content"], e["node"]["interrupted"]) for e in edges]


def start(page: Page, server: SmritiServer, model: str = "lab/my-model") -> str:
    open_app(page, server.base_url)
    new_session(page, None)
    page.get_by_label("Model", exact=True).select_option(model)
    return session_id(page)


def type_and_send(page: Page, text: str) -> None:
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Shift+Enter")
