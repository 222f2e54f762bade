"""Turning stored text into HTML that is safe to show in a browser.

Markdown-it and Pygments (about 80 modules, 20 ms of every start) are imported
when the first text is rendered, not when the server starts:
``tests/test_layers.py`` checks that importing the app leaves them out.
"""

from __future__ import annotations

from .cache import render_markdown_cached


def render_markdown(text: str) -> str:
    """``text`` (Markdown) as safe HTML; see ``markdown.py``."""
    from .markdown import render_markdown as render

    return render(text)


__all__ = ["render_markdown", "render_markdown_cached"]
