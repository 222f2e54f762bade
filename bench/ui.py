"""Web UI benchmark: open a long session and scroll it to the top, in headless Chromium.

    python -m bench.ui [--turns 5000] [--runs 3]

Runs the real `smriti serve` on a throw-away SQLite file, seeds one session with
``--turns`` turns straight into the database (tests/browser/support.py), then for
each run opens ``/?session=<id>`` in a fresh browser context and records, from the
page's own clock (performance.now(), 0 = navigation start):

* first paint — when the first turn cell has been laid out and a frame drawn;
* scroll to top — from the first scroll to the top until turn 1 is loaded (every
  page of 50 fetched by the sentinel and prepended, scroll position kept);
* longest task — the longest main-thread task seen while scrolling (a frame
  budget is 16 ms; this is what a user would feel as a hitch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from api.store.database import sqlite_url
from tests.browser.support import (
    FIRST_CELL_PAINTED,
    SCROLL_TO_TOP,
    VIEWPORT,
    chromium,
    long_session,
    warm_up,
)
from tests.support.servers import SmritiServer

WATCH_LONG_TASKS = """() => {
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__longest = Math.max(window.__longest, entry.duration);
    }
  }).observe({ type: "longtask" });
}"""


def measure(turns: int, runs: int) -> list[dict[str, float]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "ui-bench.sqlite3"
        with SmritiServer(sqlite_url(database)) as server, chromium() as browser:
            warm_up(server.base_url)
            sid = long_session(server.base_url, database, turns)
            for _ in range(runs):
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                page.goto(f"{server.base_url}/?session={sid}")
                painted = page.evaluate(FIRST_CELL_PAINTED)
                page.wait_for_selector(f"#turn-{turns}")
                page.evaluate(WATCH_LONG_TASKS)
                scrolled = page.evaluate(SCROLL_TO_TOP)
                loaded = page.locator("turn-cell").count()
                longest = page.evaluate("window.__longest")
                context.close()
                if loaded != turns:
                    raise RuntimeError(f"only {loaded} of {turns} turns were loaded")
                results.append({"paint": painted, "scroll": scrolled, "longest": longest})
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ui", description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results = measure(args.turns, args.runs)
    print(f"Web UI, one session of {args.turns:,} turns, {args.runs} runs (headless Chromium)")
    print(f"{'':28}{'median':>10}{'min':>10}{'max':>10}")
    for key, label in (
        ("paint", "first paint (ms)"),
        ("scroll", "scroll to top (ms)"),
        ("longest", "longest task (ms)"),
    ):
        values = [r[key] for r in results]
        print(
            f"{label:28}{statistics.median(values):>10.0f}{min(values):>10.0f}{max(values):>10.0f}"
        )
    print(f"Repeat with: python -m bench.ui --turns {args.turns} --runs {args.runs}")


if __name__ == "__main__":
    main()
