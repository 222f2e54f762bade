"""Smriti installed as a user installs it: a wheel, into a fresh venv outside the
repository, with the dependencies of ``requirements.lock`` alone.

The dependencies (about 30 s to install, 440 MB) are kept in
``.cache/runtime-deps-<hash of the lock and the Python>``, built once per lock;
each run builds the wheel (about 1 s) and installs it, with no dependency, into a
venv of its own (under a second), which sees the kept dependencies through a
``.pth`` file. So nothing of the repository is on the installed Smriti's path:
not the ``api`` folder, not the web UI, not providers.yaml.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.support.repository import REPOSITORY_ROOT

LOCK = REPOSITORY_ROOT / "requirements.lock"
# What the build reads (pyproject.toml's package-dir, package data and readme).
# api/static/vendor is git-ignored: a wheel holds GraphiQL's assets when
# scripts/fetch-graphiql-assets has put them there, as `make` does.
BUILD_INPUTS = ("pyproject.toml", "README.md", "providers.yaml", "webui", "api")
HASHED = ("--require-hashes", "-r", str(LOCK))
# The build backend is the dev lock's setuptools, pinned: nothing is fetched.
NOTHING_ELSE = ("--no-deps", "--no-build-isolation")


def clean_environment() -> dict[str, str]:
    """This environment without what would put the repository on a path."""
    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    }


def base_python() -> str:
    return getattr(sys, "_base_executable", sys.executable)


def site_packages(venv: Path) -> Path:
    version = sysconfig.get_python_version()
    return venv / "lib" / f"python{version}" / "site-packages"


def runtime_dependencies() -> Path:
    """The site-packages of a venv holding requirements.lock, hash-checked, and
    nothing else (built at first use, rebuilt when the lock changes)."""
    key = hashlib.sha256(LOCK.read_bytes())
    key.update(sys.version.encode())
    target = REPOSITORY_ROOT / ".cache" / f"runtime-deps-{key.hexdigest()[:16]}"
    if not (target / "bin" / "python").exists():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        env = clean_environment()
        subprocess.run([base_python(), "-m", "venv", str(partial)], check=True, env=env)
        subprocess.run(
            [str(partial / "bin" / "python"), "-m", "pip", "install", "--quiet", *HASHED],
            check=True,
            env=env,
        )
        partial.rename(target)
        # Built from a lock that has changed since, or the editable runtime-venv-*
        # this module replaced.
        for stale in [*target.parent.glob("runtime-deps-*"), *target.parent.glob("runtime-venv-*")]:
            if stale != target:
                shutil.rmtree(stale, ignore_errors=True)
    return site_packages(target)


def build_wheel(workdir: Path) -> Path:
    """A wheel of the working tree, built from a copy of what the build reads (the
    repository gets no build/ or egg-info), as ``pip wheel`` builds a clone."""
    source = workdir / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        origin = REPOSITORY_ROOT / name
        if origin.is_dir():
            # symlinks=True: api/webui stays a link to ../webui, as in a clone.
            shutil.copytree(
                origin,
                source / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
        else:
            shutil.copy2(origin, source / name)
    dist = workdir / "dist"
    pip = (sys.executable, "-m", "pip")
    subprocess.run(
        [*pip, "wheel", "--quiet", *NOTHING_ELSE, "--wheel-dir", str(dist), str(source)],
        check=True,
        env=clean_environment(),
        cwd=workdir,
    )
    (wheel,) = dist.glob("smriti-*.whl")
    return wheel


def install(wheel: Path, venv: Path, dependencies: Path) -> Path:
    """A new venv holding the wheel (installed by this environment's pip, with no
    dependency) and seeing ``dependencies``; its bin directory."""
    env = clean_environment()
    subprocess.run([base_python(), "-m", "venv", "--without-pip", str(venv)], check=True, env=env)
    pip = (sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"))
    subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", str(wheel)],
        check=True,
        env=env,
    )
    (site_packages(venv) / "_runtime_dependencies.pth").write_text(f"{dependencies}\n")
    return venv / "bin"
