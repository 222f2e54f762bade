"""X-Forwarded-For / X-Forwarded-Proto through `smriti serve`: believed only from
the proxies the operator names with --forwarded-allow-ips (default: none).

A client on loopback (uvicorn believes 127.0.0.1 by default) could otherwise
name a new address for each guess, so the per-address sign-in limit never
counted it, and make the session cookie Secure over plain HTTP.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from api.store.database import sqlite_url
from tests.support.servers import SmritiServer, add_user

pytestmark = pytest.mark.database_neutral

PASSWORD = "a long passphrase 7f3c"
FAILURES = 10  # Settings.sign_in_failures: per address within the window


def sign_in(server: SmritiServer, name: str, password: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.base_url}/auth/login",
        json={"name": name, "password": password},
        headers={"Origin": server.base_url, **headers},
    )


def forged_guesses(server: SmritiServer) -> list[int]:
    """FAILURES wrong sign-ins, each claiming an address of its own, then one more."""
    statuses = [
        sign_in(
            server, f"guess{n}", "wrong password", **{"X-Forwarded-For": f"203.0.113.{n}"}
        ).status_code
        for n in range(FAILURES + 1)
    ]
    return statuses


@pytest.mark.parametrize(
    ("args", "believed"),
    [((), False), (("--forwarded-allow-ips", "127.0.0.1"), True)],
    ids=["no-proxy-named", "loopback-proxy-named"],
)
def test_forwarded_headers_only_from_a_named_proxy(
    tmp_path: Path, args: tuple[str, ...], believed: bool
) -> None:
    url = sqlite_url(tmp_path / "db.sqlite3")
    add_user(url, "ada", PASSWORD)
    with SmritiServer(url, args=args) as server:
        signed = sign_in(server, "ada", PASSWORD, **{"X-Forwarded-Proto": "https"})
        assert signed.status_code == 200
        assert ("Secure" in signed.headers["set-cookie"]) is believed
        statuses = forged_guesses(server)
    if believed:
        # Each forged address is counted on its own: the proxy vouches for them.
        assert statuses == [401] * (FAILURES + 1)
    else:
        # Every guess counts against the one real address: the last is refused.
        assert statuses == [401] * FAILURES + [429]


def test_a_malformed_proxy_address_stops_start_up(tmp_path: Path) -> None:
    server = SmritiServer(
        sqlite_url(tmp_path / "db.sqlite3"), args=("--forwarded-allow-ips", "127.0.0.1,proxy")
    )
    refused = server.failed_start()
    assert (refused.returncode, refused.stderr.strip().splitlines()[-1]) == (
        2,
        "smriti: --forwarded-allow-ips (SMRITI_FORWARDED_ALLOW_IPS) takes addresses, "
        "networks like 10.0.0.0/8, or \"*\" alone, not 'proxy'.",
    )


def test_the_environment_names_the_proxies_too() -> None:
    from api.settings import Settings

    named = Settings.from_environment({"SMRITI_FORWARDED_ALLOW_IPS": " 10.0.0.0/8, ::1 "})
    assert named.forwarded_allow_ips == ("10.0.0.0/8", "::1")
    assert Settings.from_environment({}).forwarded_allow_ips == ()
    flag = Settings.from_environment(
        {"SMRITI_FORWARDED_ALLOW_IPS": "10.0.0.1"}, forwarded_allow_ips="*"
    )
    assert flag.forwarded_allow_ips == ("*",)
