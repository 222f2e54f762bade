"""The lineage graph: every branch drawn, parentage unambiguous, readable at 200 checkpoints."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.support import gql, open_app
from tests.support.servers import SmritiServer

SPACE = "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }"
SESSION = "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }"
CHECKPOINT = """mutation($s: ID!, $t: String!) { createCheckpoint(input: {sessionId: $s, title: $t}) {
  checkpoint { id } errors { message } } }"""
FORK = """mutation($c: ID!, $b: String!) { forkSession(input: {checkpointId: $c, branchName: $b}) {
  session { id } errors { message } } }"""

# In-page: every edge sampled along its length; the nodes (other than its two ends)
# any edge comes within `margin` px of, and nodes drawn on the same spot.
CROSSINGS = """(margin) => {
  const svg = document.querySelector("lineage-graph svg");
  const centres = [...svg.querySelectorAll("g.node, g.tip")].map((g) => {
    const c = g.querySelector("circle");
    return { id: g.dataset.id ?? `tip:${g.dataset.branch}`, x: +c.getAttribute("cx"), y: +c.getAttribute("cy") };
  });
  const spots = new Set(centres.map((c) => `${c.x},${c.y}`));
  const crossings = [];
  for (const path of svg.querySelectorAll("path.edge")) {
    const ends = [path.dataset.from, path.dataset.to];
    const length = path.getTotalLength();
    for (let d = 0; d <= length; d += 2) {
      const p = path.getPointAtLength(d);
      for (const c of centres) {
        if (!ends.includes(c.id) && Math.hypot(p.x - c.x, p.y - c.y) < margin) {
          crossings.push(`${ends.join("->")} passes ${c.id}`);
        }
      }
    }
  }
  return { crossings: [...new Set(crossings)], overlapping: centres.length - spots.size };
}"""


def checkpoint(base_url: str, session: str, title: str) -> str:
    payload = gql(base_url, CHECKPOINT, s=session, t=title)["createCheckpoint"]
    assert payload["errors"] == []
    cid: str = payload["checkpoint"]["id"]
    return cid


def fork(base_url: str, checkpoint_id: str, branch: str) -> str:
    payload = gql(base_url, FORK, c=checkpoint_id, b=branch)["forkSession"]
    assert payload["errors"] == []
    sid: str = payload["session"]["id"]
    return sid


def open_graph(page: Page, base_url: str, session: str) -> None:
    open_app(page, base_url, f"/?session={session}")
    expect(page.locator("lineage-graph svg")).to_be_visible()


def test_a_branch_without_checkpoints_is_drawn_and_a_fork_edge_passes_no_other_node(
    page: Page, server: SmritiServer
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Trips graph")["createSpace"]["space"]["id"]
    main = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    australia = checkpoint(base, main, "Australia plan")
    checkpoint(base, main, "New Zealand extension")
    japan = fork(base, australia, "japan")
    checkpoint(base, japan, "Japan instead")
    fork(base, australia, "undecided")  # no checkpoint of its own yet

    open_graph(page, base, main)
    graph = page.locator("lineage-graph")
    expect(graph.locator(".legend")).to_have_text("mainjapanundecided")
    expect(graph.locator("g.tip[data-branch=undecided]")).to_contain_text(
        "undecidedno checkpoint yet"
    )
    expect(graph.locator("g.node")).to_have_count(3)
    expect(graph.locator("path.edge")).to_have_count(3)
    found = page.evaluate(CROSSINGS, 8)
    assert found == {"crossings": [], "overlapping": 0}


def test_two_hundred_checkpoints_on_ten_branches_stay_readable(
    page: Page, server: SmritiServer
) -> None:
    base = server.base_url
    space = gql(base, SPACE, n="Big lineage")["createSpace"]["space"]["id"]
    main = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    made = 0
    forks: list[str] = []
    last_main = ""
    for step in range(56):
        last_main = checkpoint(base, main, f"Main step {step}")
        made += 1
        if step % 7 == 3:  # a branch now and then, growing alongside main
            forks.append(fork(base, last_main, f"idea-{len(forks)}"))
        for branch in forks[-3:]:
            if made < 200:
                checkpoint(base, branch, f"Idea {made}")
                made += 1
    while made < 200:
        last_main = checkpoint(base, main, f"Main tail {made}")
        made += 1
    fork(base, last_main, "empty-idea")

    open_graph(page, base, main)
    graph = page.locator("lineage-graph")
    expect(graph.locator("g.node")).to_have_count(200)
    legend = graph.locator(".lane-key").all_inner_texts()
    assert legend == ["main", *[f"idea-{n}" for n in range(len(forks))], "empty-idea"]
    expect(graph.locator("g.tip")).to_have_count(1)
    assert page.evaluate(CROSSINGS, 7) == {"crossings": [], "overlapping": 0}
    # Narrow enough to leave room for the labels: lanes are reused once a branch ends.
    widths = page.evaluate(
        """() => ({ pane: document.querySelector('#right-pane').clientWidth,
           graph: Math.ceil(document.querySelector('lineage-graph svg').getBBox().width),
           lanes: new Set([...document.querySelectorAll('lineage-graph g.node circle')]
             .map((c) => c.getAttribute('cx'))).size })"""
    )
    assert widths["lanes"] <= 4, widths
    assert widths["graph"] <= widths["pane"], widths


MERGE = """mutation($s: ID!, $f: ID!, $t: String!) { mergeCheckpoints(input: {spaceId: $s,
  into: "main", from: $f, title: $t}) { checkpoint { id } fastForward errors { message } } }"""
# In-page: each merge edge's path, lane and ends; each node's centre and lane (by x).
MERGE_GEOMETRY = """() => {
  const svg = document.querySelector("lineage-graph svg");
  const edges = [...svg.querySelectorAll("path.merge-edge")].map((p) => ({
    from: p.dataset.from, to: p.dataset.to, lane: +p.dataset.lane, d: p.getAttribute("d") }));
  const nodes = Object.fromEntries([...svg.querySelectorAll("g.node")].map((g) => {
    const c = g.querySelector("circle");
    return [g.dataset.id, [+c.getAttribute("cx"), +c.getAttribute("cy")]];
  }));
  const rings = [...svg.querySelectorAll("g.node.merge")].map((g) => g.dataset.id);
  return { edges, nodes, rings };
}"""
# Lanes are 18 px apart from x = 14; rows 30 px apart from y = 18 (a desktop pointer).
X = [14, 32, 50]
Y = [18, 48, 78, 108, 138]


def merge(base_url: str, space: str, from_id: str, title: str) -> str:
    payload = gql(base_url, MERGE, s=space, f=from_id, t=title)["mergeCheckpoints"]
    assert payload["errors"] == [] and payload["fastForward"] is False
    cid: str = payload["checkpoint"]["id"]
    return cid


def test_a_merge_edge_runs_down_the_merged_branch_kept_alive_to_the_merge_row(
    page: Page, server: SmritiServer
) -> None:
    """Rows: Base, A1 (alt), M1, L1 (late, forked at M1), Merge of A1 into main. The
    alt lane is kept to the merge row, so "late" takes a third lane instead of alt's."""
    base = server.base_url
    space = gql(base, SPACE, n="Merge graph")["createSpace"]["space"]["id"]
    main = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    root = checkpoint(base, main, "Base")
    a1 = checkpoint(base, fork(base, root, "alt"), "A1")
    m1 = checkpoint(base, main, "M1")
    l1 = checkpoint(base, fork(base, m1, "late"), "L1")
    merged = merge(base, space, a1, "Merge alt")

    open_graph(page, base, main)
    found = page.evaluate(MERGE_GEOMETRY)
    assert found["nodes"] == {
        root: [X[0], Y[0]],
        a1: [X[1], Y[1]],
        m1: [X[0], Y[2]],
        l1: [X[2], Y[3]],
        merged: [X[0], Y[4]],
    }
    # Down alt's lane to half a row above the merge, then into main's lane.
    assert found["edges"] == [
        {"from": a1, "to": merged, "lane": 1, "d": "M32,48 L32,123 C32,138 14,123 14,138"}
    ]
    assert found["rings"] == [merged]
    assert page.evaluate(CROSSINGS, 8) == {"crossings": [], "overlapping": 0}
    node = page.locator(f'lineage-graph g.node[data-id="{merged}"]')
    expect(node).to_have_attribute(
        "aria-label", re.compile(r", merge of alt \([0-9a-f]{7}\) into main ")
    )


def test_a_checkpoint_merged_from_the_middle_of_its_line_gets_an_edge_lane(
    page: Page, server: SmritiServer
) -> None:
    """Rows: Base, A1, A2 (alt), M1, Merge of A1 into main: alt's lane holds A2 on
    the way, so the edge turns into a lane of its own and passes neither A2 nor M1."""
    base = server.base_url
    space = gql(base, SPACE, n="Mid-line merge")["createSpace"]["space"]["id"]
    main = gql(base, SESSION, s=space)["createSession"]["session"]["id"]
    root = checkpoint(base, main, "Base")
    alt = fork(base, root, "alt")
    a1 = checkpoint(base, alt, "A1")
    a2 = checkpoint(base, alt, "A2")
    m1 = checkpoint(base, main, "M1")
    merged = merge(base, space, a1, "Merge A1")

    open_graph(page, base, main)
    found = page.evaluate(MERGE_GEOMETRY)
    assert found["nodes"] == {
        root: [X[0], Y[0]],
        a1: [X[1], Y[1]],
        a2: [X[1], Y[2]],
        m1: [X[0], Y[3]],
        merged: [X[0], Y[4]],
    }
    assert found["edges"] == [
        {
            "from": a1,
            "to": merged,
            "lane": 2,
            "d": "M32,48 C32,63 50,48 50,63 L50,123 C50,138 14,123 14,138",
        }
    ]
    assert page.evaluate(CROSSINGS, 8) == {"crossings": [], "overlapping": 0}
