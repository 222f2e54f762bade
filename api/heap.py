"""The worker's long-lived heap, kept out of the garbage collector's full passes.

A full (generation 2) collection walks every object the collector tracks. Once
the app has started and LiteLLM is imported, that is ~425,000 objects that live
as long as the process: a full pass over them took ~190 ms of CPU, during which
the event loop answers nothing (bench.concurrent_streams --gc: with 200 replies
streaming, each of the four full passes in a run was the slowest trivial query,
0.5 to 1.1 s on a loaded machine). ``gc.freeze`` moves them to the permanent
generation, which no collection visits; what requests allocate is collected as
before.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what start-up left behind (so it is not kept for ever), then
    freeze every object alive now: later full passes walk only what came after."""
    gc.collect()
    gc.freeze()
