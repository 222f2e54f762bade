"""Turning stored text into HTML that is safe to show in a browser."""

from .cache import render_markdown_cached
from .markdown import render_markdown

__all__ = ["render_markdown", "render_markdown_cached"]
