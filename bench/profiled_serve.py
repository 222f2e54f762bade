"""``smriti serve`` with a cProfile switch and a GC recorder, for the benchmarks'
``--profile`` and ``--gc``.

    python -m bench.profiled_serve serve --port … --database …

Runs ``api.cli.main`` unchanged in this process. SIGUSR1 starts recording, SIGUSR2
stops it and writes what was recorded:

* ``$SMRITI_BENCH_PROFILE``: cProfile (CPU time) of the main thread (the event
  loop: every request runs there), in ``pstats`` format;
* ``$SMRITI_BENCH_GC``: every garbage collection (``gc.callbacks``) as JSON lines
  ``{"generation", "at", "ms", "collected"}``, ``at`` on ``time.perf_counter``'s
  clock (CLOCK_MONOTONIC: the benchmark's own clock, so a pause can be set beside
  the requests it held up), appended run after run, then one line
  ``{"tracked", "frozen"}``: the objects a full collection walks at the run's
  end and those frozen out of it (``gc.freeze``).

Nothing is recorded until SIGUSR1, so start-up and warm-up stay out of the figures.
"""

from __future__ import annotations

import cProfile
import gc
import json
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

PROFILE_VARIABLE = "SMRITI_BENCH_PROFILE"
GC_VARIABLE = "SMRITI_BENCH_GC"


class GcRecorder:
    """Every collection's generation, start and duration, while recording."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.started = 0.0
        self.pauses: list[dict[str, Any]] = []

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
            return
        self.pauses.append(
            {
                "generation": info["generation"],
                "at": self.started,
                "ms": (time.perf_counter() - self.started) * 1000.0,
                "collected": info["collected"],
            }
        )

    def start(self) -> None:
        self.pauses = []
        gc.callbacks.append(self)

    def stop(self) -> None:
        gc.callbacks.remove(self)
        # What a full pass walks now, and what it no longer does (gc.freeze).
        heap = {"tracked": len(gc.get_objects()), "frozen": gc.get_freeze_count()}
        with open(self.out, "a") as file:
            file.writelines(json.dumps(pause) + "\n" for pause in self.pauses)
            file.write(json.dumps(heap) + "\n")


def main(argv: list[str]) -> int:
    out = os.environ.get(PROFILE_VARIABLE)
    # CPU time of the profiled thread: the event loop waiting in epoll (for the
    # database, the provider, the next request) costs nothing and shows as nothing.
    profiler = cProfile.Profile(time.thread_time) if out else None
    gc_out = os.environ.get(GC_VARIABLE)
    recorder = GcRecorder(gc_out) if gc_out else None

    def start(_signal: int, _frame: FrameType | None) -> None:
        if recorder is not None:
            recorder.start()
        if profiler is not None:
            profiler.enable()

    def stop(_signal: int, _frame: FrameType | None) -> None:
        if profiler is not None and out:
            profiler.disable()
            profiler.dump_stats(out + ".part")
            os.replace(out + ".part", out)
        if recorder is not None:
            recorder.stop()

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from api.cli import main as smriti

    return smriti(argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
