"""Provider reachability (issue 17): checked lazily, in the background, cached.

``status`` never waits for a check: the first answer is CHECKING, later ones
are the last check's until it is older than the ttl, when the next question
starts another (one at a time per address) and still gets the old answer.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from api.providers import ProviderRegistry, Reachability, ReachabilityCache, parse_config
from api.providers.reachability import address_of, connect
from tests.support.fake_ollama import FakeOllama

R = Reachability


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_nothing_listening_is_unreachable_once_checked() -> None:
    cache = ReachabilityCache()
    address = ("127.0.0.1", closed_port())

    first = cache.status(address)
    await cache.settled()

    assert (first, cache.status(address)) == (R.CHECKING, R.UNREACHABLE)


async def test_a_server_up_is_reachable_once_checked() -> None:
    cache = ReachabilityCache()
    with FakeOllama() as ollama:
        address = ("127.0.0.1", int(ollama.base_url.rsplit(":", 1)[1]))
        first = cache.status(address)
        await cache.settled()

        assert (first, cache.status(address)) == (R.CHECKING, R.REACHABLE)
        assert ollama.paths == []  # a connection, not a request


async def test_connect_says_whether_a_port_listens() -> None:
    with FakeOllama() as ollama:
        port = int(ollama.base_url.rsplit(":", 1)[1])
        assert await connect("127.0.0.1", port, 2.0) is True
    assert await connect("127.0.0.1", closed_port(), 2.0) is False


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class HeldProbe:
    """A probe that answers only when released, counting its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self.answer = True
        self.release = asyncio.Event()

    async def __call__(self, host: str, port: int, timeout: float) -> bool:
        self.calls.append((host, port))
        await self.release.wait()
        self.release.clear()
        return self.answer


async def test_status_never_waits_and_checks_once_per_address_per_ttl() -> None:
    probe, clock = HeldProbe(), Clock()
    cache = ReachabilityCache(ttl=15, probe=probe, clock=clock)
    address = ("lab.test", 8080)

    asked = [cache.status(address) for _ in range(5)]  # the check is held: nothing waits
    await asyncio.sleep(0)
    probe.release.set()
    await cache.settled()
    clock.now += 14.9
    fresh = cache.status(address)

    assert asked == [R.CHECKING] * 5
    assert probe.calls == [("lab.test", 8080)]
    assert fresh is R.REACHABLE
    assert probe.calls == [("lab.test", 8080)]  # within the ttl: no new check


async def test_a_stale_answer_is_given_while_the_next_check_runs() -> None:
    probe, clock = HeldProbe(), Clock()
    cache = ReachabilityCache(ttl=15, probe=probe, clock=clock)
    address = ("lab.test", 8080)
    cache.status(address)
    await asyncio.sleep(0)
    probe.release.set()
    await cache.settled()

    clock.now += 15
    probe.answer = False  # the server went away
    while_checking = cache.status(address)
    await asyncio.sleep(0)
    probe.release.set()
    await cache.settled()

    assert while_checking is R.REACHABLE
    assert cache.status(address) is R.UNREACHABLE
    assert len(probe.calls) == 2


@pytest.mark.parametrize("started", [True, False])
async def test_close_cancels_the_checks_under_way(started: bool) -> None:
    probe = HeldProbe()
    cache = ReachabilityCache(probe=probe)
    cache.status(("lab.test", 8080))
    if started:
        await asyncio.sleep(0)

    cache.close()
    await asyncio.wait_for(cache.settled(), 5)  # a check cancelled before it ran counts too

    assert probe.calls == ([("lab.test", 8080)] if started else [])
    assert cache.status(("lab.test", 8080)) is R.CHECKING  # never answered: asked again
    cache.close()


def test_without_an_event_loop_status_starts_nothing() -> None:
    probe = HeldProbe()
    cache = ReachabilityCache(probe=probe)

    assert cache.status(("lab.test", 8080)) is R.CHECKING
    assert probe.calls == []


CONFIG = parse_config(
    "providers:\n"
    "  openai: {api_key_env: OPENAI_API_KEY, models: [gpt-4o-mini]}\n"
    "  ollama: {models: [llama3.1]}\n"
    '  lab: {litellm_provider: openai, api_base: "http://127.0.0.1:8080/v1", models: [m]}\n'
    '  tls: {litellm_provider: openai, api_base: "https://llm.example.test/v1", models: [m]}\n'
)


def test_what_is_checked_is_the_api_base_or_ollamas_local_default() -> None:
    providers = CONFIG.providers

    assert address_of(providers["offline"]) is None
    assert address_of(providers["openai"]) is None  # hosted: not checked
    assert address_of(providers["ollama"]) == ("localhost", 11434)
    assert address_of(providers["lab"]) == ("127.0.0.1", 8080)
    assert address_of(providers["tls"]) == ("llm.example.test", 443)


@pytest.mark.parametrize(
    ("provider", "expected"),
    [("offline", R.REACHABLE), ("openai", R.NOT_CHECKED), ("lab", R.CHECKING)],
)
async def test_the_registry_answers_per_provider(provider: str, expected: Reachability) -> None:
    probe = HeldProbe()
    registry = ProviderRegistry(CONFIG, env={}, reachability=ReachabilityCache(probe=probe))

    assert registry.reachability(provider) is expected
    registry.reachability_checks.close()
