"""The OpenAI-compatible provider stub of the side-by-side benchmark, in a process of its own.

    python -m bench.stub

Starts ``tests.support.fake_openai.FakeOpenAI`` (uvicorn on 127.0.0.1 and a
free port), prints its base URL on one line, and runs until its standard input
closes. Every request gets ``fake reply #n``.
"""

from __future__ import annotations

import sys

from tests.support.fake_openai import FakeOpenAI


def main() -> None:
    with FakeOpenAI() as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the benchmark closes the pipe (or exits)


if __name__ == "__main__":
    main()
