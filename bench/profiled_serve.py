"""``smriti serve`` with a cProfile switch, for ``python -m bench.side_by_side --profile``.

    python -m bench.profiled_serve serve --port … --database …

Runs ``api.cli.main`` unchanged in this process. SIGUSR1 starts profiling (CPU time)
the main thread (the event loop: every request runs there), SIGUSR2 stops it and
writes the statistics to ``$SMRITI_BENCH_PROFILE`` (``pstats`` format). Nothing
is profiled until SIGUSR1, so start-up and warm-up stay out of the figures.
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
import time
from types import FrameType

PROFILE_VARIABLE = "SMRITI_BENCH_PROFILE"


def main(argv: list[str]) -> int:
    out = os.environ[PROFILE_VARIABLE]
    # CPU time of the profiled thread: the event loop waiting in epoll (for the
    # database, the provider, the next request) costs nothing and shows as nothing.
    profiler = cProfile.Profile(time.thread_time)

    def start(_signal: int, _frame: FrameType | None) -> None:
        profiler.enable()

    def stop(_signal: int, _frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out + ".part")
        os.replace(out + ".part", out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from api.cli import main as smriti

    return smriti(argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
