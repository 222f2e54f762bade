"""GraphiQL on local copies of its assets when all are fetched, on the CDN otherwise."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import httpx
import pytest
from strawberry.http.ides import get_graphql_ide_html

from api.app import create_app
from api.graphiql import (
    VENDOR_URL,
    Asset,
    AssetError,
    assets,
    content_security_policy,
    inline_script_hashes,
    local_page,
    with_notebook_link,
)
from api.settings import Settings

PAGE = """<html><head>
<link rel="icon" href="data:image/svg+xml,<svg></svg>" />
<script crossorigin src="https://unpkg.com/react@18.2.0/umd/react.production.min.js"
  integrity="sha384-AAAA"></script>
<link crossorigin rel="stylesheet" href="https://unpkg.com/@graphiql/plugin-explorer@1.0.2/dist/style.css"
  integrity="sha384-BBBB" />
</head><body><script>const x = "https://unpkg.com/not-an-asset@1.0.0/x.js";</script></body></html>"""

REACT = Asset(
    url="https://unpkg.com/react@18.2.0/umd/react.production.min.js",
    package="react",
    version="18.2.0",
    path="umd/react.production.min.js",
    integrity="sha384-AAAA",
)
EXPLORER = Asset(
    url="https://unpkg.com/@graphiql/plugin-explorer@1.0.2/dist/style.css",
    package="@graphiql/plugin-explorer",
    version="1.0.2",
    path="dist/style.css",
    integrity="sha384-BBBB",
)


def put(vendor: Path, *found: Asset) -> None:
    for asset in found:
        (vendor / asset.local_path).parent.mkdir(parents=True, exist_ok=True)
        (vendor / asset.local_path).write_text(f"/* {asset.package} */")


def test_the_assets_of_a_page_are_its_external_scripts_and_stylesheets() -> None:
    assert assets(PAGE) == [REACT, EXPLORER]
    assert EXPLORER.local_path == "@graphiql/plugin-explorer@1.0.2/dist/style.css"


@pytest.mark.parametrize(
    ("tag", "problem"),
    [
        ('<script src="https://cdn.example/react.js" integrity="sha384-A"></script>', "known CDN"),
        (
            '<script src="https://unpkg.com/react/umd/react.js" integrity="sha384-A"></script>',
            "known CDN",
        ),
        ('<script src="https://unpkg.com/react@18.2.0/umd/react.js"></script>', "no integrity"),
        (
            '<link rel="stylesheet" href="https://unpkg.com/x@1.0.0/a/../../b.css" integrity="sha384-A">',
            "leaves",
        ),
    ],
)
def test_an_asset_that_cannot_be_pinned_is_refused(tag: str, problem: str) -> None:
    with pytest.raises(AssetError, match=problem):
        assets(f"<html><head>{tag}</head></html>")


def test_strawberrys_page_names_only_pinned_npm_files() -> None:
    found = assets(get_graphql_ide_html("graphiql"))
    names = {a.package for a in found}
    assert {"react", "react-dom", "graphiql"} <= names
    assert all(a.integrity.startswith(("sha256-", "sha384-", "sha512-")) for a in found)


def test_the_local_page_differs_only_in_asset_urls(tmp_path: Path) -> None:
    put(tmp_path, REACT, EXPLORER)
    page = local_page(PAGE, tmp_path)
    assert page == PAGE.replace("https://unpkg.com/", f"{VENDOR_URL}/").replace(
        f"{VENDOR_URL}/not-an-asset", "https://unpkg.com/not-an-asset"
    )


def test_without_every_asset_there_is_no_local_page(tmp_path: Path) -> None:
    put(tmp_path, REACT)
    assert local_page(PAGE, tmp_path) is None
    assert local_page("<html>no assets</html>", tmp_path) is None


async def get(settings: Settings, vendor: Path, *paths: str) -> list[httpx.Response]:
    """GET each path, as a browser would, from an app using this vendor directory."""
    app = create_app(settings, graphiql_vendor_dir=vendor)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://smriti.test") as http:
            return [await http.get(path, headers={"Accept": "text/html"}) for path in paths]


async def test_the_app_serves_graphiql_from_local_copies_when_all_are_there(
    settings: Settings, tmp_path: Path
) -> None:
    strawberry_page = get_graphql_ide_html("graphiql")
    vendor = tmp_path / "vendor"
    put(vendor, *assets(strawberry_page))
    page, served = await get(settings, vendor, "/graphql", f"{VENDOR_URL}/{REACT.local_path}")
    assert page.status_code == 200
    assert page.text == with_notebook_link(local_page(strawberry_page, vendor) or "")
    assert "https://unpkg.com/" not in page.text
    for asset in assets(strawberry_page):
        assert f'"{VENDOR_URL}/{asset.local_path}"' in page.text
        assert f'integrity="{asset.integrity}"' in page.text
    assert served.status_code == 200
    assert served.text == "/* react */"


async def test_the_app_falls_back_to_strawberrys_cdn_page_when_an_asset_is_missing(
    settings: Settings, tmp_path: Path
) -> None:
    strawberry_page = get_graphql_ide_html("graphiql")
    vendor = tmp_path / "vendor"
    put(vendor, *assets(strawberry_page)[1:])
    page, missing = await get(settings, vendor, "/graphql", f"{VENDOR_URL}/{REACT.local_path}")
    assert page.status_code == 200
    assert page.text == with_notebook_link(strawberry_page)
    assert '<a id="smriti-home" href="/">' in page.text
    assert missing.status_code == 404


def test_the_policy_allows_the_pages_inline_script_by_its_hash_and_nothing_inline_else() -> None:
    page = "<html><head><script>let a = 1;</script><script src='/x.js'></script></head></html>"
    assert inline_script_hashes(page) == [
        "'sha256-" + base64.b64encode(hashlib.sha256(b"let a = 1;").digest()).decode() + "'"
    ]
    policy = content_security_policy(page).split("; ")
    assert policy == [
        "default-src 'self'",
        f"script-src 'self' {inline_script_hashes(page)[0]}",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]


async def test_the_graphiql_page_carries_its_own_policy(settings: Settings, tmp_path: Path) -> None:
    strawberry_page = get_graphql_ide_html("graphiql")
    vendor = tmp_path / "vendor"
    put(vendor, *assets(strawberry_page))
    local, asset = await get(settings, vendor, "/graphql", f"{VENDOR_URL}/{REACT.local_path}")
    (vendor / REACT.local_path).unlink()
    [cdn] = await get(settings, vendor, "/graphql")

    [inline] = inline_script_hashes(strawberry_page)
    assert f"script-src 'self' {inline};" in local.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in local.headers["content-security-policy"]
    assert local.headers["x-content-type-options"] == "nosniff"
    assert asset.headers["x-content-type-options"] == "nosniff"
    # On the CDN page, the CDN's scripts (each pinned by its integrity hash) are allowed.
    assert (
        f"script-src 'self' https://unpkg.com {inline};" in cdn.headers["content-security-policy"]
    )
