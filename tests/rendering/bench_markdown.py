"""How much ``render_markdown`` costs: ``Turn.contentHtml`` runs it on every read.

    python -m tests.rendering.bench_markdown

Prints the first call (imports, Pygments lexer lookup) and the steady median time
for 10 KB replies of prose, of mixed prose and code, and of Python code only, then
the slowest input found, unclosed brackets, just under MARKDOWN_LIMIT. Not collected
by pytest: the numbers are for reading, not asserting.
"""

from __future__ import annotations

import statistics
import time

from api.rendering import render_markdown
from api.rendering.markdown import MARKDOWN_LIMIT

SIZE = 10 * 1024
SECTION = """## Step {i}

Here is **what** to do next, with `inline code` and a [link](https://example.com/{i}).

- first point, with *emphasis*
- second point ~~struck~~

```python
def handler_{i}(request):
    data = {{"id": {i}, "items": [1, 2, 3]}}
    return sum(x * 2 for x in data["items"]) < 10
```

| key | value |
|-----|-------|
| a   | {i}   |

"""
PROSE = "Smriti keeps what was *concluded* as a versioned checkpoint, not a raw log. "
CODE_LINE = "result = [item * 2 for item in range(10) if item % 3]  # keep odd thirds\n"


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


REPLIES = {
    "prose": _fill(PROSE),
    "mixed": "".join(SECTION.format(i=i) for i in range(40))[:SIZE],
    "python": "```python\n" + _fill(CODE_LINE)[: SIZE - 16] + "\n```\n",
}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _median(text: str, calls: int) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        render_markdown(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    started = time.perf_counter()
    render_markdown(REPLIES["mixed"])
    print(f"first call (imports, lexer lookup): {_ms(time.perf_counter() - started)}")
    for name, text in REPLIES.items():
        print(f"{name:>6}, {len(text.encode()):,} bytes: {_ms(_median(text, 50))}")
    brackets = "[" * MARKDOWN_LIMIT
    print(f"'[' x {MARKDOWN_LIMIT:,}: {_ms(_median(brackets, 3))}")


if __name__ == "__main__":
    main()
