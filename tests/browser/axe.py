"""axe-core for the accessibility tests: fetched from the npm registry, never committed.

The tarball of a pinned version is downloaded once into a git-ignored cache
(``.cache/axe-core/``), checked against the registry's integrity hash pinned here,
and ``axe.min.js`` is injected into the page under test. The download helpers are
the ones ``scripts/fetch-graphiql-assets`` uses for GraphiQL's files.
"""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from types import ModuleType
from typing import Any

from playwright.sync_api import Page

from tests.support.repository import REPOSITORY_ROOT

AXE_VERSION = "4.14.1"
# dist.integrity of axe-core@4.14.1 in the npm registry (the tarball's SHA-512).
AXE_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
CACHE = REPOSITORY_ROOT / ".cache" / "axe-core" / AXE_VERSION
# What the issue asks to be free of; moderate and minor findings are reported, not failed.
BLOCKING = ("serious", "critical")


def _fetch_script() -> ModuleType:
    path = REPOSITORY_ROOT / "scripts" / "fetch-graphiql-assets"
    loader = SourceFileLoader("fetch_graphiql_assets", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def axe_source() -> str:
    """axe.min.js of the pinned version, downloaded and verified on first use."""
    target = CACHE / "axe.min.js"
    tarball_path = CACHE / "axe-core.tgz"
    fetch = _fetch_script()
    if not (tarball_path.is_file() and fetch.sri_matches(tarball_path.read_bytes(), AXE_INTEGRITY)):
        tarball = fetch.download(fetch.tarball_url("axe-core", AXE_VERSION))
        if not fetch.sri_matches(tarball, AXE_INTEGRITY):
            raise RuntimeError(f"axe-core {AXE_VERSION} does not match {AXE_INTEGRITY}")
        CACHE.mkdir(parents=True, exist_ok=True)
        tarball_path.write_bytes(tarball)
        target.unlink(missing_ok=True)
    if not target.is_file():
        target.write_bytes(fetch.file_in_tarball(tarball_path.read_bytes(), "axe.min.js"))
    return target.read_text(encoding="utf-8")


def run_axe(page: Page) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now (WCAG 2.x A and AA rules and best practices)."""
    # Colours are judged as drawn: let fades (the toast's) finish first.
    page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    violations: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
    )
    return violations


def summary(violations: list[dict[str, Any]]) -> list[str]:
    """One line per rule: "serious color-contrast (3 nodes)"."""
    return sorted(f"{v['impact']} {v['id']} ({len(v['nodes'])} nodes)" for v in violations)


def blocking(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in BLOCKING]


__all__ = ["AXE_VERSION", "blocking", "run_axe", "summary"]
