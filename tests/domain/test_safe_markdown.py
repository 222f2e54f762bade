"""User text in a Markdown export: nothing in it may run, load or link out of
the file, in any viewer; code stays code. Each case is exact, and the result is
rendered by a CommonMark parser with raw HTML on (as a permissive viewer does)
to show nothing live came through."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from api.domain.safe_markdown import block, inline

# A permissive viewer: raw HTML rendered, GFM tables on.
VIEWER = MarkdownIt("commonmark", {"html": True}).enable("table")
LIVE = re.compile(r"<(script|img|iframe|a href=\"(?!https?://|mailto:))", re.IGNORECASE)

HOSTILE = [
    ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
    ("hi <img src=x onerror=alert(1)> there", "hi &lt;img src=x onerror=alert(1)> there"),
    (
        "<iframe src=https://evil.example></iframe>",
        "&lt;iframe src=https://evil.example>&lt;/iframe>",
    ),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
    ("[x](JaVaScRiPt:alert(1))", "\\[x\\](JaVaScRiPt:alert(1))"),
    ("[x](jav&#x61;script:alert(1))", "\\[x\\](jav&#x61;script:alert(1))"),
    ("<javascript:alert(1)>", "&lt;javascript:alert(1)>"),
    # An image is never loaded: it becomes a link to its address, as in the web UI.
    ("![t](https://evil.example/p.png)", "[t](https://evil.example/p.png)"),
    ("![t](data:image/png;base64,AAAA)", "!\\[t\\](data:image/png;base64,AAAA)"),
    (
        "[r]: https://evil.example/p.png\n\n![t][r]",
        "\\[r\\]: https://evil.example/p.png\n\n!\\[t\\]\\[r\\]",
    ),
    ("<!-- hidden -->", "&lt;!-- hidden -->"),
    # A plain link to a web or mail address is kept.
    (
        "see [docs](https://docs.example/a_(b)) now",
        "see \\[docs\\](https://docs.example/a_(b)) now",
    ),
    ("see [docs](https://docs.example/a) now", "see [docs](https://docs.example/a) now"),
    ("[`x<y`](mailto:a@b.example)", "[`x<y`](mailto:a@b.example)"),
    # A line break a viewer sees (\r) is one here too.
    ("line\r\r<script>x</script>", "line\n\n&lt;script>x&lt;/script>"),
    # The user's own escapes are kept; an escaped backslash does not escape `[`.
    ("\\<b> \\\\[x](javascript:y)", "\\<b> \\\\\\[x\\](javascript:y)"),
]


@pytest.mark.parametrize(("text", "expected"), HOSTILE)
def test_nothing_live_survives(text: str, expected: str) -> None:
    assert block(text) == expected
    assert LIVE.search(VIEWER.render(block(text))) is None


CODE = [
    # Inline code reads as written.
    ("Use `Vec<T>` and ``a ` b``.", "Use `Vec<T>` and ``a ` b``."),
    # Fenced code too, in a fence no line of it can close.
    (
        "Run:\n```python\nif a < b:\n    print('<script>')\n```\nDone <b>.",
        "Run:\n\n```python\nif a < b:\n    print('<script>')\n```\nDone &lt;b>.",
    ),
    (
        "````md\n```\n<x>\n```\n````",
        "````md\n```\n<x>\n```\n````",
    ),
    ("~~~\n<x>", "```\n<x>\n```"),  # left open: closed here
    # In a list item, kept there while every line of it is.
    ("1. Step\n   ```sh\n   ls <dir>\n   ```", "1. Step\n\n   ```sh\n   ls <dir>\n   ```"),
]


@pytest.mark.parametrize(("text", "expected"), CODE)
def test_code_reads_as_code(text: str, expected: str) -> None:
    assert block(text) == expected
    html = VIEWER.render(expected)
    assert LIVE.search(html) is None
    assert "<code" in html


# What a line-by-line escaper gets wrong: each one ran a script before.
TRICKS = [
    # A backtick left open on one line closes on the next, freeing what a span held.
    "`\na`<script>alert(1)</script>`",
    # A fence in a list item ends with the item: the next line is outside it.
    "- item\n\n  ```\n<script>alert(1)</script>\n  ```",
    # A viewer's fence we did not see (in a list item) closed inside ours.
    "- ~~~~\n  ```\n  ~~~~\n  <script>alert(2)</script>\n  ```",
    # A table splits a code span at `|`.
    "| a | b |\n|---|---|\n| `x|<script>alert(3)</script>|y` | 2 |",
    # A backtick in the info string: not a fence.
    "``` `x`\n<script>alert(4)</script>\n```",
]


@pytest.mark.parametrize("hard_breaks", [False, True])
@pytest.mark.parametrize("text", TRICKS + [text for text, _ in HOSTILE])
def test_no_trick_gets_html_through(text: str, hard_breaks: bool) -> None:
    assert LIVE.search(VIEWER.render(block(text, hard_breaks=hard_breaks))) is None


LINES = [
    # A reply's lines meant as lines: each ends in a hard break but the last.
    ("Roses are red,\nviolets are blue.", "Roses are red,\\\nviolets are blue."),
    ("12 Main St\nSpringfield\n\nNext.", "12 Main St\\\nSpringfield\n\nNext."),
    # A line ending in a backslash that escapes nothing is a break already;
    # one ending in an escaped backslash gets its break after it.
    ("a \\\nb", "a \\\nb"),
    ("a \\\\\nb", "a \\\\\\\nb"),
    # Where a newline is structure already: lists, headings, tables, quotes,
    # setext headings, indented lines, code.
    ("- a\n- b\nmore of b", "- a\n- b\nmore of b"),
    ("1. a\n2) b", "1. a\n2) b"),
    ("# Title\ntext", "# Title\ntext"),
    ("| a |\n|---|", "| a |\n|---|"),
    ("> a\n> b", "> a\n> b"),
    ("Title\n---", "Title\n---"),
    ("Title\n===", "Title\n==="),
    ("text\n    indented", "text\n    indented"),
    ("text\n```\nx\ny\n```\nafter", "text\n\n```\nx\ny\n```\nafter"),
]


@pytest.mark.parametrize(("text", "expected"), LINES)
def test_lines_meant_as_lines_stay_lines(text: str, expected: str) -> None:
    assert block(text, hard_breaks=True) == expected


def test_a_poem_renders_one_line_per_line() -> None:
    html = VIEWER.render(block("one\ntwo\nthree", hard_breaks=True))
    assert html == "<p>one<br />\ntwo<br />\nthree</p>\n"
    # Without hard_breaks (checkpoint fields), as before: one paragraph.
    assert block("one\ntwo") == "one\ntwo"


def test_inline_is_one_line() -> None:
    assert inline("A <b>title</b>\nwith ![x](https://e.example/i.png)") == (
        "A &lt;b>title&lt;/b> with [x](https://e.example/i.png)"
    )
    assert inline("```\n<script>") == "\\`\\`\\` &lt;script>"
