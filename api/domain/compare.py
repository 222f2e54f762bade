"""Comparing two checkpoints (docs/architecture.md#comparing-and-merging).

Items of a list field match when they say the same thing up to case,
punctuation and spacing: "Use Postgres." and "use  postgres" are one item.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .types import CONTENT_LIST_FIELDS, ByListField, Checkpoint, gather_lists


@dataclass(frozen=True, slots=True)
class FieldComparison:
    only_a: tuple[str, ...]  # in a's order
    only_b: tuple[str, ...]  # in b's order
    shared: tuple[str, ...]  # in a's order and spelling


@dataclass(frozen=True, slots=True, init=False)
class Comparison(ByListField[FieldComparison]):
    """Two checkpoints, each list field compared (``comparison.decisions``)."""

    a: Checkpoint
    b: Checkpoint
    lists: tuple[tuple[str, FieldComparison], ...]
    common_ancestor: Checkpoint | None

    def __init__(
        self,
        a: Checkpoint,
        b: Checkpoint,
        common_ancestor: Checkpoint | None,
        *,
        lists: Any = None,  # the pairs, as dataclasses.replace passes them back
        **by_attr: FieldComparison,
    ) -> None:
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "lists", gather_lists(by_attr, lists, None, "Comparison"))
        object.__setattr__(self, "common_ancestor", common_ancestor)


def compare_checkpoints(
    a: Checkpoint,
    b: Checkpoint,
    ancestors_a: Sequence[Checkpoint],
    ancestors_b: Sequence[Checkpoint],
) -> Comparison:
    """Compare the list fields of ``a`` and ``b`` and find their common ancestor.

    ``ancestors_a`` and ``ancestors_b`` are each checkpoint's ancestors, nearest
    first (as a parent walk reads them). The common ancestor is the nearest
    checkpoint on both chains, where a chain starts with the checkpoint itself;
    so when ``a`` is an ancestor of ``b`` it is ``a``.
    """
    return Comparison(
        a=a,
        b=b,
        **{
            f.attr: compare_items(getattr(a.content, f.attr), getattr(b.content, f.attr))
            for f in CONTENT_LIST_FIELDS
        },
        common_ancestor=_common_ancestor([a, *ancestors_a], [b, *ancestors_b]),
    )


def compare_items(items_a: Sequence[str], items_b: Sequence[str]) -> FieldComparison:
    """Split two lists into only-a, only-b and shared items (see module doc).

    An item repeated within one list (up to normalisation) is reported once.
    """
    keys_b = {normalize_item(item) for item in items_b}
    only_a: list[str] = []
    shared: list[str] = []
    seen: set[str] = set()
    for item in items_a:
        key = normalize_item(item)
        if key in seen:
            continue
        seen.add(key)
        (shared if key in keys_b else only_a).append(item)
    only_b: list[str] = []
    for item in items_b:
        key = normalize_item(item)
        if key not in seen:  # neither shared nor a repeat within b
            seen.add(key)
            only_b.append(item)
    return FieldComparison(tuple(only_a), tuple(only_b), tuple(shared))


def normalize_item(item: str) -> str:
    """The matching key of a list item: casefolded, no punctuation, single spaces."""
    folded = unicodedata.normalize("NFKC", item).casefold()
    kept = "".join(ch for ch in folded if not unicodedata.category(ch).startswith("P"))
    key = " ".join(kept.split())
    # An item that is all punctuation ("?", "…") would otherwise match every
    # other such item; keep it distinct by its own spelling.
    return key if key else " ".join(folded.split())


def _common_ancestor(
    chain_a: Sequence[Checkpoint], chain_b: Sequence[Checkpoint]
) -> Checkpoint | None:
    ids_b = {checkpoint.id for checkpoint in chain_b}
    return next((checkpoint for checkpoint in chain_a if checkpoint.id in ids_b), None)
