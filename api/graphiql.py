"""Strawberry's GraphiQL page, pointed at local copies of its assets when they exist.

The page's own inline script is allowed by its hash in the Content-Security-Policy
built by :func:`content_security_policy`, so no other inline script can run.

The page loads React, GraphiQL and its plugins from a CDN, each pinned by an SRI
``integrity`` hash, so offline it stays blank. ``scripts/fetch-graphiql-assets``
downloads exactly the files the page names from the npm registry into
:data:`VENDOR_DIR`, checked against those hashes, at install time. When every one
is there the page is served with only its asset URLs changed (the integrity
attributes stay and still match); when any is missing the page is left as it is.

Standard library only: the fetch script imports this module before anything else
is known to be installed.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from .bundled import GRAPHIQL_VENDOR_DIR

VENDOR_DIR = GRAPHIQL_VENDOR_DIR
VENDOR_URL = "/static/vendor"

# npm CDNs that serve a package's files at <prefix><name>@<version>/<path>.
_CDN_FILE = re.compile(
    r"^https://(?:unpkg\.com|cdn\.jsdelivr\.net/npm)/"
    r"(?P<package>(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)"
    r"@(?P<version>\d[\w.+-]*)/(?P<path>[\w@.+-]+(?:/[\w@.+-]+)*)$"
)


class AssetError(ValueError):
    """The page names an external asset this module cannot pin to an npm file."""


@dataclass(frozen=True)
class Asset:
    """One file the page loads from a CDN."""

    url: str  # exactly as the page names it
    package: str  # npm name, e.g. "@graphiql/plugin-explorer"
    version: str
    path: str  # inside the package, e.g. "dist/style.css"
    integrity: str  # the page's SRI attribute, e.g. "sha384-…"

    @property
    def local_path(self) -> str:
        """Where the copy lives under VENDOR_DIR (and is served under VENDOR_URL)."""
        return f"{self.package}@{self.version}/{self.path}"


class _ExternalAssets(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        url = named.get("src") if tag == "script" else named.get("href") if tag == "link" else None
        if url and url.startswith(("http://", "https://", "//")):
            self.found.append((url, named.get("integrity")))


def assets(page: str) -> list[Asset]:
    """Every external script and stylesheet of the page, in page order.

    Raises AssetError for one that is not an npm file pinned by version and hash:
    such a page cannot be served from verified local copies.
    """
    parser = _ExternalAssets()
    parser.feed(page)
    parser.close()
    found: list[Asset] = []
    for url, integrity in parser.found:
        match = _CDN_FILE.match(url)
        if match is None:
            raise AssetError(f"{url}: not a versioned npm file on a known CDN")
        if not integrity:
            raise AssetError(f"{url}: the page gives no integrity hash")
        if ".." in match["path"].split("/"):
            raise AssetError(f"{url}: path leaves the package")
        found.append(Asset(url, match["package"], match["version"], match["path"], integrity))
    return found


def local_page(page: str, vendor_dir: Path = VENDOR_DIR) -> str | None:
    """The page loading every asset from VENDOR_URL, or None when any copy is missing
    (or the page names an asset that cannot be copied)."""
    try:
        needed = assets(page)
    except AssetError:
        return None
    if not needed or not all((vendor_dir / a.local_path).is_file() for a in needed):
        return None
    for asset in needed:
        page = page.replace(f'"{asset.url}"', f'"{VENDOR_URL}/{asset.local_path}"')
    return page


class _InlineScripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._inside: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script" and dict(attrs).get("src") is None:
            self._inside = []

    def handle_data(self, data: str) -> None:
        if self._inside is not None:
            self._inside.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._inside is not None:
            self.found.append("".join(self._inside))
            self._inside = None


def inline_script_hashes(page: str) -> list[str]:
    """CSP sources ('sha256-…') for each inline script of the page, in page order."""
    parser = _InlineScripts()
    parser.feed(page)
    parser.close()
    return [
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
        for s in parser.found
    ]


def content_security_policy(page: str) -> str:
    """The page's policy: scripts only from this server (or the CDN the page names,
    when it is not served on local copies) and its own inline script by hash.

    Styles may be inline: GraphiQL and React set style attributes as they render.
    """
    try:
        cdns = sorted({a.url.split("/", 3)[2] for a in assets(page)})
    except AssetError:
        cdns = []
    remote = "".join(f" https://{host}" for host in cdns)
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self'{remote} {' '.join(inline_script_hashes(page))}".rstrip(),
            f"style-src 'self'{remote} 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


# Loaded after GraphiQL's own scripts and before the page's inline one, which
# makes the fetcher: it sends each operation as the document says (see the file).
FETCHER_SCRIPT = '<script src="/graphiql-fetcher.js"></script>'

NOTEBOOK_LINK = (
    '<link rel="stylesheet" href="/graphiql-home.css">',
    '<a id="smriti-home" href="/">\u2190 Back to the notebook</a>',
)


def with_notebook_link(page: str) -> str:
    """The page with a link back to the notebook (styled by a same-origin stylesheet)
    and Smriti's fetcher script, just before the page's inline script."""
    stylesheet, link = NOTEBOOK_LINK
    return (
        page.replace("</head>", f"{stylesheet}\n</head>", 1)
        .replace("<body>", f"<body>\n{link}", 1)
        .replace("<script>", f"{FETCHER_SCRIPT}\n<script>", 1)
    )
