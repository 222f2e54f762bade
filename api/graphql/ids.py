"""Opaque global ids: "Type:key" in base64, checked for the expected type."""

from __future__ import annotations

from strawberry import relay

from api.errors import NotFound


def encode(type_name: str, key: int) -> str:
    return relay.to_base64(type_name, key)


def decode(value: str, type_name: str, *, field: str) -> int:
    """The key of a global id of ``type_name``; anything else is NOT_FOUND."""
    try:
        found_type, key = relay.from_base64(value)
        if found_type != type_name:
            raise ValueError(found_type)
        return int(key)
    except (ValueError, TypeError) as exc:
        raise NotFound(f"No {type_name.lower()} has the id {value!r}.", field=field) from exc


def decode_optional(value: str | None, type_name: str, *, field: str) -> int | None:
    return None if value is None else decode(value, type_name, field=field)
