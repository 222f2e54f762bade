"""What LiteLLM's stream costs Smriti per piece and per stream end, alone (issue 19, target 1).

    python -m bench.litellm_stream                         # 100 streams x 20 pieces, every variant
    python -m bench.litellm_stream --streams 200 --pieces 40 --drip 0.1
    python -m bench.litellm_stream --variant adapter --profile   # plus cProfile, by phase

N streams start at once through ``ProviderRegistry.stream`` (the LiteLLM
transport, LiteLLM configured by ``api/providers/litellm/loader.py``) against
the dripping provider (``bench/drip.py``, a process of its own, so its CPU is
not counted). Every piece i of every stream arrives at (i + 1) x drip, so the
streams move in lockstep and a run has three phases, each closed when every
stream has passed it:

    start    the request until the first piece (connect, request, headers)
    pieces   the first piece until the last one: pieces - 1 pieces a stream
    end      the last piece until the stream is over (the finish chunk, the
             usage chunk, [DONE], and whatever LiteLLM does at the end)

Printed per variant: this process's CPU (every thread: LiteLLM builds the whole
answer in worker threads) per piece and per stream end, the median and max time
from a stream's last piece to its end, and the event loop's lag (a 5 ms ticker:
p99 and max of how late it woke). ``--profile`` adds cProfile's top functions of
the pieces and the end phases (the event loop's thread only), per piece / per end.

Variants (each in a fresh process, LiteLLM set up before the streams start):

    adapter      Smriti's transport as it runs: this OpenAI-compatible route's
                 stream read beneath LiteLLM's wrapper (api/providers/litellm/streams.py)
    wrapper      the transport reading the stream through LiteLLM's wrapper, as
                 it does every other route (``READ_BENEATH_WRAPPER = False``)
    quiet        the wrapper with every LiteLLM logging switch off
                 (disable_streaming_logging, turn_off_message_logging, empty
                 callback lists)
    raw          the transport's call, its stream read below LiteLLM's wrapper
                 by a bare loop (``completion_stream``, the OpenAI SDK's chunks):
                 what the adapter's own reading costs over nothing
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MS = 1000.0
TICK = 0.005


def _quiet(litellm: Any) -> None:
    litellm.disable_streaming_logging = True
    litellm.turn_off_message_logging = True
    for name in (
        "callbacks",
        "success_callback",
        "failure_callback",
        "_async_success_callback",
        "_async_failure_callback",
        "service_callback",
        "input_callback",
    ):
        if isinstance(getattr(litellm, name, None), list):
            setattr(litellm, name, [])


def _wrapper(litellm: Any) -> None:
    from api.providers.litellm import transport

    transport.READ_BENEATH_WRAPPER = False


def _quiet_wrapper(litellm: Any) -> None:
    _wrapper(litellm)
    _quiet(litellm)


VARIANTS: dict[str, Callable[[Any], None]] = {
    "adapter": lambda litellm: None,
    "wrapper": _wrapper,
    "quiet": _quiet_wrapper,
    "raw": lambda litellm: None,  # the same call, its OpenAI SDK stream read directly
}


@dataclass
class Result:
    variant: str
    streams: int
    pieces: int
    complete: int
    cpu_ms_per_piece: float
    cpu_ms_per_end: float
    cpu_ms_per_start: float
    end_wait_p50_ms: float
    end_wait_max_ms: float
    lag_p99_ms: float
    lag_max_ms: float
    profile: dict[str, str]


async def _run(variant: str, url: str, streams: int, pieces: int, profile: bool) -> Result:
    from api.domain.types import ChatMessage
    from api.providers import LiteLLMTransport, ProviderRegistry, StreamChunk
    from api.providers.config import parse_config
    from api.providers.litellm import loader

    litellm = await loader.loaded()
    VARIANTS[variant](litellm)
    config = parse_config(
        "chat_default: drip/model\nbackground_intelligence: offline/extractor\n"
        f'providers:\n  drip: {{litellm_provider: openai, api_base: "{url}", models: [model]}}\n'
    )
    registry = ProviderRegistry(config)
    registry.warm_up()
    # One warm stream: the first call's imports and client set-up are not a piece's cost.
    async for _ in registry.stream([ChatMessage("user", "warm")], "drip/model"):
        pass

    loop = asyncio.get_running_loop()
    first = [0.0] * streams
    last = [0.0] * streams
    ended = [0.0] * streams
    counts = [0] * streams
    lags: list[float] = []
    marks: dict[str, float] = {}
    profiles: dict[str, cProfile.Profile] = {}
    waiting = {"first": streams, "last": streams, "end": streams}

    def passed(phase: str) -> None:
        waiting[phase] -= 1
        if waiting[phase] == 0:
            marks[phase] = time.process_time()
            if profile:
                if phase == "first":
                    profiles["pieces"] = cProfile.Profile()
                    profiles["pieces"].enable()
                elif phase == "last":
                    profiles["pieces"].disable()
                    profiles["end"] = cProfile.Profile()
                    profiles["end"].enable()
                else:
                    profiles["end"].disable()

    ref = registry.resolve("drip/model")

    async def raw(messages: list[ChatMessage]) -> AsyncIterator[StreamChunk]:
        request = LiteLLMTransport()._request(messages, ref, None)
        response = await litellm.acompletion(
            **request, stream=True, stream_options={"include_usage": True}
        )
        await response.fetch_stream()
        try:
            async for chunk in response.completion_stream:
                for choice in chunk.choices:
                    if choice.delta.content:
                        yield StreamChunk(choice.delta.content)
        finally:
            await response.aclose()

    async def one(index: int) -> None:
        messages = [ChatMessage("user", f"stream {index}")]
        chunks = raw(messages) if variant == "raw" else registry.stream(messages, "drip/model")
        async for chunk in chunks:
            if chunk.delta:
                counts[index] += 1
                if counts[index] == 1:
                    first[index] = loop.time()
                    passed("first")
                if counts[index] == pieces:
                    last[index] = loop.time()
                    passed("last")
        ended[index] = loop.time()
        passed("end")

    async def ticker() -> None:
        while True:
            before = loop.time()
            await asyncio.sleep(TICK)
            lags.append(loop.time() - before - TICK)

    ticking = asyncio.create_task(ticker())
    marks["start"] = time.process_time()
    await asyncio.gather(*(one(i) for i in range(streams)))
    ticking.cancel()
    complete = sum(1 for c in counts if c == pieces)
    waits = [e - la for e, la in zip(ended, last, strict=True) if la]
    lags.sort()
    return Result(
        variant=variant,
        streams=streams,
        pieces=pieces,
        complete=complete,
        cpu_ms_per_start=(marks["first"] - marks["start"]) * MS / streams,
        cpu_ms_per_piece=(marks["last"] - marks["first"]) * MS / (streams * (pieces - 1)),
        cpu_ms_per_end=(marks["end"] - marks["last"]) * MS / streams,
        end_wait_p50_ms=statistics.median(waits) * MS if waits else 0.0,
        end_wait_max_ms=max(waits) * MS if waits else 0.0,
        lag_p99_ms=lags[int(len(lags) * 0.99)] * MS if lags else 0.0,
        lag_max_ms=lags[-1] * MS if lags else 0.0,
        profile={
            phase: _top(prof, streams * (pieces - 1) if phase == "pieces" else streams)
            for phase, prof in profiles.items()
        },
    )


def _top(profile: cProfile.Profile, per: int, count: int = 18) -> str:
    """The ``count`` functions with the most own time, in µs per piece (or per end)."""
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    lines = [f"{'own µs':>8} {'cum µs':>8} {'calls':>6}  function"]
    for (path, line, name), (_, calls, own, cumulative, _) in rows[:count]:
        where = f"{Path(path).name}:{line}({name})" if line else name
        lines.append(
            f"{own * 1e6 / per:8.1f} {cumulative * 1e6 / per:8.1f} {calls / per:6.1f}  {where}"
        )
    return "\n".join(lines)


def _child(args: argparse.Namespace) -> None:
    result = asyncio.run(_run(args.child, args.url, args.streams, args.pieces, args.profile))
    print(json.dumps(asdict(result)))


def _drip(pieces: int, drip: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.drip", "--pieces", str(pieces), "--drip", str(drip)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.litellm_stream")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--pieces", type=int, default=20)
    parser.add_argument("--drip", type=float, default=0.1, help="seconds between pieces")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return
    drip, url = _drip(args.pieces, args.drip)
    try:
        print(
            f"{args.streams} streams x {args.pieces} pieces, one every {args.drip} s; "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        print(
            f"{'variant':10} {'whole':>7} {'start ms':>9} {'piece ms':>9} {'end ms':>8} "
            f"{'end wait p50/max ms':>20} {'loop lag p99/max ms':>20}"
        )
        for variant in args.variant or list(VARIANTS):
            command = [sys.executable, "-m", "bench.litellm_stream", "--child", variant]
            command += ["--url", url, "--streams", str(args.streams), "--pieces", str(args.pieces)]
            if args.profile:
                command.append("--profile")
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{variant}: failed\n{done.stderr[-3000:]}")
                continue
            result = Result(**json.loads(done.stdout.strip().splitlines()[-1]))
            print(
                f"{variant:10} {result.complete:>3}/{result.streams:<3} "
                f"{result.cpu_ms_per_start:9.3f} {result.cpu_ms_per_piece:9.3f} "
                f"{result.cpu_ms_per_end:8.2f} "
                f"{result.end_wait_p50_ms:>9.0f}/{result.end_wait_max_ms:<10.0f} "
                f"{result.lag_p99_ms:>9.0f}/{result.lag_max_ms:<10.0f}"
            )
            for phase, table in result.profile.items():
                unit = "piece" if phase == "pieces" else "end"
                print(f"  {variant}, {phase}: cProfile, per {unit}")
                print("    " + table.replace("\n", "\n    "))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        if drip.stdin:
            drip.stdin.close()
        drip.wait(timeout=15)


if __name__ == "__main__":
    main()
