"""Markdown to HTML that is safe to put in a page, whoever wrote the Markdown.

Turn text comes from users and from models, and a model repeats whatever a prompt
injection asks it to; so nothing in it may run or phone home:

- CommonMark plus tables and strikethrough; raw HTML is not parsed, it is shown as text.
- Links survive only to http(s), mailto or relative addresses; any other link
  (``javascript:``, ``data:``, …) stays literal text. Links open in a new tab with
  ``rel="noopener noreferrer"``.
- Images are never loaded: ``![alt](src)`` becomes a link to ``src`` reading ``alt``
  (under the same rules as links). An image URL chosen by a model would otherwise be
  fetched as soon as the reply is shown, which can carry conversation text to a
  third party.
- Fenced code is highlighted by Pygments (classes ``hl-*``, styled by
  ``webui/highlight.css``); an unknown or missing language is shown escaped, as is.
- A text longer than :data:`MARKDOWN_LIMIT` is not parsed: it is shown escaped in a
  ``<pre class="unrendered">``. Typical text renders at 0.25 ms per KB (prose) to 3 ms
  per KB (highlighted code), but markdown-it-py is pure Python and crafted input costs
  up to ~20 µs per character; the limit bounds a render to about a second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from .highlight import CONTAINER_CLASS, highlight

_ALLOWED_SCHEME = re.compile(r"^(?:https?|mailto):", re.IGNORECASE)
# A relative address has no scheme: no ':' before the first '/', '?' or '#'.
_RELATIVE = re.compile(r"^[^:/?#]*(?:[/?#]|$)")
_LINK_ATTRS = (("target", "_blank"), ("rel", "noopener noreferrer"))
MARKDOWN_LIMIT = 64 * 1024  # characters
_IN_LINK = "in_link"  # env key: rendering between a link_open and its link_close


def _allowed(url: str) -> bool:
    return bool(_ALLOWED_SCHEME.match(url) or _RELATIVE.match(url))


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        # Called with the normalized address of every link, autolink, image and
        # reference definition; one that fails is not made a link at all.
        return _allowed(url)


def _link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    for name, value in _LINK_ATTRS:
        tokens[idx].attrSet(name, value)
    env[_IN_LINK] = True
    return self.renderToken(tokens, idx, options, env)


def _link_close(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    env[_IN_LINK] = False  # links do not nest, so one flag is enough
    return self.renderToken(tokens, idx, options, env)


def _image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    text = escapeHtml(self.renderInlineAsText(token.children or [], options, env))
    if env.get(_IN_LINK):  # an image as a link's text: links do not nest
        return text
    src = str(token.attrGet("src") or "")
    attrs = [("href", src)]
    if title := token.attrGet("title"):
        attrs.append(("title", str(title)))
    rendered = "".join(f' {name}="{escapeHtml(value)}"' for name, value in [*attrs, *_LINK_ATTRS])
    return f"<a{rendered}>{text or escapeHtml(src)}</a>"


def _code(content: str, language: str) -> str:
    spans = highlight(content, language) if language else None
    lang_class = f' class="language-{escapeHtml(language)}"' if language else ""
    body = spans if spans is not None else escapeHtml(content)
    return f'<pre class="{CONTAINER_CLASS}"><code{lang_class}>{body}</code></pre>\n'


def _fence(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    language = info.split(maxsplit=1)[0] if info else ""
    return _code(token.content, language)


def _code_block(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return _code(tokens[idx].content, "")


@cache
def _parser() -> MarkdownIt:
    # breaks: a single newline is a line break, as people expect in a chat (and
    # as the offline echo model writes its lines).
    md = _SafeMarkdown(
        "commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True}
    )
    md.enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _code_block)
    return md


def render_markdown(text: str) -> str:
    """Markdown as HTML in which nothing can run and nothing is fetched."""
    if len(text) > MARKDOWN_LIMIT:
        return f'<pre class="unrendered">{escapeHtml(text)}</pre>\n'
    html: str = _parser().render(text, {})
    return html
