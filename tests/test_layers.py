"""The layers stay one-directional, checked on the source: the table in
docs/architecture.md ("Layers") is read here and every import it does not
allow fails."""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

API = Path(__file__).resolve().parent.parent / "api"
ARCHITECTURE = API.parent / "docs" / "architecture.md"

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


# The one door (docs/architecture.md#the-one-door): GraphQL, HTTP, the command line, settings and the
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


# --- the import contract: docs/architecture.md's table of layers -----------------


@dataclass(frozen=True)
class Layer:
    name: str
    # Files (api/app.py), patterns (api/*_cli.py) and folders (api/graphql/).
    where: tuple[str, ...]
    may_import: frozenset[str]


def layers_of(document: str) -> list[Layer]:
    """The table under the document's `## Layers` heading, top row first."""
    section = re.search(r"^## Layers\n(.*?)(?=^## |\Z)", document, re.MULTILINE | re.DOTALL)
    assert section is not None, "no `## Layers` section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["Layer", "Where", "What it holds", "May import"], header
    layers = []
    for row in rows[2:]:  # after the header and its |---| line
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 4, row
        allowed = [name.strip() for name in cells[3].split(",") if name.strip()]
        layers.append(
            Layer(
                name=cells[0],
                where=tuple(re.findall(r"`([^`]+)`", cells[1])),
                may_import=frozenset(allowed),
            )
        )
    return layers


def specificity(pattern: str, path: str) -> tuple[int, int] | None:
    """How closely ``pattern`` names ``path`` (higher wins), or None if it does not:
    a file before a pattern before a folder, a longer folder before a shorter."""
    if pattern.endswith("/"):
        return (0, len(pattern)) if path.startswith(pattern) else None
    if any(mark in pattern for mark in "*?["):
        return (1, len(pattern)) if fnmatch.fnmatchcase(path, pattern) else None
    return (2, len(pattern)) if path == pattern else None


def layer_of(path: str, layers: list[Layer]) -> Layer | None:
    """The layer of a source file (``api/graphql/view.py``) by its most specific row."""
    best: tuple[tuple[int, int], Layer] | None = None
    for layer in layers:
        for pattern in layer.where:
            found = specificity(pattern, path)
            if found is not None and (best is None or found > best[0]):
                best = (found, layer)
    return None if best is None else best[1]


def source_of(module: str, root: Path) -> str | None:
    """The file that defines ``module`` or the longest module it names
    (``api.store.sessions.create`` is in api/store/sessions.py), relative to ``root``."""
    parts = module.split(".")
    while parts:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate.relative_to(root).as_posix()
        parts.pop()
    return None


def contract_violations(sources: list[Path], root: Path, layers: list[Layer]) -> list[str]:
    """Every import between Smriti's modules the table does not allow (by the
    file imported), and every source file no row names, each as one line."""
    found = []
    for path in sources:
        name = path.relative_to(root).as_posix()
        own = layer_of(name, layers)
        if own is None:
            found.append(f"{name}: in no layer")
            continue
        for module in sorted(imported_modules(path, root)):
            # `from .. import errors` names the package itself too: every module
            # imports that; `from . import __version__` is api/__init__.py's.
            if not module.startswith("api."):
                continue
            target = source_of(module, root)
            other = layer_of(target, layers) if target else None
            if other is None or other.name == own.name or other.name in own.may_import:
                continue
            found.append(f"{name} ({own.name}) imports {target} ({other.name})")
    return sorted(set(found))


LAYERS = layers_of(ARCHITECTURE.read_text())


def test_every_import_is_one_the_table_allows() -> None:
    assert contract_violations(SOURCES, API.parent, LAYERS) == []


def test_the_table_names_layers_that_exist_and_files_that_do() -> None:
    names = [layer.name for layer in LAYERS]
    assert len(names) == len(set(names))
    unknown = {(layer.name, n) for layer in LAYERS for n in layer.may_import if n not in names}
    assert unknown == set()
    paths = [path.relative_to(API.parent).as_posix() for path in SOURCES]
    stale = [
        (layer.name, pattern)
        for layer in LAYERS
        for pattern in layer.where
        if not any(specificity(pattern, path) for path in paths)
    ]
    assert stale == []


def test_the_table_has_no_cycle() -> None:
    """Each layer may import only layers below its row: the arrows go one way."""
    position = {layer.name: row for row, layer in enumerate(LAYERS)}
    upward = {
        (layer.name, name)
        for layer in LAYERS
        for name in layer.may_import
        if position[name] <= position[layer.name]
    }
    assert upward == set()


def test_the_table_keeps_the_one_door_and_the_cli_off_the_app() -> None:
    """What the rest of this file checks by hand, as the table says it."""
    by_name = {layer.name: layer for layer in LAYERS}
    assert {layer.name for layer in LAYERS if "store" in layer.may_import} == {"services"}
    assert {layer.name for layer in LAYERS if "app" in layer.may_import} == {"serve"}
    assert layer_of("api/mcp/cli.py", LAYERS) is by_name["cli"]
    assert layer_of("api/lineage_cli.py", LAYERS) is by_name["cli"]
    assert layer_of("api/mcp/http.py", LAYERS) is by_name["mcp"]


def test_the_contract_fails_on_a_forbidden_import(tmp_path: Path) -> None:
    """On a small tree with its own table: each import across a missing arrow is
    named (relative, absolute, lazy, in a package's __init__), allowed ones are
    not, and a file no row names is reported."""
    table = """# Elsewhere

## Layers

Two lines of explanation.

| Layer | Where | What it holds | May import |
|---|---|---|---|
| cli | `api/cli.py`, `api/*_cli.py`, `api/tools/cli.py` | commands | runtime, services |
| app | `api/app.py` | the app | runtime, tools |
| runtime | `api/runtime.py` | the root | services |
| tools | `api/tools/` | tools | services |
| services | `api/services/` | the door | |

## Next section

| Layer | Where | What it holds | May import |
|---|---|---|---|
| ignored | `api/` | not this table | |
"""
    layers = layers_of(table)
    assert [layer.name for layer in layers] == ["cli", "app", "runtime", "tools", "services"]
    files = {
        "api/__init__.py": "",
        "api/cli.py": "from .runtime import Runtime\ndef serve():\n    from .app import app\n",
        "api/lineage_cli.py": "import api.services.x\nfrom api.tools import cli\n",
        "api/tools/__init__.py": "from ..runtime import Runtime\n",
        "api/tools/cli.py": "from ..services import x\n",
        "api/app.py": "from .tools import cli\nfrom . import runtime\n",
        "api/runtime.py": "from .services.x import f\n",
        "api/services/__init__.py": "",
        "api/services/x.py": "from .. import app\n",
        "api/stray.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    sources = sorted((tmp_path / "api").rglob("*.py"))
    # api/__init__.py is in no row of this table: reported like api/stray.py.
    assert contract_violations(sources, tmp_path, layers) == [
        "api/__init__.py: in no layer",
        "api/app.py (app) imports api/tools/cli.py (cli)",
        "api/cli.py (cli) imports api/app.py (app)",
        "api/lineage_cli.py (cli) imports api/tools/__init__.py (tools)",
        "api/services/x.py (services) imports api/app.py (app)",
        "api/stray.py: in no layer",
        "api/tools/__init__.py (tools) imports api/runtime.py (runtime)",
    ]


def test_the_cli_modules_load_neither_the_app_nor_litellm() -> None:
    """What the table says of the command line, seen at run time: its modules and
    a runtime with its registry and services leave the web app and LiteLLM unloaded."""
    script = (
        "import sys, api.cli, api.lineage_cli, api.accounts_cli, api.mcp.cli\n"
        "from api.runtime import Runtime\n"
        "from api.settings import Settings\n"
        "runtime = Runtime(Settings(database_url='sqlite://:memory:', providers_file=None))\n"
        "runtime.services\n"
        "print(sorted(m for m in ('api.app', 'api.serve', 'litellm', 'starlette.applications')"
        " if m in sys.modules))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=API.parent, capture_output=True, text=True, check=True
    )
    assert ran.stdout == "[]\n"
