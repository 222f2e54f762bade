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
