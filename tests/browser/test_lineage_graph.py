"""The lineage graph: every branch drawn, parentage unambiguous, readable at 200 checkpoints."""

from __future__ import annotations

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
