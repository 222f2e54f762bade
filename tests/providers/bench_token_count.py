"""How much ``ProviderRegistry.count_tokens`` costs: it runs for every stored turn.

    python -m tests.providers.bench_token_count

Prints the one-off costs (importing LiteLLM, loading a tokenizer on a model's
first count) and the steady per-call time for turns of 200, 2,000 and 20,000
characters, through the registry (name resolution included), per tokenizer
family. Not collected by pytest: the numbers are for reading, not asserting.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from api.providers import ProviderRegistry, parse_config

CONFIG = """\
providers:
  openai: {api_key_env: OPENAI_API_KEY, models: [gpt-4o-mini]}
  anthropic: {api_key_env: ANTHROPIC_API_KEY, models: [claude-sonnet-4-5]}
  lab: {litellm_provider: openai, api_base: "http://127.0.0.1:1/v1", models: [my-model]}
"""
MODELS = ("offline/echo", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "lab/my-model")
SIZES = (200, 2_000, 20_000)
CALLS = 200
PROSE = "Smriti keeps what was concluded as a versioned checkpoint; tokens are counted. "


def main() -> None:
    registry = ProviderRegistry(parse_config(CONFIG), env={})
    started = time.perf_counter()
    registry.count_tokens("warm up", "offline/echo")
    print(f"first call (imports LiteLLM, loads a tokenizer): {_ms(time.perf_counter() - started)}")
    for model in MODELS[1:]:
        started = time.perf_counter()
        registry.count_tokens("first", model)
        print(f"first call for {model}: {_ms(time.perf_counter() - started)}")
    print(f"\nsteady state, median of {CALLS} calls (distinct texts, so nothing is memoised):")
    print(f"{'model':32}" + "".join(f"{size:>12,} ch" for size in SIZES))
    for model in MODELS:
        row = []
        for size in SIZES:
            text = (PROSE * (size // len(PROSE) + 1))[:size]
            times = []
            for n in range(CALLS):
                started = time.perf_counter()
                registry.count_tokens(f"{n} {text}", model)
                times.append(time.perf_counter() - started)
            row.append(statistics.median(times))
        print(f"{model:32}" + "".join(f"{_ms(t):>15}" for t in row))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


if __name__ == "__main__":
    main()
