"""Item identities (issue 18 §1): every item of a checkpoint's lists is one
thing that lives on, edited or not, from checkpoint to checkpoint.

- An item's id is a short opaque string. The server gives a new item a random
  one (12 lowercase hex characters, made by ``services.checkpoints``); an item carried forward
  (a draft's carried state, the checkpoint form, a fork, a merge, an export
  and its import) keeps its id, edited or not.
- A checkpoint saved before ids existed has *implicit* ids: a function of its
  hash, the field and the item's position (``implicit_item_ids``). They are
  not stored and not hashed, and every reader derives the same ones, so an
  item carried forward from such a checkpoint keeps the identity it had there,
  and it becomes the new checkpoint's stored id.
- A new item given without an id (a plain string list, an old client) takes
  the id of the parent's item that says the same thing up to case, punctuation
  and spacing (``normalize_item``), or a new one.
- ``similarity`` is how items with no id in common are matched by a merge:
  the Jaccard index of their word sets (after ``normalize_item``);
  ``SIMILAR_AT`` and above is "the same item".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..errors import ErrorCode, InputError
from .compare import normalize_item
from .types import CONTENT_LIST_FIELDS, Checkpoint, CheckpointContent, ItemIds

ID_CHARS = 12
ID_PATTERN = re.compile(r"[0-9A-Za-z_-]{1,64}")
SIMILAR_AT = 0.7  # word-set Jaccard index at or above which two items match

IdFactory = Callable[[], str]


def implicit_item_ids(checkpoint_hash: str, content: CheckpointContent) -> ItemIds:
    """The ids of a checkpoint saved before ids existed (see the module doc)."""

    def one(name: str, index: int) -> str:
        digest = hashlib.sha256(f"{checkpoint_hash}:{name}:{index}".encode()).hexdigest()
        return digest[:ID_CHARS]

    return ItemIds(
        **{
            f.attr: tuple(one(f.name, i) for i in range(len(getattr(content, f.attr))))
            for f in CONTENT_LIST_FIELDS
        }
    )


def item_ids(checkpoint: Checkpoint) -> ItemIds:
    """A checkpoint's ids: stored, or implicit for one saved before ids existed."""
    stored = checkpoint.content.item_ids
    return stored if stored is not None else implicit_item_ids(checkpoint.hash, checkpoint.content)


def items(content: CheckpointContent, ids: ItemIds, attr: str) -> list[tuple[str, str]]:
    """One list field as (id, text) pairs."""
    return list(zip(getattr(ids, attr), getattr(content, attr), strict=True))


def assign_ids(
    content: CheckpointContent,
    given: Mapping[str, Sequence[str | None]],
    parent: Checkpoint | None,
    *,
    new_id: IdFactory,
) -> CheckpointContent:
    """``content`` with an id for every item.

    ``given`` holds, per list field (attribute name) that the caller sent as
    items, the id of each item or None (same length as the field's texts);
    a field not in it was sent as plain strings. A given id must be one of
    the parent's items in that field (else INVALID, naming the field's
    ``…Items`` input). An item without one takes the id of the parent's item
    with the same normalised text, if not already taken, or a new id
    (``new_id()``).
    """
    known = item_ids(parent) if parent is not None else ItemIds()
    found: dict[str, tuple[str, ...]] = {}
    for f in CONTENT_LIST_FIELDS:
        texts: tuple[str, ...] = getattr(content, f.attr)
        parent_pairs = items(parent.content, known, f.attr) if parent is not None else []
        parent_ids = {item_id for item_id, _ in parent_pairs}
        by_text: dict[str, str] = {}
        for item_id, text in parent_pairs:
            by_text.setdefault(normalize_item(text), item_id)
        sent = list(given.get(f.attr, [None] * len(texts)))
        field = f.item_name
        for named in sent:
            if named is None:
                continue
            if not ID_PATTERN.fullmatch(named):
                raise InputError(
                    f"An item id in {field} is 1 to 64 letters, digits, '-' or '_'.",
                    code=ErrorCode.INVALID,
                    field=field,
                )
            if named not in parent_ids:
                raise InputError(
                    f'{field} names item "{named}", which the checkpoint this one continues '
                    "does not have; leave the id out for a new item.",
                    code=ErrorCode.INVALID,
                    field=field,
                )
        taken = {item_id for item_id in sent if item_id is not None}
        if len(taken) != len([i for i in sent if i is not None]):
            raise InputError(
                f"{field} names one item id twice.", code=ErrorCode.INVALID, field=field
            )
        ids: list[str] = []
        for named, text in zip(sent, texts, strict=True):
            if named is None:
                match = by_text.get(normalize_item(text))
                named = match if match is not None and match not in taken else new_id()
                taken.add(named)
            ids.append(named)
        found[f.attr] = tuple(ids)
    return replace(content, item_ids=ItemIds(**found))


def given_ids(
    content: CheckpointContent, sent: Mapping[str, Sequence[tuple[str | None, str]]]
) -> dict[str, list[str | None]]:
    """The ids sent with items (``sent``: per field, (id or None, text) as
    given) lined up with ``content``'s validated texts: an item's id is that
    of the first sent item whose stripped text it is (validation strips and
    drops repeats)."""
    found: dict[str, list[str | None]] = {}
    for attr, pairs in sent.items():
        by_text: dict[str, str | None] = {}
        for item_id, text in pairs:
            key = text.strip()
            if by_text.get(key) is None:
                by_text[key] = item_id
        found[attr] = [by_text.get(text) for text in getattr(content, attr)]
    return found


def words(text: str) -> frozenset[str]:
    return frozenset(normalize_item(text).split())


def similarity(a: str, b: str) -> float:
    """Jaccard index of the two items' word sets, 0.0 to 1.0 (1.0 when they
    normalise to the same text)."""
    if normalize_item(a) == normalize_item(b):
        return 1.0
    first, second = words(a), words(b)
    union = first | second
    return len(first & second) / len(union) if union else 0.0
