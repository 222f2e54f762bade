"""Is anything listening where a provider lives? Asked lazily, answered from a cache.

A provider with a key can still be down: Ollama not started, a lab server on
another port. ``ReachabilityCache.status`` says what the last check found and
never waits for a check: a request that asks starts one in the background when
there is none or the last is older than ``ttl`` seconds, and meanwhile gets the
last answer (``CHECKING`` before the first one). A check opens a TCP connection
to the provider's address and closes it: something listening there is
``REACHABLE``; refused, timed out or a name that does not resolve is
``UNREACHABLE``. It says nothing of whether the server there answers chat
requests well; a call does, and its failure is a typed error as always.

What is checked (``address_of``): the provider's ``api_base``, or LiteLLM's
default address where that is on the user's own machine (Ollama's
``localhost:11434``). A hosted API at LiteLLM's default address (OpenAI,
Anthropic, OpenRouter) is ``NOT_CHECKED``: whether it is reachable is a
question about the internet connection, which the first call answers. The
built-in offline provider answers in process: always ``REACHABLE``.

The cache is per process: each worker of ``smriti serve --workers N`` checks
for itself, at most once per address per ``ttl``, whatever the number of
requests asking.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from .config import ProviderConfig

# Seconds an answer is kept before the next request that asks starts a new check.
DEFAULT_TTL = 15.0
# Seconds a check waits for the connection (a firewall that drops packets).
DEFAULT_TIMEOUT = 2.0
# LiteLLM's address for a route when the provider names no api_base, where
# that address is on the user's machine.
_LOCAL_DEFAULT_BASE = {
    "ollama": "http://localhost:11434",
    "ollama_chat": "http://localhost:11434",
}

Address = tuple[str, int]
Probe = Callable[[str, int, float], Awaitable[bool]]


class Reachability(enum.Enum):
    REACHABLE = "reachable"
    UNREACHABLE = "unreachable"
    CHECKING = "checking"
    NOT_CHECKED = "not_checked"


def address_of(provider: ProviderConfig) -> Address | None:
    """Host and port a check connects to, or None when the provider is not checked."""
    base = provider.api_base or _LOCAL_DEFAULT_BASE.get(provider.litellm_provider)
    if base is None:
        return None
    parts = urlsplit(base)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


async def connect(host: str, port: int, timeout: float) -> bool:
    """True when a TCP connection to ``host:port`` opens within ``timeout`` seconds."""
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError, ValueError):  # ValueError: a name IDNA cannot encode
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


class ReachabilityCache:
    """The last check of each address, and the checks under way (one per address)."""

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = DEFAULT_TIMEOUT,
        probe: Probe = connect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl, self._timeout, self._probe, self._clock = ttl, timeout, probe, clock
        self._answers: dict[Address, tuple[bool, float]] = {}
        self._checks: dict[Address, asyncio.Task[None]] = {}

    def status(self, address: Address) -> Reachability:
        """What the last check of ``address`` found (CHECKING before the first).

        Starts a check in the background when there is none or the last is
        older than the ttl, and never waits for it.
        """
        answer = self._answers.get(address)
        stale = answer is None or self._clock() - answer[1] >= self._ttl
        if stale and address not in self._checks:
            self._start(address)
        if answer is None:
            return Reachability.CHECKING
        return Reachability.REACHABLE if answer[0] else Reachability.UNREACHABLE

    async def settled(self) -> None:
        """Wait for the checks under way (tests)."""
        while self._checks:
            await asyncio.gather(*self._checks.values(), return_exceptions=True)

    def close(self) -> None:
        """Cancel the checks under way (shutdown: nobody is waiting for them)."""
        for task in self._checks.values():
            task.cancel()

    def _start(self, address: Address) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script): nothing runs in the background
            return
        host, port = address
        task = loop.create_task(self._check(address), name=f"reachability {host}:{port}")
        self._checks[address] = task
        # Done, failed or cancelled (even before it started): no longer under way.
        task.add_done_callback(lambda _: self._checks.pop(address, None))

    async def _check(self, address: Address) -> None:
        reachable = await self._probe(*address, self._timeout)
        self._answers[address] = (reachable, self._clock())
