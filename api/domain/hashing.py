"""Checkpoint hashes — what makes a lineage tamper-evident (docs/architecture.md#hashes).

The hash is SHA-256 over a canonical encoding: a JSON object with sorted
keys, no whitespace, non-ASCII kept as UTF-8, list order kept. Its keys are

    authorAgent, branchName, createdAt, decisions, entities, objective,
    openQuestions, parentHash, spaceId, summary, tasks, title

with ``createdAt`` as UTC ISO-8601 with microseconds and a ``Z``
(``2024-05-01T12:00:00.000000Z``) and ``parentHash`` null for a root. A
merge checkpoint has one more key, ``mergeParentHash`` (the merged-in
checkpoint's hash); other checkpoints do not have it, so their hashes are
the same as before merges existed. Likewise a checkpoint whose items have
identities (``api.domain.identity``; every checkpoint saved since they
exist) has the key ``itemIds``: per list field (by its GraphQL name,
``decisions``, ``entities``, ``openQuestions``, ``tasks``) the list of its
items' ids, in the items' order. A checkpoint saved before has no stored ids
(its implicit ids are not hashed) and no ``itemIds`` key, so its hash is
unchanged. A list field added to the registry after these (``FIRST_FIELDS``)
is in the encoding, and in ``itemIds``, only when it has items: every hash
made before the field existed stays the same. Anyone holding the checkpoints
can recompute the chain with ``verify_chain``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ..errors import ErrorCode, InputError
from .types import Checkpoint, CheckpointContent

# The content keys every hash has held since the first checkpoint: history,
# like a migration, so never derived from the registry.
FIRST_FIELDS = frozenset(
    ("title", "objective", "summary", "decisions", "tasks", "openQuestions", "entities")
)

_HASH_PREFIX = re.compile(r"[0-9a-f]{4,64}")


def canonical_encoding(
    content: CheckpointContent,
    *,
    space_id: int,
    parent_hash: str | None,
    created_at: datetime,
    branch_name: str,
    author_agent: str,
    merge_parent_hash: str | None = None,
) -> bytes:
    """The exact bytes ``checkpoint_hash`` digests."""
    fields = {
        name: value for name, value in content.by_name().items() if name in FIRST_FIELDS or value
    }
    document = {
        "authorAgent": author_agent,
        "branchName": branch_name,
        "createdAt": utc_timestamp(created_at),
        **fields,
        "parentHash": parent_hash,
        "spaceId": space_id,
    }
    if merge_parent_hash is not None:
        document["mergeParentHash"] = merge_parent_hash
    if content.item_ids is not None:
        document["itemIds"] = {
            name: ids for name, ids in content.item_ids.by_name().items() if name in fields
        }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def checkpoint_hash(
    content: CheckpointContent,
    *,
    space_id: int,
    parent_hash: str | None,
    created_at: datetime,
    branch_name: str,
    author_agent: str,
    merge_parent_hash: str | None = None,
) -> str:
    """SHA-256 (lowercase hex) of the checkpoint's canonical encoding."""
    encoded = canonical_encoding(
        content,
        space_id=space_id,
        parent_hash=parent_hash,
        created_at=created_at,
        branch_name=branch_name,
        author_agent=author_agent,
        merge_parent_hash=merge_parent_hash,
    )
    return hashlib.sha256(encoded).hexdigest()


def verify_chain(
    checkpoints_oldest_first: Sequence[Checkpoint],
    *,
    root_parent_hash: str | None = None,
    known_hashes: Mapping[int, str] | None = None,
) -> int | None:
    """Index of the first checkpoint that does not verify, or None if all do.

    Each checkpoint's parent is taken to be the previous one; the first one's
    parent hash is ``root_parent_hash`` (None: the first is a root). A
    checkpoint whose ``parent_id`` does not name the previous checkpoint fails
    too: its stored link and the chain disagree. A merge checkpoint's merge
    parent is looked up among the checkpoints before it in the chain and in
    ``known_hashes`` (id to hash); one found in neither fails.
    """
    hashes = dict(known_hashes or {})
    parent: Checkpoint | None = None
    for index, checkpoint in enumerate(checkpoints_oldest_first):
        parent_hash = root_parent_hash if parent is None else parent.hash
        if parent is not None and checkpoint.parent_id != parent.id:
            return index
        merge_parent_hash = None
        if checkpoint.merge_parent_id is not None:
            merge_parent_hash = hashes.get(checkpoint.merge_parent_id)
            if merge_parent_hash is None:
                return index
        expected = checkpoint_hash(
            checkpoint.content,
            space_id=checkpoint.space_id,
            parent_hash=parent_hash,
            created_at=checkpoint.created_at,
            branch_name=checkpoint.branch_name,
            author_agent=checkpoint.author_agent,
            merge_parent_hash=merge_parent_hash,
        )
        if expected != checkpoint.hash:
            return index
        hashes[checkpoint.id] = checkpoint.hash
        parent = checkpoint
    return None


def normalize_hash_prefix(prefix: str) -> str:
    """A user-typed hash prefix, lowercased; 4 to 64 hex characters or InputError."""
    candidate = prefix.strip().lower()
    if not _HASH_PREFIX.fullmatch(candidate):
        raise InputError(
            "A checkpoint hash is 4 to 64 hexadecimal characters (0-9, a-f).",
            code=ErrorCode.INVALID,
            field="hash",
        )
    return candidate


def utc_timestamp(moment: datetime) -> str:
    # A naive datetime is taken as UTC: SQLite hands timestamps back without a
    # zone, and the same checkpoint must hash the same on every database.
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"
