"""Merging from the lineage: a checkpoint's details or a branch, the review with its
conflicts, a fast-forward; the graph draws the merge."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.support import (
    CREATE_CHECKPOINT,
    VIEWPORT,
    gql,
    lineage_with_a_conflict,
    open_app,
    open_lineage,
    travel_lineage,
)
from tests.support.servers import SmritiServer


def test_merge_a_branch_resolving_a_conflict(page: Page, server: SmritiServer) -> None:
    lab = lineage_with_a_conflict(server.base_url)
    open_app(page, server.base_url, f"/?session={lab['main']}")
    page.get_by_role("button", name=re.compile(f"^{lab['a1']['shortHash']} A1")).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Common ancestor:")
    expect(dialog).to_contain_text("1 conflict(s)")
    decisions = dialog.locator("section[data-field=decisions] li")
    expect(decisions).to_have_count(3)
    expect(decisions.nth(0)).to_have_text("Use Postgres kept")
    expect(decisions.nth(1)).to_have_text("Add a cache from main")
    # The conflict starts undecided, in branch names; Save waits for a decision.
    expect(decisions.nth(2)).to_contain_text("conflict: removed on main, edited on alt")
    drop = dialog.get_by_label("Drop “Use SQLite”")
    keep = dialog.get_by_label("Keep alt's “use SQLite!”")
    expect(drop).not_to_be_checked()
    expect(keep).not_to_be_checked()
    save = dialog.get_by_role("button", name="Save merge")
    expect(save).to_be_disabled()
    expect(dialog.locator(".merge-note")).to_contain_text("1 left to decide.")
    drop.check()
    expect(dialog.locator(".merge-note")).to_contain_text("All decided.")
    dialog.get_by_label("Merge title").fill("Merged alt")
    save.click()
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
    base = gql(base_url, CREATE_CHECKPOINT, input={"sessionId": main, "title": "Base"})
    base_id = base["createCheckpoint"]["checkpoint"]["id"]
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base_id,
    )["forkSession"]["session"]["id"]
    a1 = gql(base_url, CREATE_CHECKPOINT, input={"sessionId": alt, "title": "A1"})
    short = a1["createCheckpoint"]["checkpoint"]["shortHash"]
    open_app(page, base_url, f"/?session={main}")
    page.get_by_role("button", name=re.compile(f"^{short} A1")).click()
    details = page.locator("checkpoint-details")
    details.get_by_label("Merge into branch").select_option("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_contain_text("Fast-forward: main moves to this checkpoint")
    dialog.get_by_role("button", name="Fast-forward").click()
    expect(dialog).to_be_hidden()
    node = page.locator("lineage-graph g.node", has_text="A1")
    expect(node.locator(".head-tag")).to_have_text(["alt", "main"])


BRANCHES = """query($s: ID!) { space(id: $s) {
  branches { name head { id title objective summary branchName decisions tasks openQuestions
    entities authorAgent sourceSession { id } parent { id } mergeParent { id } } }
  lineage(first: 100) { edges { node { id } } } } }"""
WIDTHS = [390, 1024, 1440]


def heads(base_url: str, space_id: str) -> tuple[dict[str, dict[str, Any]], int]:
    """Each branch's head (its fields as the API gives them), and how many checkpoints."""
    space = gql(base_url, BRANCHES, s=space_id)["space"]
    found = {branch["name"]: branch["head"] for branch in space["branches"]}
    return found, len(space["lineage"]["edges"])


def sideways(page: Page) -> int:
    scrolled: int = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    return scrolled


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def test_merge_a_branch_from_the_branch_list_keeping_a_conflict(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    lab = lineage_with_a_conflict(server.base_url)
    a1 = lab["a1"]
    context = browser.new_context(viewport={"width": width, "height": VIEWPORT["height"]})
    page = context.new_page()
    open_app(page, server.base_url, f"/?session={lab['main']}")
    open_lineage(page)
    graph = page.locator("lineage-graph")
    branch = graph.get_by_role("button", name="Branch alt", exact=True)
    expect(branch).to_have_attribute("aria-expanded", "false")
    branch.click()
    expect(branch).to_have_attribute("aria-expanded", "true")
    panel = graph.get_by_role("group", name="Branch alt")
    expect(panel).to_contain_text(f"alt · head {a1['shortHash']} A1")
    expect(panel.get_by_label("Merge branch alt into").locator("option")).to_have_text(["main"])
    panel.get_by_role("button", name="Merge into…").click()

    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"from branch alt (head {a1['shortHash']} A1)")
    expect(dialog).to_contain_text(
        "1 conflict(s): for each, keep one branch's text or drop it. 1 left to decide."
    )
    rows = dialog.locator("section[data-field=decisions] li")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_have_text("Add a cache from main")
    expect(rows.nth(2)).to_contain_text("conflict: removed on main, edited on alt")
    keep = dialog.get_by_label("Keep alt's “use SQLite!”")
    expect(keep).not_to_be_checked()
    expect(dialog.get_by_role("button", name="Save merge")).to_be_disabled()
    keep.check()
    dialog.get_by_label("Merge title").fill("Alt merged into main")
    dialog.get_by_label("Merge objective").fill("One database plan")
    dialog.get_by_label("Merge summary").fill("Postgres first; SQLite kept for tests.")
    assert sideways(page) == 0
    dialog.get_by_role("button", name="Save merge").click()
    expect(dialog).to_be_hidden()

    found, count = heads(server.base_url, lab["space"])
    merged = found["main"]
    assert count == 4  # Base, M1, A1 and the merge
    assert {key: value for key, value in merged.items() if key != "id"} == {
        "title": "Alt merged into main",
        "objective": "One database plan",
        "summary": "Postgres first; SQLite kept for tests.",
        "branchName": "main",
        "decisions": ["Use Postgres", "Add a cache", "use SQLite!"],
        "tasks": [],
        "openQuestions": [],
        "entities": [],
        "authorAgent": "user",
        "sourceSession": None,
        "parent": {"id": lab["m1"]["id"]},
        "mergeParent": {"id": a1["id"]},
    }
    assert found["alt"]["id"] == a1["id"]  # the branch merged in stays where it was
    node = graph.locator(f'g.node[data-id="{merged["id"]}"]')
    expect(node).to_have_class(re.compile(r"\bmerge\b"))
    expect(node.locator("circle.merge-ring")).to_have_count(1)
    expect(node).to_have_attribute(
        "aria-label",
        re.compile(
            f"^[0-9a-f]{{7}} Alt merged into main main, checkpoint on main, merge of alt "
            f"\\({a1['shortHash']}\\) into main \\(head\\)$"
        ),
    )
    details = page.locator("checkpoint-details")
    expect(details).to_contain_text(
        f"parent {lab['m1']['shortHash']} · merged {a1['shortHash']} from alt"
    )
    assert sideways(page) == 0
    context.close()


def test_a_branch_fast_forward_is_said_and_moves_the_head(page: Page, server: SmritiServer) -> None:
    base_url = server.base_url
    space_id = gql(
        base_url, 'mutation { createSpace(input: {name: "FF branch"}) { space { id } } }'
    )["createSpace"]["space"]["id"]
    main = gql(
        base_url,
        'mutation($s: ID!) { createSession(input: {spaceId: $s, title: "m"}) { session { id } } }',
        s=space_id,
    )["createSession"]["session"]["id"]
    base = gql(base_url, CREATE_CHECKPOINT, input={"sessionId": main, "title": "Base"})[
        "createCheckpoint"
    ]
    alt = gql(
        base_url,
        """mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "alt"}) {
           session { id } } }""",
        c=base["checkpoint"]["id"],
    )["forkSession"]["session"]["id"]
    a1 = gql(
        base_url, CREATE_CHECKPOINT, input={"sessionId": alt, "title": "A1", "decisions": ["Go"]}
    )
    a1_id = a1["createCheckpoint"]["checkpoint"]["id"]
    a1_short = a1["createCheckpoint"]["checkpoint"]["shortHash"]

    open_app(page, base_url, f"/?session={main}")
    graph = page.locator("lineage-graph")
    graph.get_by_role("button", name="Branch alt", exact=True).click()
    graph.get_by_role("group", name="Branch alt").get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    note = dialog.locator(".merge-note")
    expect(note).to_have_text("Fast-forward: main moves to alt's head; nothing new is saved.")
    expect(note).to_have_class(re.compile(r"\bfast-forward\b"))
    expect(dialog.locator(".merge-fields")).to_have_count(0)
    expect(dialog.get_by_label("Merge title")).to_have_count(0)
    dialog.get_by_role("button", name="Fast-forward").click()
    expect(dialog).to_be_hidden()

    found, count = heads(base_url, space_id)
    assert count == 2  # nothing new saved
    assert found["main"]["id"] == a1_id
    assert found["alt"]["id"] == a1_id
    expect(graph.locator("g.node", has_text="A1").locator(".head-tag")).to_have_text(
        ["alt", "main"]
    )
    expect(graph.locator("g.node.merge")).to_have_count(0)
    # Both branches are at A1 now: neither can take the other.
    graph.get_by_role("button", name="Branch main", exact=True).click()
    expect(graph.get_by_role("group", name="Branch main")).to_have_text(
        f"main · head {a1_short} A1 (on alt)Every other branch contains this checkpoint already."
    )


def test_a_contradiction_is_a_warning_that_can_be_dismissed(
    page: Page, server: SmritiServer
) -> None:
    lab = travel_lineage(server.base_url)
    open_app(page, server.base_url, f"/?session={lab['main']}")
    page.get_by_role("button", name=re.compile(f"^{lab['r1']['shortHash']} R1")).click()
    details = page.locator("checkpoint-details")
    expect(details.get_by_label("Merge into branch")).to_have_value("main")
    details.get_by_role("button", name="Merge into…").click()
    dialog = page.get_by_role("dialog", name="Merge checkpoints")
    warnings = dialog.get_by_role("note", name="Merge warnings")
    expect(warnings.locator("li")).to_have_text(
        [
            "Decisions: possible contradiction main's “Rent a campervan for the coast” and "
            'rail\'s “Do not rent a campervan”. Both mention "campervan", and only one of them '
            "says it negatively. (a word-level guess) Dismiss"
        ]
    )
    # Never blocking: no conflicts, so Save merge is on with the warning shown.
    save = dialog.get_by_role("button", name="Save merge")
    expect(save).to_be_enabled()
    warnings.get_by_role(
        "button",
        name="Dismiss the warning on “Rent a campervan for the coast” and “Do not rent a campervan”",
    ).click()
    expect(dialog.get_by_role("note", name="Merge warnings")).to_have_count(0)
    # Dismissing only hides it: both decisions are still merged.
    expect(dialog.locator("section[data-field=decisions] li")).to_have_text(
        [
            "Go north kept",
            "Rent a campervan for the coast from main",
            "Do not rent a campervan from rail",
        ]
    )
    expect(save).to_be_enabled()
    dialog.get_by_label("Merge title").fill("Trip merged")
    save.click()
    expect(dialog).to_be_hidden()
    expect(page.locator("checkpoint-details li")).to_have_text(
        ["Go north", "Rent a campervan for the coast", "Do not rent a campervan"]
    )


def test_merge_into_offers_only_branches_without_it_and_the_users_first(
    page: Page, server: SmritiServer
) -> None:
    lab = travel_lineage(server.base_url)
    open_app(page, server.base_url, f"/?session={lab['sea']}")  # the user is on sea
    page.get_by_role("button", name=re.compile(f"^{lab['r1']['shortHash']} R1")).click()
    details = page.locator("checkpoint-details")
    into = details.get_by_label("Merge into branch")
    expect(into.locator("option")).to_have_text(["sea", "main"])
    expect(into).to_have_value("sea")
    # Base is in every branch's history: nothing to merge anywhere.
    page.get_by_role("button", name=re.compile(f"^{lab['base']['shortHash']} Base")).click()
    expect(details).to_contain_text("Base")
    expect(details.get_by_role("button", name="Merge into…")).to_have_count(0)
    # A branch's panel: the same rule, the user's branch first.
    graph = page.locator("lineage-graph")
    graph.get_by_role("button", name="Branch rail", exact=True).click()
    panel = graph.get_by_role("group", name="Branch rail")
    expect(panel.get_by_label("Merge branch rail into")).to_have_value("sea")
    expect(panel.get_by_label("Merge branch rail into").locator("option")).to_have_text(
        ["sea", "main"]
    )
    graph.get_by_role("button", name="Branch sea", exact=True).click()
    expect(graph.get_by_role("group", name="Branch sea")).to_contain_text(
        "Every other branch contains this checkpoint already."
    )
