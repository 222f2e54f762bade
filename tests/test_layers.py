"""The layers stay one-directional (STYLE.md habit 2), checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

API = Path(__file__).resolve().parent.parent / "api"

# package imported -> the only place allowed to import it
OWNERS = {
    "tortoise": "api/store/",
    "litellm": "api/providers/litellm/loader.py",
    "strawberry": "api/graphql/",
}
PURE = "api/domain/"


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(str(node.args[0].value).split(".")[0])
    return found


SOURCES = sorted(API.rglob("*.py"))


@pytest.mark.parametrize("package", sorted(OWNERS))
def test_only_its_owner_imports(package: str) -> None:
    offenders = [
        str(path.relative_to(API.parent))
        for path in SOURCES
        if package in imported_packages(path)
        and not str(path.relative_to(API.parent)).startswith(OWNERS[package])
    ]
    assert offenders == []


def test_domain_rules_are_pure() -> None:
    allowed = {
        "__future__",
        "api",
        "collections",
        "dataclasses",
        "datetime",
        "enum",
        "hashlib",
        "json",
        "re",
        "typing",
        "unicodedata",
        "math",
        "string",
        "itertools",
        "functools",
    }
    offenders = {
        str(path.relative_to(API.parent)): sorted(imported_packages(path) - allowed)
        for path in SOURCES
        if str(path.relative_to(API.parent)).startswith(PURE) and imported_packages(path) - allowed
    }
    assert offenders == {}


def test_domain_imports_nothing_above_it() -> None:
    for path in SOURCES:
        if not str(path.relative_to(API.parent)).startswith(PURE):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("api."):
                assert node.module.startswith(("api.domain", "api.errors")), (path, node.module)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports by absolute name (``from a.b import c``
    counts as ``a.b`` and ``a.b.c``: c may be a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


# The one door (DESIGN §10): GraphQL, HTTP, the command line, settings and the
# app reach the store only through api/services, whose use cases take the
# actor first. No exception, not even for the DataLoaders: api/graphql/loaders.py
# batches the reads of api.services.reading, which decide what the actor may read.
DOOR = ("api/services/", "api/store/")


def test_only_the_services_reach_the_store() -> None:
    offenders = {
        str(path.relative_to(API.parent)): sorted(
            m for m in imported_modules(path) if m == "api.store" or m.startswith("api.store.")
        )
        for path in SOURCES
        if not str(path.relative_to(API.parent)).startswith(DOOR)
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_door_test_sees_a_store_import(tmp_path: Path) -> None:
    """The check above can fail: it sees both spellings of a store import."""
    path = tmp_path / "sample.py"
    path.write_text("from api.store import sessions\nimport api.store.turns\n")
    assert imported_modules(path) >= {"api.store", "api.store.sessions", "api.store.turns"}
