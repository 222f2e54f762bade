"""Rendered Markdown, remembered: turns never change, and a notebook re-reads them.

Keyed by a digest of the text, so the cache holds only the HTML; bounded by
entry count, least recently used out first.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

CACHE_ENTRIES = 2048

_lock = threading.Lock()  # renders of long texts run in worker threads
_cache: OrderedDict[bytes, str] = OrderedDict()


def render_markdown_cached(text: str) -> str:
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _lock:
        html = _cache.get(key)
        if html is not None:
            _cache.move_to_end(key)
            return html
    from .markdown import render_markdown  # on the first miss: see __init__.py

    html = render_markdown(text)
    with _lock:
        _cache[key] = html
        _cache.move_to_end(key)
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return html
