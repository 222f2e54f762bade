"""Shared spaces in the browser (accounts mode): the members dialog, what a viewer and
an editor may do, a session shared with the space, bylines; and none of it without
accounts. Users ana, bob, cy and dee; each test makes its own space through the API
as ana and signs the others in in their own browser contexts."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from api.store.database import sqlite_url
from tests.browser.axe import blocking, run_axe, summary
from tests.browser.support import (
    HIT,
    create_space,
    new_session,
    open_app,
    save_checkpoint,
    send,
    session_id,
    warm_up,
)
from tests.support.servers import SmritiServer, add_user

PASSWORD = "shared spaces passphrase 7"
USERS = ("ana", "bob", "cy", "dee")


class Client:
    """One user's signed-in HTTP session (a cookie), for setting things up."""

    def __init__(self, base_url: str, name: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Origin": base_url}, timeout=30)
        signed = self.http.post("/auth/login", json={"name": name, "password": PASSWORD})
        assert signed.status_code == 200, signed.text

    def gql(self, query: str, **variables: Any) -> dict[str, Any]:
        body = self.http.post("/graphql", json={"query": query, "variables": variables}).json()
        assert not body.get("errors"), body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    def close(self) -> None:
        self.http.close()


@pytest.fixture(scope="module")
def server(database: Path) -> Iterator[SmritiServer]:
    url = sqlite_url(database)
    for name in USERS:
        add_user(url, name, PASSWORD)
    with SmritiServer(url) as running:
        ana = Client(running.base_url, "ana")
        # The first model call waits for LiteLLM's import: make it now.
        sid = ana.gql("mutation { createSession(input: {}) { session { id } } }")
        sid = sid["createSession"]["session"]["id"]
        ana.gql(
            'query($s: ID!) { contextPreview(input: {sessionId: $s, content: "hi"}) { mode } }',
            s=sid,
        )
        ana.gql("mutation($s: ID!) { deleteSession(input: {id: $s}) { deletedId } }", s=sid)
        ana.close()
        yield running


@pytest.fixture(scope="module")
def ana(server: SmritiServer) -> Iterator[Client]:
    client = Client(server.base_url, "ana")
    yield client
    client.close()


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    """Browser contexts opened by a test (one per user); no uncaught script error in any."""
    opened: list[BrowserContext] = []
    yield opened
    errors = [str(error) for context in opened for error in getattr(context, "errors", [])]
    for context in opened:
        context.close()
    assert errors == []


def sign_in(
    browser: Browser,
    contexts: list[BrowserContext],
    server: SmritiServer,
    name: str,
    viewport: dict[str, int] | None = None,
    bypass_csp: bool = False,
) -> Page:
    """A new browser context signed in as `name`, the app ready (`bypass_csp`: for axe)."""
    context = browser.new_context(
        viewport=viewport or {"width": 1440, "height": 900}, bypass_csp=bypass_csp
    )
    context.set_default_timeout(10_000)
    context.errors = []  # type: ignore[attr-defined]
    contexts.append(context)
    page = context.new_page()
    page.on("pageerror", lambda error: context.errors.append(error))  # type: ignore[attr-defined]
    page.goto(server.base_url + "/login.html")
    page.fill("#login-name", name)
    page.fill("#login-password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#account-name")).to_have_text(name)
    expect(page.locator("smriti-app[data-ready]")).to_be_attached()
    return page


ADD = """mutation($s: ID!, $u: String!, $r: SpaceRole!) { addSpaceMember(input:
  {spaceId: $s, userName: $u, role: $r}) { member { userName } errors { code } } }"""
MEMBERS = "query($s: ID!) { space(id: $s) { members { userName role } } }"


def shared_space(ana: Client, name: str, members: dict[str, str], checkpoint: str | None = None):  # type: ignore[no-untyped-def]
    """ana's space `name` with `members` ({user: role}) and, when named, a checkpoint
    saved from a session of ana's; (space id, checkpoint's short hash or None)."""
    space = ana.gql(
        "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }", n=name
    )["createSpace"]["space"]["id"]
    for user, role in members.items():
        added = ana.gql(ADD, s=space, u=user, r=role)["addSpaceMember"]
        assert added == {"member": {"userName": user}, "errors": []}
    if checkpoint is None:
        return space, None
    sid = ana.gql(
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "ana plans"}) '
        "{ session { id } } }",
        s=space,
    )["createSession"]["session"]["id"]
    saved = ana.gql(
        "mutation($s: ID!, $t: String!) { createCheckpoint(input: {sessionId: $s, title: $t, "
        'decisions: ["Fly into Sydney"]}) { checkpoint { shortHash } errors { code } } }',
        s=sid,
        t=checkpoint,
    )["createCheckpoint"]
    assert saved["errors"] == []
    return space, saved["checkpoint"]["shortHash"]


def open_space(page: Page, name: str) -> None:
    """Open a space on its own from the sidebar (its name is a link)."""
    toggle = page.locator("#left-toggle")
    if toggle.is_visible():
        toggle.click()
    page.locator("space-list .space-row a.name", has_text=name).click()
    expect(page.locator("session-header h1")).to_have_text(name)


def test_an_owner_adds_changes_and_removes_members(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    space, _ = shared_space(ana, "Team trips", {})
    page = sign_in(browser, contexts, server, "ana", bypass_csp=True)
    open_space(page, "Team trips")
    expect(page.locator("space-access")).to_have_text("You are an owner · only youMembers")
    page.get_by_role("button", name="Members of space Team trips").click()
    dialog = page.locator("#members-dialog")
    expect(dialog.get_by_role("heading")).to_have_text("Members of Team trips")
    names = dialog.locator(".member-name")
    expect(names).to_have_text(["ana (you)"])

    dialog.get_by_label("User name").fill("bob")
    dialog.get_by_label("Role of the new member").select_option("VIEWER")
    dialog.get_by_role("button", name="Add").click()
    expect(names).to_have_text(["ana (you)", "bob"])
    expect(dialog.locator("#members-note")).to_have_text("bob added as viewer.")
    expect(dialog.get_by_label("Role of bob")).to_have_value("VIEWER")
    dialog.get_by_label("Role of bob").select_option("EDITOR")
    expect(dialog.locator("#members-note")).to_have_text("bob is now editor.")
    expect(page.locator("space-access")).to_have_text("You are an owner · 2 membersMembers")
    assert ana.gql(MEMBERS, s=space)["space"]["members"] == [
        {"userName": "ana", "role": "OWNER"},
        {"userName": "bob", "role": "EDITOR"},
    ]
    expect(dialog.get_by_label("Role of bob")).to_have_value("EDITOR")

    error = dialog.locator("#members-error")
    dialog.get_by_label("User name").fill("nobody")
    dialog.get_by_role("button", name="Add").click()
    expect(error).to_have_text("There is no user named “nobody”.")
    dialog.get_by_label("User name").fill("bob")
    dialog.get_by_role("button", name="Add").click()
    expect(error).to_have_text("bob is a member already: change their role in the list.")
    dialog.get_by_role("button", name="Remove ana").click()
    expect(error).to_have_text("ana is the space's last owner: make another member an owner first.")
    dialog.get_by_label("Role of ana").select_option("VIEWER")
    expect(error).to_have_text("ana is the space's last owner: make another member an owner first.")
    expect(dialog.get_by_label("Role of ana")).to_have_value("OWNER")  # as it still is

    dialog.get_by_role("button", name="Remove bob").click()
    expect(names).to_have_text(["ana (you)"])
    expect(dialog.locator("#members-note")).to_have_text("bob removed.")
    expect(error).to_be_hidden()
    assert ana.gql(MEMBERS, s=space)["space"]["members"] == [{"userName": "ana", "role": "OWNER"}]
    violations = run_axe(page)
    assert summary(blocking(violations)) == [], summary(violations)
    dialog.get_by_role("button", name="Close members").click()
    expect(dialog).to_be_hidden()


def test_a_viewer_reads_the_lineage_and_forks_into_a_session_of_their_own(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    _, short = shared_space(ana, "Read me", {"cy": "VIEWER"}, checkpoint="Sydney first")
    page = sign_in(browser, contexts, server, "cy")
    group = page.locator("space-list .space-group", has=page.locator(".name", has_text="Read me"))
    expect(group.locator(".row-actions")).to_have_text("viewer")  # no +, no rename or delete
    open_space(page, "Read me")
    expect(page.locator("#space-view-note")).to_have_text(
        "You are a viewer of this space: open a checkpoint in the lineage to read it, or fork "
        "it into a session of your own (outside the space)."
    )
    expect(page.locator("lineage-graph .pane-head")).to_contain_text("Read me")
    # The members, read-only.
    page.get_by_role("button", name="Members of space Read me").click()
    dialog = page.locator("#members-dialog")
    expect(dialog.locator(".member-name")).to_have_text(["ana", "cy (you)"])
    expect(dialog.locator(".member-role")).to_have_text(["owner", "viewer"])
    expect(dialog.locator("#members-read-only")).to_have_text(
        "You are a viewer here: only an owner changes the members."
    )
    assert dialog.locator("input, select").count() == 0
    assert dialog.get_by_role("button", name=re.compile("^(Add|Remove)")).count() == 0
    dialog.get_by_role("button", name="Close members").click()
    page.get_by_role(
        "button", name=re.compile(f"^{short} Sydney first .*, checkpoint on main")
    ).click()
    details = page.locator("checkpoint-details")
    expect(details.locator("h3")).to_have_text(f"{short} Sydney first")
    expect(details).to_contain_text("Fly into Sydney")
    assert page.get_by_role("button", name="Save checkpoint").count() == 0
    assert page.get_by_role("button", name="Merge into…").count() == 0
    assert details.get_by_label("New branch name").count() == 0
    details.get_by_role("button", name="Fork").click()
    expect(page).to_have_url(re.compile(r"\?session="))
    # A private session of cy's, in no space, with the checkpoint mounted.
    expect(page.locator("context-badge")).to_have_text(f"MOUNTED · {short}")
    expect(page.locator("session-header")).to_contain_text("No space (FRESH)")
    assert page.get_by_role("button", name="Save checkpoint").count() == 0
    no_space = page.locator("space-list .space-group[data-space='']")
    expect(no_space.locator(".session-row")).to_have_count(1)
    send(page, "What do we pack?")
    expect(page.locator("turn-cell.user .cell-body")).to_have_text(["What do we pack?"])


def test_a_viewer_mounts_a_checkpoint_in_a_session_of_their_own(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    _, short = shared_space(ana, "Mount me", {"cy": "VIEWER"}, checkpoint="Ferry plan")
    page = sign_in(browser, contexts, server, "cy")
    new_session(page, None)
    send(page, "My packing list.")
    mine = session_id(page)
    open_space(page, "Mount me")
    page.get_by_role(
        "button", name=re.compile(f"^{short} Ferry plan .*, checkpoint on main")
    ).click()
    details = page.locator("checkpoint-details")
    mount = details.get_by_role("button", name="Mount", exact=True)
    expect(mount).to_be_disabled()
    # Why, in words a keyboard or touch user gets too (no hover tooltip needed).
    why = "Fork it (below), or mount it in a session of yours."
    expect(mount).to_have_accessible_description(why)
    expect(details.locator(".mount-hint")).to_have_text(why)
    target = details.get_by_label("Session to mount it in")
    expect(target.locator(f"option[value='{mine}']")).to_have_count(1)
    target.select_option(mine)
    details.get_by_role("button", name="Mount here").click()
    expect(page).to_have_url(re.compile(rf"\?session={re.escape(mine)}$"))
    expect(page.locator("context-badge")).to_have_text(f"MOUNTED · {short}")
    expect(page.locator("turn-cell.user .cell-body")).to_have_text(["My packing list."])
    send(page, "What did we decide?")
    expect(page.locator("turn-cell.assistant .cell-body").last).to_contain_text(
        "Checkpoints (1): [1] Ferry plan"
    )


def test_an_editor_forks_sends_and_saves_a_checkpoint(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    space, short = shared_space(ana, "Edit me", {"dee": "EDITOR"}, checkpoint="Base plan")
    page = sign_in(browser, contexts, server, "dee")
    open_space(page, "Edit me")
    page.get_by_role(
        "button", name=re.compile(f"^{short} Base plan .*, checkpoint on main")
    ).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("New branch name").fill("dee-line")
    details.get_by_role("button", name="Fork").click()
    expect(page.locator("session-header")).to_contain_text("Branch dee-line")
    send(page, "Add a week in Tasmania.")
    save_checkpoint(page, "Tasmania added", decisions=["Ferry to Hobart"])
    lineage = ana.gql(
        "query($s: ID!) { space(id: $s) { lineage { edges { node { title branchName "
        "author { name viaToken } } } } } }",
        s=space,
    )["space"]["lineage"]["edges"]
    assert [edge["node"] for edge in lineage] == [
        {"title": "Base plan", "branchName": "main", "author": {"name": "ana", "viaToken": None}},
        {
            "title": "Tasmania added",
            "branchName": "dee-line",
            "author": {"name": "dee", "viaToken": None},
        },
    ]
    # Two members: the notebook says who wrote and who saved what.
    expect(page.locator("turn-cell.user .byline")).to_have_text(["by dee"])
    expect(page.locator("checkpoint-cell .byline")).to_have_text(["by ana", "by dee"])


def test_a_shared_session_is_read_only_for_other_members_with_its_authors_name(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    shared_space(ana, "Shared notes", {"bob": "EDITOR"})
    page = sign_in(browser, contexts, server, "ana")
    new_session(page, "Shared notes")
    send(page, "Plan the first week.")
    expect(page.locator("turn-cell.user .byline")).to_have_text(["by ana"])
    sid = session_id(page)

    other = sign_in(browser, contexts, server, "bob")
    group = other.locator(
        "space-list .space-group", has=other.locator(".name", has_text="Shared notes")
    )
    expect(group.locator(".session-row")).to_have_count(0)  # private until shared

    share = page.get_by_label("Shared with the space")
    expect(share).not_to_be_checked()
    share.check()
    expect(page.locator("space-list .session-row.current .tag")).to_have_text("shared")
    assert ana.gql("query($s: ID!) { session(id: $s) { visibility } }", s=sid) == {
        "session": {"visibility": "SPACE"}
    }

    other.reload()
    expect(group.locator(".session-row a")).to_have_text(["Plan the first week · ana"])
    group.locator(".session-row a").click()
    expect(other.locator("#read-only-note")).to_have_text(
        "ana's session, shared with the space: read-only (only ana writes to it)."
    )
    expect(other.locator("turn-cell.user .cell-body")).to_have_text(["Plan the first week."])
    expect(other.locator("turn-cell.user .byline")).to_have_text(["by ana"])
    expect(other.locator("composer-cell")).to_be_hidden()
    assert other.get_by_role("button", name="Save checkpoint").count() == 0
    assert other.get_by_label("Shared with the space").count() == 0
    assert group.get_by_role("button", name=re.compile("^(Rename|Delete) session")).count() == 0

    # A script of ana's writes with an API token: the byline names the token.
    secret = ana.gql(
        'mutation { createApiToken(input: {name: "notes-bot"}) { secret errors { code } } }'
    )["createApiToken"]["secret"]
    sent = httpx.post(
        server.graphql_url,
        json={
            "query": "mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "
            '"Add the second week."}) { errors { code } } }',
            "variables": {"s": sid},
        },
        headers={"Authorization": f"Bearer {secret}"},
        timeout=30,
    ).json()
    assert sent["data"] == {"sendMessage": {"errors": []}}
    other.reload()
    expect(other.locator("turn-cell.user .byline")).to_have_text(["by ana", "by ana via notes-bot"])

    # A long title gives way in the list; the author's name stays whole and in view.
    long_title = "Plan the first week along the Great Ocean Road, then the Grampians"
    renamed = ana.gql(
        "mutation($s: ID!, $t: String!) { updateSession(input: {id: $s, title: $t}) "
        "{ errors { code } } }",
        s=sid,
        t=long_title,
    )
    assert renamed == {"updateSession": {"errors": []}}
    other.reload()
    link = group.locator(".session-row a")
    expect(link).to_have_text([f"{long_title} · ana"])
    # Measured in one step in the page: the list is drawn again as the reloaded page
    # settles, and two separate measurements could straddle that (CI, under load, got
    # a box for an element that had just been replaced).
    measure = (
        "a => { const name = a.querySelector('.author');"
        " const row = a.getBoundingClientRect(), box = name.getBoundingClientRect();"
        " return {shown: box.width > 0 && a.isConnected, right: box.right,"
        " rowRight: row.right, whole: name.scrollWidth <= name.clientWidth}; }"
    )
    layout = link.evaluate(measure)
    deadline = time.monotonic() + 5
    while not layout["shown"] and time.monotonic() < deadline:
        time.sleep(0.05)
        layout = link.evaluate(measure)
    assert layout["shown"], layout
    assert layout["right"] <= layout["rowRight"] + 0.5, layout
    assert layout["whole"], layout


def test_the_members_dialog_works_on_a_phone(
    browser: Browser, contexts: list[BrowserContext], server: SmritiServer, ana: Client
) -> None:
    shared_space(ana, "Phone space", {"cy": "VIEWER"})
    page = sign_in(browser, contexts, server, "ana", viewport={"width": 390, "height": 844})
    open_space(page, "Phone space")
    page.locator("#right-toggle").click()  # the lineage pane is a drawer at 390 px
    page.get_by_role("button", name="Members of space Phone space").click()
    dialog = page.locator("#members-dialog")
    for control in ("User name", "Role of the new member", "Role of cy"):
        expect(dialog.get_by_label(control)).to_be_visible()
    expect(dialog.get_by_role("button", name="Add")).to_be_visible()
    assert page.evaluate(HIT, "#member-add"), "Add is covered"
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    dialog.get_by_label("User name").fill("dee")
    page.click("#member-add")
    expect(dialog.locator(".member-name")).to_have_text(["ana (you)", "cy", "dee"])


def test_without_accounts_a_space_opens_with_no_members_or_sharing(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    database = tmp_path_factory.mktemp("local") / "smriti.sqlite3"
    with SmritiServer(sqlite_url(database)) as local:
        warm_up(local.base_url)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        open_app(page, local.base_url)
        create_space(page, "Solo")
        new_session(page, "Solo")
        expect(page.locator("session-header")).to_contain_text("Space Solo")
        assert page.get_by_label("Shared with the space").count() == 0
        send(page, "Hello.")
        assert page.locator(".byline").count() == 0
        open_space(page, "Solo")
        expect(page).to_have_url(re.compile(r"\?space="))
        expect(page.locator("lineage-graph .pane-head")).to_contain_text("Solo")
        expect(page.locator("space-access")).to_be_hidden()
        assert page.locator("#members-button").count() == 0
        assert page.get_by_role("button", name=re.compile("^Members")).count() == 0
        context.close()
        assert errors == []
