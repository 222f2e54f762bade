"""Merging from the lineage details: review, resolve a conflict, save; the graph draws it."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.support import gql, open_app
from tests.support.servers import SmritiServer

CREATE = """mutation($input: CreateCheckpointInput!) { createCheckpoint(input: $input) {
  checkpoint { id shortHash } errors { message } } }"""


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
        data = gql(
            base_url, CREATE, input={"sessionId": session, "title": title, "decisions": decisions}
        )
        saved: dict[str, Any] = data["createCheckpoint"]["checkpoint"]
        return saved

    base = save(main, "Base", ["Use Postgres", "Use SQLite"])
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base["id"],
    )["forkSession"]["session"]["id"]
    save(main, "M1", ["Use Postgres", "Add a cache"])
    a1 = save(alt, "A1", ["Use Postgres", "use SQLite!"])
    return {"main": main, "a1": a1}


def test_merge_a_branch_resolving_a_conflict(page: Page, server: SmritiServer) -> None:
    lab = lineage_with_a_conflict(server.base_url)
    open_app(page, server.base_url, f"/?session={lab['main']}")
    page.get_by_role("button", name=re.compile(f"^Checkpoint {lab['a1']['shortHash']} A1")).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Common ancestor:")
    expect(dialog).to_contain_text("1 conflict(s)")
    decisions = dialog.locator("section[data-field=decisions] li")
    expect(decisions).to_have_text(
        ["Use Postgres kept", "Add a cache ours", "use SQLite! conflict: removed by ours"]
    )
    dialog.get_by_label("Keep “use SQLite!”").uncheck()
    dialog.get_by_label("Merge title").fill("Merged alt")
    dialog.get_by_role("button", name="Save merge").click()
    expect(dialog).to_be_hidden()
    details = page.locator("checkpoint-details")
    expect(details).to_contain_text("Merged alt")
    expect(details).to_contain_text(f"merged {lab['a1']['shortHash']}")
    expect(details.locator("li")).to_have_text(["Use Postgres", "Add a cache"])
    graph = page.locator("lineage-graph")
    expect(graph.locator("path.merge-edge")).to_have_count(1)
    expect(graph.locator("path.merge-edge")).to_have_attribute("data-from", lab["a1"]["id"])


def test_a_fast_forward_moves_the_branch_tag(page: Page, server: SmritiServer) -> None:
    base_url = server.base_url
    space = gql(base_url, 'mutation { createSpace(input: {name: "FF"}) { space { id } } }')
    space_id = space["createSpace"]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "m"}) { session { id } } }',
        s=space_id,
    )["createSession"]["session"]["id"]
    base = gql(base_url, CREATE, input={"sessionId": main, "title": "Base"})
    base_id = base["createCheckpoint"]["checkpoint"]["id"]
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base_id,
    )["forkSession"]["session"]["id"]
    a1 = gql(base_url, CREATE, input={"sessionId": alt, "title": "A1"})
    short = a1["createCheckpoint"]["checkpoint"]["shortHash"]
    open_app(page, base_url, f"/?session={main}")
    page.get_by_role("button", name=re.compile(f"^Checkpoint {short} A1")).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_contain_text("Fast-forward: main moves to this checkpoint")
    dialog.get_by_role("button", name="Fast-forward").click()
    expect(dialog).to_be_hidden()
    node = page.locator("lineage-graph g.node", has_text="A1")
    expect(node.locator(".head-tag")).to_have_text(["alt", "main"])
