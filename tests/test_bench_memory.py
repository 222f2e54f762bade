"""The provider stubs of the benchmarks and tests keep a connection LiteLLM may reuse."""

from __future__ import annotations

from litellm.constants import AIOHTTP_KEEPALIVE_TIMEOUT

from bench.memory import provider_config
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_provider import KEEP_ALIVE_S


def test_the_stubs_keep_idle_connections_longer_than_litellms_pool_reuses_them() -> None:
    # A stub that closes an idle connection before LiteLLM's pool stops reusing it
    # (uvicorn's default, 5 s, against 15 s) now and then fails a call that took the
    # connection as it closed: python -m bench.memory --db postgres stopped on one.
    assert AIOHTTP_KEEPALIVE_TIMEOUT == 15
    assert KEEP_ALIVE_S == 75
    assert provider_config(0).timeout_keep_alive == KEEP_ALIVE_S
    with FakeOpenAI() as fake:
        assert fake._server is not None
        assert fake._server.config.timeout_keep_alive == KEEP_ALIVE_S
