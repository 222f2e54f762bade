"""Opaque global ids: "Type:key" in base64, decoded strictly.

Only the exact spelling ``encode`` produces is accepted: canonical base64, a
known type name, and a key in canonical decimal (no sign, spaces, underscores
or leading zeros) within the database's 64-bit key range. Python's ``int()``
alone would take "Session: 1" and "Session:1_0" for existing rows, and a key
past the range would reach the database as a server error.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import lru_cache

from ...errors import NotFound

# The longest id encode() can produce is far shorter ("Checkpoint:" + 19 digits,
# in base64); anything longer is refused before it is decoded.
MAX_ENCODED_CHARS = 64
MAX_KEY = 2**63 - 1  # BIGINT, the primary keys' type on both databases

_CANONICAL_KEY = re.compile(r"[1-9][0-9]{0,18}")


def encode(type_name: str, key: int) -> str:
    return prefixed(f"{type_name}:")(str(key))


@lru_cache(maxsize=512)
def prefixed(prefix: str) -> Callable[[str], str]:
    """``text -> base64(prefix + text)`` with the prefix's whole 3-byte groups
    encoded once: base64 encodes each group of 3 bytes alone, so the encoding
    of a text that starts with them starts with theirs. The same string as
    ``base64.b64encode((prefix + text).encode())`` (``relay.to_base64``)."""
    raw = prefix.encode()
    cut = len(raw) - len(raw) % 3
    head, rest = base64.b64encode(raw[:cut]).decode("ascii"), raw[cut:]
    b2a = binascii.b2a_base64

    def encode_text(text: str) -> str:
        return head + b2a(rest + text.encode(), newline=False).decode("ascii")

    return encode_text


def parse(value: str, *, max_chars: int = MAX_ENCODED_CHARS) -> tuple[str, str] | None:
    """(type, rest) of a base64 "type:rest" value spelt exactly as we spell it, else None."""
    if len(value) > max_chars:
        return None
    try:
        raw = base64.b64decode(value, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    # b64decode ignores some non-canonical spellings (extra padding bits):
    # only the one encoding of the text is the id.
    if base64.b64encode(raw).decode("ascii") != value:
        return None
    type_name, colon, rest = text.partition(":")
    return (type_name, rest) if colon else None


def parse_key(text: str) -> int | None:
    """A key in canonical decimal within the database's range, else None."""
    if not _CANONICAL_KEY.fullmatch(text):
        return None
    key = int(text)
    return key if key <= MAX_KEY else None


def parse_id(value: str) -> tuple[str, int] | None:
    """(type, key) of a well-formed global id of any type, else None."""
    parsed = parse(value)
    if parsed is None:
        return None
    key = parse_key(parsed[1])
    return None if key is None else (parsed[0], key)


def decode(value: str, type_name: str, *, field: str) -> int:
    """The key of a global id of ``type_name``; anything else is NOT_FOUND."""
    parsed = parse_id(value)
    if parsed is None or parsed[0] != type_name:
        # The value is echoed back cut short: it may be megabytes long.
        shown = value if len(value) <= MAX_ENCODED_CHARS else value[:MAX_ENCODED_CHARS] + "…"
        raise NotFound(f"No {type_name.lower()} has the id {shown!r}.", field=field)
    return parsed[1]


def decode_optional(value: str | None, type_name: str, *, field: str) -> int | None:
    return None if value is None else decode(value, type_name, field=field)


def key_or_none(value: str, type_name: str) -> int | None:
    """The key of a global id of ``type_name``, or None (a query answers null)."""
    parsed = parse_id(value)
    return parsed[1] if parsed is not None and parsed[0] == type_name else None
