"""What a wheel of Smriti holds, checked on the source (tests/system/test_wheel_install.py
builds one and runs it).

The repository's api/ folder installs as the package `smriti` (pyproject.toml), so
inside it nothing may name the package `api`: imports are relative and module paths
are derived from __package__.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import yaml

from api import bundled
from api.settings import Settings
from tests.support.repository import REPOSITORY_ROOT

API = REPOSITORY_ROOT / "api"
PYPROJECT = tomllib.loads((REPOSITORY_ROOT / "pyproject.toml").read_text())
MODULE_PATH = re.compile(r"^api(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$")


def sources() -> list[Path]:
    return sorted(p for p in API.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_folder_of_modules_is_an_installed_package() -> None:
    """A folder missing from the list is missing from the wheel, and each is a regular
    package (api/graphql was a namespace package, found only by namespace discovery)."""
    folders = {p.parent for p in sources()}
    expected = {".".join(["smriti", *folder.relative_to(API).parts]) for folder in folders}
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"smriti": "api"}
    assert sorted(setuptools["packages"]) == sorted(expected)
    assert [
        str(f.relative_to(REPOSITORY_ROOT)) for f in folders if not (f / "__init__.py").is_file()
    ] == []


def test_the_package_never_names_itself() -> None:
    """Installed, the package is `smriti`; `api.…` would import nothing (or someone
    else's `api`)."""
    found: list[str] = []
    for path in sources():
        where = str(path.relative_to(REPOSITORY_ROOT))
        for node in ast.walk(ast.parse(path.read_text(), filename=where)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] == "api":
                    found.append(f"{where}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{where}:{node.lineno} import {a.name}"
                    for a in node.names
                    if a.name.split(".")[0] == "api"
                ]
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and MODULE_PATH.match(node.value)
            ):
                found.append(f"{where}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_console_script_and_the_version_name_the_installed_package() -> None:
    project = PYPROJECT["project"]
    assert project["scripts"] == {"smriti": "smriti.cli:main"}
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "smriti.__version__"}


def test_the_shipped_files_are_the_ones_in_the_repository() -> None:
    """api/webui and api/providers.yaml are links to the top-level files people edit;
    the package finds them (and an installed wheel its copies) through its resources."""
    assert (API / "webui").is_symlink() and (API / "webui").readlink() == Path("../webui")
    assert (API / "providers.yaml").readlink() == Path("../providers.yaml")
    assert bundled.WEBUI_DIR.resolve() == REPOSITORY_ROOT / "webui"
    assert bundled.PROVIDERS_FILE.resolve() == REPOSITORY_ROOT / "providers.yaml"
    assert bundled.GRAPHIQL_VENDOR_DIR == API / "static" / "vendor"
    data = PYPROJECT["tool"]["setuptools"]["package-data"]["smriti"]
    assert {"webui/*", "webui/**/*", "providers.yaml", "static/vendor/**/*"} <= set(data)


def test_the_default_providers_file_is_the_bundled_one(tmp_path: Path) -> None:
    settings = Settings.from_environment({}, database_url=f"sqlite:///{tmp_path}/s.sqlite3")
    assert settings.providers_file == bundled.PROVIDERS_FILE
    listed = yaml.safe_load(bundled.PROVIDERS_FILE.read_text())["providers"]
    assert {"openai", "anthropic", "openrouter", "ollama"} <= set(listed)


def _locked(lock: str) -> dict[str, str]:
    """name (normalised, extras kept) -> version, from a lock's pins."""
    found = re.findall(r"^([A-Za-z0-9_.\-]+(?:\[[a-z0-9_,\-]+\])?)==(\S+)", lock, re.MULTILINE)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in found}


def test_every_extra_a_locked_package_asks_for_is_pinned_in_both_locks() -> None:
    """pip treats ``httpx[http2]`` (asked for by litellm) as a package the lock's
    ``httpx==…`` does not pin: with a newer httpx on the index, installing the lock
    failed (2026-12-02). scripts/lock_extras.py pins each such extra; this finds one it
    does not list, from the installed packages' own metadata."""
    import importlib.metadata

    from packaging.requirements import Requirement

    for lock_file in ("requirements.lock", "requirements-dev.lock"):
        locked = _locked((REPOSITORY_ROOT / lock_file).read_text())
        wanted: set[str] = set()
        for dist in importlib.metadata.distributions():
            name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
            if name not in locked or name == "smriti":
                continue
            for text in dist.requires or []:
                requirement = Requirement(text)
                marker = requirement.marker
                # A requirement of one of the package's own extras is not asked for.
                if marker is not None and "extra" in str(marker):
                    continue
                base = re.sub(r"[-_.]+", "-", requirement.name).lower()
                if requirement.extras and base in locked:
                    wanted |= {f"{base}[{extra}]" for extra in requirement.extras}
        assert wanted, lock_file  # litellm's httpx[http2] at least
        missing = sorted(key for key in wanted if key not in locked)
        assert missing == [], f"{lock_file}: add to EXTRAS in scripts/lock_extras.py"
        for key in wanted:
            assert locked[key] == locked[key.split("[")[0]], key
