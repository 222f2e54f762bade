"""A session's tags: how a tag is written, compared and bounded (issue 21 §3).

A tag is trimmed and its inner whitespace collapsed to one space; the user's
case is kept for display, but two tags that differ only in case (or in
compatibility forms, NFKC) are the same tag: ``tag_key`` is what equality and
the ``tag`` filter compare. A set of tags keeps the order given and the first
spelling of each.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from ..errors import InputError
from .validation import is_text

TAG_MAX_CHARS = 40
TAGS_MAX = 20
# The key's column size: NFKC and case folding may lengthen a tag (ß is ss).
TAG_KEY_MAX_CHARS = 160


def normalise_tag(raw: str) -> str:
    """The tag as shown: trimmed, inner whitespace one space."""
    return " ".join(raw.split())


def tag_key(tag: str) -> str:
    """What equality compares: the normalised tag, NFKC, case-folded."""
    return unicodedata.normalize("NFKC", normalise_tag(tag)).casefold()


def validate_tags(raw: Sequence[str], *, field: str = "tags") -> tuple[tuple[str, str], ...]:
    """Each distinct tag as (tag, key), in the order given; InputError for an empty
    or too long tag, one that is not text, or more than ``TAGS_MAX`` distinct tags."""
    found: dict[str, str] = {}
    for value in raw:
        tag = normalise_tag(value)
        if not tag:
            raise InputError("A tag cannot be empty.", field=field)
        if not is_text(tag) or any(unicodedata.category(c) == "Cc" for c in tag):
            raise InputError(
                "A tag contains characters that are not valid text (control characters, "
                "NUL or a lone surrogate).",
                field=field,
            )
        if len(tag) > TAG_MAX_CHARS:
            raise InputError(
                f'The tag "{tag[:TAG_MAX_CHARS]}…" is {len(tag)} characters; '
                f"the limit is {TAG_MAX_CHARS}.",
                field=field,
            )
        key = tag_key(tag)
        if len(key) > TAG_KEY_MAX_CHARS:
            raise InputError(f'The tag "{tag}" is too long once normalised.', field=field)
        found.setdefault(key, tag)
    if len(found) > TAGS_MAX:
        raise InputError(
            f"A session has at most {TAGS_MAX} tags; {len(found)} were given.", field=field
        )
    return tuple((tag, key) for key, tag in found.items())
