"""Memory comes back: no kind of object piles up with the requests (issue 19, target 3).

The real app runs under uvicorn in a thread of this process
(``bench.memory.app_in_process``: lifespan, migrations, LiteLLM to an
OpenAI-compatible stub that remembers nothing), and clients speak raw HTTP to
it: sends, and streams over SSE of which every other one is stopped after its
first piece by closing the connection, as the web UI's Stop does. After a
warm-up the live objects are counted by type (``gc.get_objects()`` after
``gc.collect()``), then after each of two equal rounds of requests. A leak of one
object per send, per stream or per stopped stream grows its type by at least
``ROUND // 2`` in *both* rounds; objects that merely happen to be alive at a
count (a connection being closed, a pool's spare) do not grow in both.
"""

from __future__ import annotations

import collections
import gc
import itertools
from pathlib import Path

import pytest

from bench.memory import (
    CLIENTS,
    Progress,
    app_in_process,
    growth,
    live_objects,
    new_session,
    provider_thread,
    sends,
    settle,
    streams,
)
from bench.workers import providers_file

WARM_UP = 40  # sends and as many streams, before the first count
ROUND = 100  # sends and as many streams (half of them stopped), per counted round
ALLOWED = 30  # what a type may grow by in a round, when it grew by more in the other


# On PostgreSQL a TCP transport is still open when the in-process server's loop
# closes (uvloop then cannot close the loop cleanly: EBUSY); what it belongs to
# was not found (not a stopped stream: every one is closed and its reply saved,
# asserted below). It is the teardown's, not a growth.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_no_kind_of_object_grows_with_the_requests(
    database_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    nothing = Progress(None, every=0)
    counts: list[collections.Counter[str]] = []

    async def count(requests: int) -> None:
        # Stopped streams save their replies after their clients have gone: each
        # request is a user turn and a reply, every one saved (one stopped stream
        # in a few hundred was never closed, and saved nothing until the server
        # stopped, while Strawberry's reading task waited on its queue).
        assert await settle(port, sessions, 2 * requests) == 2 * requests
        # pytest keeps every log record of the test (and what its exception
        # holds): a server's log is written and forgotten. Collecting first: what
        # the collector frees may log (a task's exception never retrieved).
        gc.collect()
        caplog.clear()
        counts.append(live_objects())

    with provider_thread() as base_url:
        providers = providers_file(tmp_path, base_url)
        with app_in_process(database_url, providers) as port:
            sessions = [await new_session(port) for _ in range(CLIENTS)]
            await sends(port, sessions, WARM_UP, nothing)
            await streams(port, sessions, WARM_UP, nothing, stop_every=2)
            await count(2 * WARM_UP)
            for n in range(2):
                await sends(port, sessions, ROUND, nothing)
                stopped = await streams(port, sessions, ROUND, nothing, stop_every=2)
                assert stopped == ROUND // 2
                await count(2 * WARM_UP + 2 * ROUND * (n + 1))

    first, second = (dict(growth(a, b, top=1000)) for a, b in itertools.pairwise(counts))
    grew_twice = {
        name: (first[name], second[name])
        for name in first.keys() & second.keys()
        if min(first[name], second[name]) > ALLOWED
    }
    assert grew_twice == {}, sorted(first.items(), key=lambda g: -g[1])[:20]
