"""Sign-in limits an attacker cannot turn against a user (issue 16, section 2).

Failures count per (name, address) and per address, in the database: every
worker and every restart sees them. A name attacked from many addresses
makes sign-ins from new addresses wait longer and longer, never its owner's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.domain.sign_in import SignInCounts, SignInLimits, name_delay, retry_after, sign_in_key
from api.services import accounts
from api.settings import Settings
from api.store import models
from tests.accounts.world import BASE_URL, PASSWORD

ORIGIN = {"Origin": BASE_URL}
LIMIT = 3


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Starlette]:
    app = create_app(dataclasses.replace(settings, auth="accounts", sign_in_failures=LIMIT))
    async with app.router.lifespan_context(app):
        yield app


async def sign_in(app: Starlette, address: str, name: str, password: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
        return await http.post(
            "/auth/login", json={"name": name, "password": password}, headers=ORIGIN
        )


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits sign-ins were made to take (recorded, not slept)."""
    waited: list[float] = []

    async def pause(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(accounts, "_pause", pause)
    return waited


async def test_a_name_attacked_from_many_addresses_slows_down_but_its_owner_signs_in(
    settings: Settings, pauses: list[float]
) -> None:
    async with running(settings) as app:
        await accounts.add_user("root", PASSWORD, is_admin=True)
        home = "192.0.2.10"
        assert (await sign_in(app, home, "root", PASSWORD)).status_code == 200
        # Ten addresses, one wrong guess each (each under the per-address limit).
        wrong = [
            (await sign_in(app, f"198.51.100.{n}", "root", "a wrong guess")).status_code
            for n in range(10)
        ]
        assert wrong == [401] * 10
        # From the third failure on, each guess from a new address waits twice as long.
        assert pauses == [1, 2, 4, 8, 16, 30, 30]
        # The owner at home signs in at once, the right password from anywhere still works.
        pauses.clear()
        assert (await sign_in(app, home, "root", PASSWORD)).status_code == 200
        assert pauses == []
        assert (await sign_in(app, "203.0.113.7", "root", PASSWORD)).status_code == 200
        assert pauses == [30]


async def test_an_address_is_locked_for_a_name_then_for_every_name(
    settings: Settings, pauses: list[float]
) -> None:
    async with running(settings) as app:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        attacker = "198.51.100.1"
        for _ in range(LIMIT):
            assert (await sign_in(app, attacker, "ada", "a wrong guess")).status_code == 401
        locked = await sign_in(app, attacker, "ada", PASSWORD)
        assert locked.status_code == 429
        assert 899 <= int(locked.headers["retry-after"]) <= 900
        # The same address is locked for every name (its failures reached the limit)...
        assert (await sign_in(app, attacker, "someone", "x")).status_code == 429
        # ...while ada, from her own address, signs in.
        assert (await sign_in(app, "192.0.2.10", "ada", PASSWORD)).status_code == 200


async def test_the_counts_hold_across_workers_and_restarts(
    settings: Settings, pauses: list[float]
) -> None:
    attacker = "198.51.100.2"
    async with running(settings) as first, running(settings) as second:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        for _ in range(LIMIT):
            assert (await sign_in(first, attacker, "ada", "a wrong guess")).status_code == 401
        assert (await sign_in(second, attacker, "ada", PASSWORD)).status_code == 429
    async with running(settings) as restarted:
        assert (await sign_in(restarted, attacker, "ada", PASSWORD)).status_code == 429
        assert (await sign_in(restarted, "192.0.2.11", "ada", PASSWORD)).status_code == 200


async def test_an_admin_sees_and_clears_the_failures(
    settings: Settings, pauses: list[float]
) -> None:
    async with running(settings) as app:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        for address in ("198.51.100.3", "198.51.100.3", "198.51.100.4"):
            assert (await sign_in(app, address, "Ada", "a wrong guess")).status_code == 401
        assert (await sign_in(app, "198.51.100.4", "nobody", "x")).status_code == 401
        limits = SignInLimits(limit=LIMIT)
        seen = [(f.name, f.address, f.failures) for f in await accounts.sign_in_failures(limits)]
        assert sorted(seen) == [
            ("ada", "198.51.100.3", 2),
            ("ada", "198.51.100.4", 1),
            ("nobody", "198.51.100.4", 1),
        ]
        assert await accounts.clear_sign_in_failures(name="ADA") == 2
        assert [f.name for f in await accounts.sign_in_failures(limits)] == ["nobody"]
        assert await accounts.clear_sign_in_failures(address="198.51.100.4") == 1
        assert await accounts.sign_in_failures(limits) == []
        # Rows that remember only old failures are forgotten at the next failure.
        await models.SignIn.all().update(last_failed_at=datetime.now(UTC) - timedelta(hours=1))
        assert (await sign_in(app, "198.51.100.5", "x", "y")).status_code == 401
        assert await models.SignIn.filter(signed_in_at__isnull=True).count() == 1


def test_the_wait_doubles_past_the_limit_up_to_its_cap() -> None:
    limits = SignInLimits(limit=10, max_delay=30)
    assert [name_delay(n, limits) for n in (0, 9, 10, 11, 12, 14, 15, 100)] == [
        0,
        0,
        1,
        2,
        4,
        16,
        30,
        30,
    ]
    assert sign_in_key("\uff21\uff44\uff41") == sign_in_key("ADA") == "ada"


def test_retry_after_counts_from_the_failure_that_ages_out() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    limits = SignInLimits(limit=3, window=timedelta(minutes=15))
    assert retry_after(SignInCounts(pair_failures=2, pair_last_failed=now), limits, now) == 0
    pair = SignInCounts(pair_failures=3, pair_last_failed=now - timedelta(seconds=100))
    assert retry_after(pair, limits, now) == 800
    address = SignInCounts(
        address_failures=5, address_oldest_failed=now - timedelta(seconds=899, microseconds=1)
    )
    assert retry_after(address, limits, now) == 1


FAILURES = "query { signInFailures { name address failures lastFailedAt } }"
CLEAR = (
    "mutation($n: String, $a: String) { clearSignInFailures(input: {name: $n, address: $a}) "
    "{ cleared errors { code message field } } }"
)


async def test_over_graphql_an_admin_sees_and_clears_them_and_no_one_else(
    settings: Settings, pauses: list[float]
) -> None:
    from tests.accounts.world import accounts_app

    async with accounts_app(settings) as world:
        attacker = httpx.ASGITransport(app=world.app, client=("198.51.100.9", 40000))
        async with httpx.AsyncClient(transport=attacker, base_url=BASE_URL) as http:
            for _ in range(2):
                await http.post(
                    "/auth/login", json={"name": "Other", "password": "guess"}, headers=ORIGIN
                )
        seen = await world.data("owner", FAILURES)
        assert [(f["name"], f["address"], f["failures"]) for f in seen["signInFailures"]] == [
            ("other", "198.51.100.9", 2)
        ]
        assert await world.data("other", FAILURES) == {"signInFailures": []}
        refused = await world.data("other", CLEAR, n="other")
        assert refused == {
            "clearSignInFailures": {
                "cleared": 0,
                "errors": [
                    {
                        "code": "FORBIDDEN",
                        "message": "Only an admin clears failed sign-ins.",
                        "field": None,
                    }
                ],
            }
        }
        unsaid = await world.data("owner", CLEAR)
        assert unsaid["clearSignInFailures"]["errors"][0]["message"] == (
            "Say whose failures to clear: a user name or an address."
        )
        cleared = await world.data("owner", CLEAR, a="198.51.100.9")
        assert cleared == {"clearSignInFailures": {"cleared": 1, "errors": []}}
        assert await world.data("owner", FAILURES) == {"signInFailures": []}
