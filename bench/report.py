"""Turn measurements into figures: percentiles, the printed table, the
PASS/FAIL targets, the JSON file and a readable cProfile summary."""

from __future__ import annotations

import json
import os
import pstats
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.measure import MS_PER_SECOND, Series

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPOSITORY_ROOT = Path(__file__).resolve().parent.parent

SEND_HEAD = "sendMessage HEAD LATEST_3"
SEND_FRESH = "sendMessage FRESH"
LINEAGE = "space.lineage(first: 100)"
ANCESTORS = "checkpoint.ancestors(first: 50)"

# Targets (see docs/benchmarks.md).
FLATNESS_TOLERANCE = 0.20  # p50 at the largest history may exceed p50 at 0 turns by 20 %
SEND_P50_LIMIT_MS = 10.0
# Percentiles reported, as cut points of statistics.quantiles(n=100).
P50, P95 = 50, 95
PERCENT = 100
# Rows of the profile summary.
PROFILE_TOP = 15


@dataclass(frozen=True)
class Figures:
    """The summary of one series."""

    name: str
    size: int
    unit: str
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    statements: list[int]
    mode: str | None
    window_turns: int | None
    returned: int | None


@dataclass(frozen=True)
class Target:
    label: str
    passed: bool
    detail: str


def percentile(samples: Sequence[float], point: int) -> float:
    """The ``point``-th percentile (linear interpolation between samples)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=PERCENT, method="inclusive")[point - 1]


def figures(series: Series) -> Figures:
    samples = series.samples_ms
    return Figures(
        name=series.name,
        size=series.size,
        unit=series.unit,
        n=len(samples),
        p50_ms=percentile(samples, P50),
        p95_ms=percentile(samples, P95),
        mean_ms=statistics.fmean(samples),
        min_ms=min(samples),
        max_ms=max(samples),
        statements=series.statements,
        mode=series.mode,
        window_turns=series.window_turns,
        returned=series.returned,
    )


def _find(rows: Sequence[Figures], name: str, size: int) -> Figures | None:
    return next((r for r in rows if r.name == name and r.size == size), None)


def _statements(row: Figures) -> str:
    low, high = min(row.statements), max(row.statements)
    return str(low) if low == high else f"{low}-{high}"


def evaluate_targets(rows: Sequence[Figures]) -> list[Target]:
    """The PASS/FAIL lines of docs/benchmarks.md, from the measured rows."""
    targets: list[Target] = []
    head = sorted((r for r in rows if r.name == SEND_HEAD), key=lambda r: r.size)
    if head:
        empty, largest = head[0], head[-1]
        ratio = largest.p50_ms / empty.p50_ms
        targets.append(
            Target(
                f"sendMessage p50 at {largest.size:,} turns within "
                f"{FLATNESS_TOLERANCE:.0%} of p50 at {empty.size:,} turns",
                ratio <= 1 + FLATNESS_TOLERANCE,
                f"{largest.p50_ms:.2f} ms vs {empty.p50_ms:.2f} ms ({ratio - 1:+.0%})",
            )
        )
    sends = [r for r in rows if r.name in (SEND_HEAD, SEND_FRESH)]
    if sends:
        worst = max(sends, key=lambda r: r.p50_ms)
        targets.append(
            Target(
                f"sendMessage p50 < {SEND_P50_LIMIT_MS:g} ms at every size",
                worst.p50_ms < SEND_P50_LIMIT_MS,
                f"worst {worst.p50_ms:.2f} ms ({worst.name}, {worst.size:,} {worst.unit})",
            )
        )
    for name in (LINEAGE, ANCESTORS):
        measured = sorted((r for r in rows if r.name == name), key=lambda r: r.size)
        if len(measured) < 2:
            continue
        small, large = measured[0], measured[-1]
        counts = {c for r in measured for c in r.statements}
        targets.append(
            Target(
                f"{name} statements equal at {small.size:,} and {large.size:,} checkpoints",
                len(counts) == 1,
                f"{_statements(small)} vs {_statements(large)}",
            )
        )
    return targets


def informational(rows: Sequence[Figures]) -> list[str]:
    """Comparisons that explain the targets without being targets."""
    lines = []
    full = sorted((r for r in rows if r.name == SEND_HEAD and r.window_turns), key=lambda r: r.size)
    if len(full) >= 2:
        smaller, larger = full[0], full[-1]
        change = larger.p50_ms / smaller.p50_ms - 1
        lines.append(
            f"history length alone (both windows hold {larger.window_turns} turns): "
            f"p50 {smaller.p50_ms:.2f} ms at {smaller.size:,} turns vs "
            f"{larger.p50_ms:.2f} ms at {larger.size:,} turns ({change:+.0%})"
        )
    return lines


def table(rows: Sequence[Figures]) -> str:
    header = (
        f"{'request':<34}{'size':>20}  {'mode':<8}{'window':>7}"
        f"{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'SQL/req':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        window = "" if r.window_turns is None else str(r.window_turns)
        if r.returned is not None:
            window = f"{r.returned} rows"
        lines.append(
            f"{r.name:<34}{f'{r.size:,} {r.unit}':>20}  {r.mode or '':<8}{window:>7}"
            f"{r.n:>6}{r.p50_ms:>9.2f}{r.p95_ms:>9.2f}{_statements(r):>9}"
        )
    return "\n".join(lines)


def render(
    *,
    database: str,
    version: str,
    cold_ms: float,
    seed_seconds: float,
    rows: Sequence[Figures],
    targets: Sequence[Target],
    load: Sequence[float],
) -> str:
    out = [
        f"== Smriti benchmark: {database} ({version}) ==",
        f"seeding: {seed_seconds:.1f} s; 1-minute load average before / after: "
        f"{load[0]:.2f} / {load[1]:.2f} on {os.cpu_count()} CPUs "
        "(other work on the machine shows up in the figures)",
        f"cold first sendMessage: {cold_ms:.1f} ms "
        "(first request of the process: LiteLLM import, schema and connection warm-up)",
        "",
        table(rows),
        "",
        "window: turns the model saw (sendMessage) or nodes returned (queries); "
        "SQL/req: statements per request",
        *informational(rows),
        "",
        *(f"{'PASS' if t.passed else 'FAIL'}  {t.label}: {t.detail}" for t in targets),
    ]
    return "\n".join(out)


def write_json(database: str, document: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{database}.json"
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def as_json(
    *,
    database: str,
    version: str,
    cold_ms: float,
    seed_seconds: float,
    rows: Sequence[Figures],
    targets: Sequence[Target],
    parameters: dict[str, Any],
    load: Sequence[float],
) -> dict[str, Any]:
    return {
        "database": database,
        "version": version,
        "parameters": parameters,
        "cpus": os.cpu_count(),
        "load_average_before_after": list(load),
        "seed_seconds": seed_seconds,
        "cold_first_send_ms": cold_ms,
        "series": [asdict(r) for r in rows],
        "targets": [asdict(t) for t in targets],
    }


# --- cProfile summary ---------------------------------------------------------

# Cumulative time of these functions says where a sendMessage goes. They nest
# (indented: inside the line above); token counting and ORM row building are
# spread over several of them.
_PROBES = (
    ("whole HTTP request (Strawberry view)", "strawberry/http/async_base_view.py", "run"),
    ("GraphQL parse", "graphql/language/parser.py", "parse"),
    ("GraphQL validate", "graphql/validation/validate.py", "validate"),
    ("sendMessage resolver", "api/graphql/chat/mutations.py", "send_message"),
    ("  session read (sessions.get)", "api/store/sessions.py", "get"),
    ("  turn writes (turns.append, x2)", "api/store/turns.py", "append"),
    ("  context resolution (resolve_context)", "api/services/context.py", "resolve_context"),
    ("    turn window read (turns.recent)", "api/store/turns.py", "recent"),
    ("    checkpoint chain (checkpoints.chain)", "api/store/checkpoints.py", "chain"),
    ("    boundary (turns.last_sequence_at)", "api/store/turns.py", "last_sequence_at"),
    ("  prompt rendering (render_messages)", "api/domain/prompt.py", "render_messages"),
    ("  provider call (registry.complete)", "api/providers/registry.py", "complete"),
    ("    litellm.acompletion", "litellm/main.py", "acompletion"),
    ("    offline echo model", "api/providers/offline.py", "echo_reply"),
    ("token counting, app (registry.count_tokens)", "api/providers/registry.py", "count_tokens"),
    (
        "token counting, all (litellm token_counter)",
        "litellm/litellm_core_utils/token_counter.py",
        "token_counter",
    ),
    ("ORM row -> model (Model._init_from_db)", "tortoise/models.py", "_init_from_db"),
    ("idle in the event loop (DB / thread waits)", "selectors.py", "select"),
)


def _package(filename: str) -> str:
    """Group a profiled function by where it lives."""
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins / C"
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0]
    root = str(REPOSITORY_ROOT) + "/"
    if filename.startswith(root):
        parts = filename[len(root) :].split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    if "/lib/python3" in filename:
        module = filename.split("/lib/python3", 1)[1].split("/", 2)[1]
        return f"stdlib {module.removesuffix('.py')}"
    return filename


def profile_summary(stats: pstats.Stats, requests: int) -> str:
    """Per-request cumulative time of the probes, self time by package, top functions."""
    raw: dict[tuple[str, int, str], Any] = stats.stats  # type: ignore[attr-defined]
    per_request = MS_PER_SECOND / requests
    total = stats.total_tt * per_request  # type: ignore[attr-defined]
    out = [
        f"cProfile over {requests} sendMessage calls: {total:.2f} ms per request "
        "(profiler overhead included; SQLite statements run in aiosqlite's thread "
        "and show as event-loop waits)",
        "",
        "cumulative per request:",
    ]
    for label, path, function in _PROBES:
        cumulative = sum(
            entry[3]
            for (filename, _line, name), entry in raw.items()
            if name == function and filename.endswith(path)
        )
        out.append(f"  {cumulative * per_request:8.2f} ms  {label}")
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _line, _name), entry in raw.items():
        by_package[_package(filename)] += entry[2]
    out += ["", "self time per request, by package:"]
    for package, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])[:PROFILE_TOP]:
        out.append(f"  {seconds * per_request:8.2f} ms  {package}")
    out += ["", "top functions by self time (per request):"]
    ranked = sorted(raw.items(), key=lambda kv: -kv[1][2])[:PROFILE_TOP]
    for (filename, line, name), entry in ranked:
        out.append(
            f"  {entry[2] * per_request:8.3f} ms  {entry[1] / requests:7.1f} calls  "
            f"{name}  ({_package(filename)}:{line})"
        )
    return "\n".join(out)


# --- whole reads (bench/reads.py) ----------------------------------------------

READ_GRAPH = "space.lineageGraph (one request)"
READ_LINEAGE_PAGES = "space.lineage(first: 1000) pages"
READ_TURNS = "session.turns(first: {page}) pages"
READ_TURN_NODES = "session.turns(first: {page}) nodes pages"
PER_NODE_LIMIT_MS = 0.1  # issue 10, target 3
RSS_LIMIT_MB = 250.0  # issue 10, target 5


@dataclass(frozen=True)
class ReadFigures:
    name: str
    size: int
    unit: str
    n: int
    requests: int
    returned: int
    p50_ms: float
    min_ms: float
    max_ms: float
    cpu_p50_ms: float
    statements: list[int]

    @property
    def per_node_ms(self) -> float:
        return self.p50_ms / self.returned if self.returned else 0.0

    @property
    def cpu_per_node_ms(self) -> float:
        return self.cpu_p50_ms / self.returned if self.returned else 0.0


def read_figures(series: Any) -> ReadFigures:
    """Summarise a bench.reads.ReadSeries."""
    return ReadFigures(
        name=series.name,
        size=series.size,
        unit=series.unit,
        n=len(series.samples_ms),
        requests=series.requests,
        returned=series.returned,
        p50_ms=statistics.median(series.samples_ms),
        min_ms=min(series.samples_ms),
        max_ms=max(series.samples_ms),
        cpu_p50_ms=statistics.median(series.cpu_ms),
        statements=series.statements,
    )


def read_table(rows: Sequence[ReadFigures]) -> str:
    header = (
        f"{'whole read':<38}{'size':>18}{'req':>5}{'nodes':>7}{'n':>4}"
        f"{'p50 ms':>9}{'min ms':>9}{'ms/node':>9}{'CPU ms/node':>12}{'SQL/read':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        sql = str(r.statements[0]) if len(set(r.statements)) == 1 else str(r.statements)
        lines.append(
            f"{r.name:<38}{f'{r.size:,} {r.unit}':>18}{r.requests:>5}{r.returned:>7}{r.n:>4}"
            f"{r.p50_ms:>9.1f}{r.min_ms:>9.1f}{r.per_node_ms:>9.4f}{r.cpu_per_node_ms:>12.4f}"
            f"{sql:>9}"
        )
    return "\n".join(lines)


def read_targets(rows: Sequence[ReadFigures], rss_after_mb: float) -> list[Target]:
    targets: list[Target] = []
    graph = sorted((r for r in rows if r.name == READ_GRAPH), key=lambda r: r.size)
    if graph:
        largest = graph[-1]
        targets.append(
            Target(
                f"lineageGraph p50 <= {PER_NODE_LIMIT_MS} ms per checkpoint at "
                f"{largest.size:,} checkpoints",
                largest.per_node_ms <= PER_NODE_LIMIT_MS,
                f"{largest.per_node_ms:.4f} ms ({largest.p50_ms:.0f} ms for "
                f"{largest.returned:,}; CPU {largest.cpu_per_node_ms:.4f} ms)",
            )
        )
    if len(graph) >= 2:
        counts = {c for r in graph for c in r.statements}
        targets.append(
            Target(
                f"lineageGraph statements equal at {graph[0].size:,} and "
                f"{graph[-1].size:,} checkpoints",
                len(counts) == 1,
                " vs ".join(str(sorted(set(r.statements))) for r in graph),
            )
        )
    turns = [r for r in rows if r.unit == "turns"]
    if turns:
        best = min(turns, key=lambda r: r.per_node_ms)
        targets.append(
            Target(
                f"every turn of {best.size:,} paged at <= {PER_NODE_LIMIT_MS} ms per turn",
                best.per_node_ms <= PER_NODE_LIMIT_MS,
                f"{best.per_node_ms:.4f} ms with {best.name} ({best.requests} requests, "
                f"{best.p50_ms:.0f} ms; CPU {best.cpu_per_node_ms:.4f} ms)",
            )
        )
        per_page = {c / r.requests for r in turns for c in r.statements}
        targets.append(
            Target(
                "turn pages: statements per request equal at every page size",
                len(per_page) == 1,
                ", ".join(f"{r.name}: {r.statements[0] / r.requests:g}" for r in turns),
            )
        )
    targets.append(
        Target(
            f"resident memory after the run <= {RSS_LIMIT_MB:g} MB",
            rss_after_mb <= RSS_LIMIT_MB,
            f"{rss_after_mb:.0f} MB (benchmark process: the app, its client and the seeding)",
        )
    )
    return targets
