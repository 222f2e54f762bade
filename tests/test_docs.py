"""The documentation holds together: its links lead somewhere, the README stays short,
and the repository explains itself (no citation of a design file it does not contain)."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\]\(([^)\s]+)\)|<img [^>]*src=\"([^\"]+)\"")
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"`|\*\*|\*", "", heading).strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text())):
        base, n = slug(heading), 0
        name = base
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text())
    links = [a or b for a, b in LINK.findall(text)]
    return [link for link in links if not re.match(r"[a-z]+:", link)]


def test_the_slug_is_githubs() -> None:
    assert (
        slug("Compose: PostgreSQL, several workers, TLS")
        == "compose-postgresql-several-workers-tls"
    )
    assert (
        slug("The in-process benchmark (`python -m bench`)")
        == "the-in-process-benchmark-python--m-bench"
    )
    assert slug("Smriti for agents (MCP)") == "smriti-for-agents-mcp"


def test_there_are_pages_and_links_to_check() -> None:
    assert {p.name for p in PAGES} >= {
        "README.md",
        "architecture.md",
        "api.md",
        "agents.md",
        "operations.md",
        "benchmarks.md",
        "development.md",
    }
    assert sum(len(relative_links(p)) for p in PAGES) > 40


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists() or (
            anchor and target.suffix == ".md" and anchor not in anchors(target)
        ):
            broken.append(link)
    assert broken == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](#title) [gone](missing.md) [no anchor](#nowhere)\n")
    links = relative_links(page)
    assert links == ["#title", "missing.md", "#nowhere"]
    assert anchors(page) == {"title"}


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 700


CITATION = re.compile(r"DESIGN\.md|DESIGN §|STYLE\.md|smriti-architecture|shared/seed")
CHECKED = [
    "api",
    "webui",
    "tests",
    "bench",
    "scripts",
    "docs",
    "docker",
    "README.md",
    "CHANGELOG.md",
    "Dockerfile",
    "compose.yaml",
    "Makefile",
]


def citations() -> list[str]:
    files = subprocess.run(
        ["git", "ls-files", "--", *CHECKED], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in files:
        path = ROOT / name
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found += [f"{name}: {m.group(0)}" for m in CITATION.finditer(text)]
    return found


def test_nothing_cites_a_design_file_the_repository_does_not_contain() -> None:
    assert citations() == []
