"""The layers stay one-directional (STYLE.md habit 2), checked on the source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

API = Path(__file__).resolve().parent.parent / "api"

# package imported -> the only place allowed to import it
OWNERS = {
    "tortoise": "api/store/",
    "litellm": "api/providers/litellm/loader.py",
    "strawberry": "api/graphql/",
    "mcp": "api/mcp/",
    "mcp_types": "api/mcp/",
}
PURE = "api/domain/"


def module_parts(path: Path, root: Path) -> list[str]:
    """``["api", "graphql", "view"]`` for api/graphql/view.py (``__init__`` dropped)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def absolute(node: ast.ImportFrom, path: Path, root: Path) -> str:
    """The module a ``from … import`` names, relative ones resolved as Python does:
    ``from ..store import x`` in api/graphql/view.py is ``api.store``."""
    if node.level == 0:
        return node.module or ""
    package = list(path.relative_to(root).with_suffix("").parts)[:-1]
    if node.level - 1 > len(package) - 1:
        raise ValueError(f"{path}: relative import beyond the top-level package")
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_packages(path: Path, root: Path | None = None) -> set[str]:
    root = API.parent if root is None else root
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(absolute(node, path, root).split(".")[0])
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
        for module in imported_modules(path):
            if module.startswith("api."):
                assert module.startswith(("api.domain", "api.errors")), (path, module)


def imported_modules(path: Path, root: Path | None = None) -> set[str]:
    """Every module ``path`` imports, by absolute name, relative imports resolved
    (``from a.b import c`` counts as ``a.b`` and ``a.b.c``: c may be a module)."""
    root = API.parent if root is None else root
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node, path, root)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


# The one door (DESIGN §10): GraphQL, HTTP, the command line, settings and the
# app reach the store only through api/services, whose use cases take the
# actor first. No exception, not even for the DataLoaders: api/graphql/loaders.py
# batches the reads of api.services.reading, which decide what the actor may read.
DOOR = ("api/services/", "api/store/")


def store_imports_outside_the_door(sources: list[Path], root: Path) -> dict[str, list[str]]:
    offenders = {
        str(path.relative_to(root)): sorted(
            m
            for m in imported_modules(path, root)
            if m == "api.store" or m.startswith("api.store.")
        )
        for path in sources
        if not str(path.relative_to(root)).startswith(DOOR)
    }
    return {path: found for path, found in offenders.items() if found}


def test_only_the_services_reach_the_store() -> None:
    assert store_imports_outside_the_door(SOURCES, API.parent) == {}


def test_the_door_test_sees_a_store_import(tmp_path: Path) -> None:
    """The check above can fail: it sees both spellings of a store import."""
    path = tmp_path / "sample.py"
    path.write_text("from api.store import sessions\nimport api.store.turns\n")
    assert imported_modules(path) >= {"api.store", "api.store.sessions", "api.store.turns"}


def test_relative_imports_are_resolved_before_they_are_judged(tmp_path: Path) -> None:
    """Inside the package every import is relative (it installs as `smriti`): the
    checks see through the dots, as Python resolves them."""
    module = tmp_path / "api" / "graphql" / "sample.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from ..store import sessions\n"
        "from .. import errors\n"
        "from .core import ids\n"
        "def later():\n"
        "    from ..store.turns import append\n"
    )
    assert imported_modules(module, tmp_path) == {
        "api.store",
        "api.store.sessions",
        "api",
        "api.errors",
        "api.graphql.core",
        "api.graphql.core.ids",
        "api.store.turns",
        "api.store.turns.append",
    }
    assert imported_packages(module, tmp_path) == {"api"}


def test_a_relative_store_import_fails_the_door(tmp_path: Path) -> None:
    """The door check still fails on a forbidden import spelled relatively, in a
    package's __init__ too, and lets the services through."""
    files = {
        "api/http/sample.py": "from ..store.sessions import create\n",
        "api/graphql/core/__init__.py": "from ... import store\n",
        "api/services/fine.py": "from ..store import sessions\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    sources = sorted((tmp_path / "api").rglob("*.py"))
    assert store_imports_outside_the_door(sources, tmp_path) == {
        "api/graphql/core/__init__.py": ["api.store"],
        "api/http/sample.py": ["api.store.sessions", "api.store.sessions.create"],
    }


# Imported where first used, not when the server starts (each adds to every start).
LAZY = ("litellm", "markdown_it", "pygments")


def test_starting_the_app_leaves_the_lazy_packages_out() -> None:
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, api.app; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({LAZY!r})))",
        ],
        cwd=API.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout == "[]\n"
