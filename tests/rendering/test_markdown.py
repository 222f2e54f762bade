"""render_markdown: CommonMark to HTML in which nothing runs and nothing is fetched."""

from __future__ import annotations

import re

import pytest

from api.rendering import render_markdown
from api.rendering.markdown import MARKDOWN_LIMIT

LINK = 'target="_blank" rel="noopener noreferrer"'


def test_headings_emphasis_and_inline_code() -> None:
    assert render_markdown("# Title\n\n## Part *one*\n\nSome **bold** and `a < b`.\n") == (
        "<h1>Title</h1>\n"
        "<h2>Part <em>one</em></h2>\n"
        "<p>Some <strong>bold</strong> and <code>a &lt; b</code>.</p>\n"
    )


def test_lists() -> None:
    assert render_markdown("- a\n- b\n\n1. one\n2. two\n") == (
        "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n"
    )


def test_a_python_fence_is_highlighted_with_prefixed_classes() -> None:
    assert render_markdown("```python\ndef f(x):\n    return x < 1\n```\n") == (
        '<pre class="hl"><code class="language-python">'
        '<span class="hl-k">def</span><span class="hl-w"> </span><span class="hl-nf">f</span>'
        '<span class="hl-p">(</span><span class="hl-n">x</span><span class="hl-p">):</span>\n'
        '    <span class="hl-k">return</span> <span class="hl-n">x</span> '
        '<span class="hl-o">&lt;</span> <span class="hl-mi">1</span>\n'
        "</code></pre>\n"
    )


def test_a_fence_in_an_unknown_or_no_language_is_escaped_plain() -> None:
    assert render_markdown("```klingon\n<b>&amp;</b>\n```\n") == (
        '<pre class="hl"><code class="language-klingon">&lt;b&gt;&amp;amp;&lt;/b&gt;\n</code></pre>\n'
    )
    assert (
        render_markdown("```\nx <y>\n```\n") == '<pre class="hl"><code>x &lt;y&gt;\n</code></pre>\n'
    )
    assert render_markdown("    x <y>\n") == '<pre class="hl"><code>x &lt;y&gt;\n</code></pre>\n'


def test_tables_and_strikethrough() -> None:
    assert render_markdown("| a | b |\n|---|--:|\n| 1 | ~~2~~ |\n") == (
        "<table>\n<thead>\n<tr>\n<th>a</th>\n"
        '<th style="text-align:right">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n'
        '<td style="text-align:right"><s>2</s></td>\n</tr>\n</tbody>\n</table>\n'
    )


def test_links_open_in_a_new_tab_without_opener_or_referrer() -> None:
    assert render_markdown(
        "[w](https://example.com/a?b=1&c=2) [m](mailto:a@b.org) [r](../notes#x) <https://e.org>"
    ) == (
        f'<p><a href="https://example.com/a?b=1&amp;c=2" {LINK}>w</a> '
        f'<a href="mailto:a@b.org" {LINK}>m</a> '
        f'<a href="../notes#x" {LINK}>r</a> '
        f'<a href="https://e.org" {LINK}>https://e.org</a></p>\n'
    )


def test_an_image_becomes_a_link_to_its_source_and_is_never_loaded() -> None:
    assert render_markdown('![a cat](https://e.org/cat.png "Cat")') == (
        f'<p><a href="https://e.org/cat.png" title="Cat" {LINK}>a cat</a></p>\n'
    )
    assert render_markdown("![](https://e.org/x.png)") == (
        f'<p><a href="https://e.org/x.png" {LINK}>https://e.org/x.png</a></p>\n'
    )
    # Inside a link, only its text: links do not nest.
    assert render_markdown("[![logo](l.png)](https://e.org)") == (
        f'<p><a href="https://e.org" {LINK}>logo</a></p>\n'
    )


def test_raw_html_is_shown_as_text() -> None:
    assert render_markdown("<script>alert(1)</script>") == (
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )
    assert render_markdown("hi <img src=x onerror=alert(1)> there") == (
        "<p>hi &lt;img src=x onerror=alert(1)&gt; there</p>\n"
    )
    assert render_markdown('<a href="javascript:alert(1)">x</a>') == (
        "<p>&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;</p>\n"
    )


def test_entities_are_decoded_then_escaped_again() -> None:
    assert render_markdown("&lt;script&gt; &amp; &copy; &#60;b&#62;") == (
        "<p>&lt;script&gt; &amp; \u00a9 &lt;b&gt;</p>\n"
    )


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](java&#115;cript:alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](<javascript:alert(1)>)",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](file:///etc/passwd)",
        "[x][r]\n\n[r]: javascript:alert(1)\n",
        "<javascript:alert(1)>",
        "![x](javascript:alert(1))",
        "![x](data:image/svg+xml;base64,PHN2Zz4=)",
    ],
)
def test_links_to_other_schemes_stay_text(source: str) -> None:
    html = render_markdown(source)
    assert "<a" not in html
    assert "href" not in html
    assert "<img" not in html


def test_a_fence_info_string_cannot_break_out_of_its_attribute() -> None:
    assert render_markdown('```"><script>alert(1)</script>\ncode\n```\n') == (
        '<pre class="hl"><code class="language-&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">'
        "code\n</code></pre>\n"
    )
    assert render_markdown('```x"onmouseover=alert(1)\nc\n```\n') == (
        '<pre class="hl"><code class="language-x&quot;onmouseover=alert(1)">c\n</code></pre>\n'
    )


HOSTILE = """
<script>alert(1)</script>
<img src=x onerror=alert(1)>
[a](javascript:alert(1)) ![b](javascript:alert(2)) [c](jav&#x09;ascript:alert(3))
<a href="javascript:alert(4)">d</a> <svg onload=alert(5)>
```"><script>alert(6)</script>
<script>alert(7)</script>
```
`<script>alert(8)</script>`
| <img src=x onerror=alert(9)> |
|---|
| <script>alert(10)</script> |
"""


def test_hostile_input_yields_no_tag_attribute_or_address_that_could_run() -> None:
    html = render_markdown(HOSTILE)
    assert "<script" not in html
    assert "<img" not in html
    assert "<svg" not in html
    # "onerror=" survives only as text, inside an escaped tag …
    assert html.count("onerror=") == html.count("&lt;img src=x onerror=") == 2
    # … and no real tag carries an event handler.
    assert not re.search(r"<[^>]*\son\w+=", html)
    assert not re.search(r'href="\s*(?:javascript|vbscript|data):', html, re.IGNORECASE)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_text_over_the_limit_is_shown_escaped_and_unparsed() -> None:
    at_limit = "*a* <b>\n" + "x" * (MARKDOWN_LIMIT - 8)
    assert render_markdown(at_limit).startswith("<p><em>a</em> &lt;b&gt;<br />\nxxx")
    over = at_limit + "x"
    assert (
        render_markdown(over)
        == f'<pre class="unrendered">*a* &lt;b&gt;\n{"x" * (MARKDOWN_LIMIT - 7)}</pre>\n'
    )


def test_a_single_newline_is_a_line_break() -> None:
    assert render_markdown("first line\nsecond line") == "<p>first line<br />\nsecond line</p>\n"


def test_the_cache_returns_the_same_html_as_a_fresh_render() -> None:
    from api.rendering import render_markdown_cached

    text = "```python\nprint('cached')\n```\n"
    first = render_markdown_cached(text)
    assert first == render_markdown(text)
    assert render_markdown_cached(text) is first
