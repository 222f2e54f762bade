"""Checkpoint hashes (docs/architecture.md#hashes): canonical, tamper-evident, resolvable by prefix."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from api.domain.hashing import (
    canonical_encoding,
    checkpoint_hash,
    normalize_hash_prefix,
    verify_chain,
)
from api.domain.types import CheckpointContent, ItemIds
from api.errors import ErrorCode, InputError
from tests.domain.builders import checkpoint, lineage

CONTENT = CheckpointContent(
    title="Trip \u2708",
    objective="Plan \u2013 two weeks",
    summary='Line one\nline "two"',
    decisions=("Fly via Singapore", "Caf\u00e9 first"),
    tasks=("Book hotels", "Apply for visa"),
    open_questions=("Visa?",),
    entities=("Singapore", "Perth"),
)
# 14:30:45.123456 at UTC+2 is 12:30:45.123456Z.
CREATED = datetime(2024, 5, 1, 14, 30, 45, 123456, tzinfo=timezone(timedelta(hours=2)))

# The documented encoding written out by hand: sorted keys, no whitespace,
# non-ASCII as UTF-8 (not \u escapes), lists in order, UTC time with 'Z'.
CANONICAL = (
    '{"authorAgent":"ana","branchName":"trip/nz","createdAt":"2024-05-01T12:30:45.123456Z",'
    '"decisions":["Fly via Singapore","Caf\u00e9 first"],"entities":["Singapore","Perth"],'
    '"objective":"Plan \u2013 two weeks","openQuestions":["Visa?"],"parentHash":null,'
    '"spaceId":7,"summary":"Line one\\nline \\"two\\"",'
    '"tasks":["Book hotels","Apply for visa"],"title":"Trip \u2708"}'
)
KNOWN_DIGEST = "4d5747a95a64abf9bf3f35ed30c720d3f69e50c340f21e12a05b460ffa613241"


def digest(
    content: CheckpointContent = CONTENT,
    *,
    space_id: int = 7,
    parent_hash: str | None = None,
    created_at: datetime = CREATED,
    branch_name: str = "trip/nz",
    author_agent: str = "ana",
) -> str:
    return checkpoint_hash(
        content,
        space_id=space_id,
        parent_hash=parent_hash,
        created_at=created_at,
        branch_name=branch_name,
        author_agent=author_agent,
    )


def test_known_digest_of_the_canonical_encoding() -> None:
    assert hashlib.sha256(CANONICAL.encode("utf-8")).hexdigest() == KNOWN_DIGEST
    assert digest() == KNOWN_DIGEST


def test_parent_hash_is_part_of_the_encoding() -> None:
    parent = "ab" * 32
    expected = hashlib.sha256(
        CANONICAL.replace('"parentHash":null', f'"parentHash":"{parent}"').encode("utf-8")
    ).hexdigest()
    assert digest(parent_hash=parent) == expected


def test_naive_time_is_taken_as_utc() -> None:
    naive = datetime(2024, 5, 1, 12, 30, 45, 123456)
    assert digest(created_at=naive) == KNOWN_DIGEST
    assert digest(created_at=naive.replace(tzinfo=UTC)) == KNOWN_DIGEST


@pytest.mark.parametrize(
    "change",
    [
        {"space_id": 8},
        {"parent_hash": "0" * 64},
        {"created_at": CREATED + timedelta(microseconds=1)},
        {"branch_name": "main"},
        {"author_agent": "model"},
        {"content": dataclasses.replace(CONTENT, title="Trip")},
        {"content": dataclasses.replace(CONTENT, objective="")},
        {"content": dataclasses.replace(CONTENT, summary="Line one")},
        {"content": dataclasses.replace(CONTENT, decisions=CONTENT.decisions[::-1])},
        {"content": dataclasses.replace(CONTENT, tasks=CONTENT.tasks[:1])},
        {"content": dataclasses.replace(CONTENT, open_questions=())},
        {"content": dataclasses.replace(CONTENT, entities=CONTENT.entities[::-1])},
        # An item moved between lists is a different checkpoint.
        {"content": dataclasses.replace(CONTENT, open_questions=(), entities=("Visa?",))},
    ],
    ids=lambda change: next(iter(change)),
)
def test_every_input_changes_the_hash(change: dict[str, object]) -> None:
    assert digest(**change) != KNOWN_DIGEST  # type: ignore[arg-type]


def test_an_untouched_chain_verifies() -> None:
    assert verify_chain(lineage(4)) is None
    assert verify_chain([]) is None


def test_a_changed_field_is_found() -> None:
    chain = lineage(4)
    tampered = dataclasses.replace(
        chain[1], content=dataclasses.replace(chain[1].content, summary="rewritten")
    )
    assert verify_chain([chain[0], tampered, *chain[2:]]) == 1


def test_a_rewritten_hash_breaks_the_child() -> None:
    # Re-hashing a tampered checkpoint makes it verify, but its child was
    # hashed over the old parent hash.
    chain = lineage(3)
    body = dataclasses.replace(chain[1].content, title="rewritten")
    forged = checkpoint(2, parent=chain[0], body=body)
    assert verify_chain([chain[0], forged, chain[2]]) == 2


def test_a_checkpoint_moved_to_another_parent_is_found() -> None:
    chain = lineage(3)
    other_root = checkpoint(9, title="Other root")
    assert verify_chain([other_root, chain[1], chain[2]]) == 1


def test_a_link_to_a_lookalike_is_found() -> None:
    # Same content, time and parent as the real parent, so the same hash: only
    # the stored link tells them apart.
    chain = lineage(2)
    lookalike = dataclasses.replace(chain[0], id=99)
    assert verify_chain([lookalike, chain[1]]) == 1


def test_a_partial_chain_verifies_from_its_parent_hash() -> None:
    chain = lineage(4)
    assert verify_chain(chain[2:], root_parent_hash=chain[1].hash) is None
    assert verify_chain(chain[2:]) == 0


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [("a1b2", "a1b2"), ("A1B2C3D", "a1b2c3d"), (" abcd\n", "abcd"), ("f" * 64, "f" * 64)],
)
def test_hash_prefix_is_normalized(prefix: str, expected: str) -> None:
    assert normalize_hash_prefix(prefix) == expected


@pytest.mark.parametrize("prefix", ["", "abc", "f" * 65, "abcg", "ab cd", "0x1234", "\uff11234"])
def test_a_bad_hash_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(InputError) as caught:
        normalize_hash_prefix(prefix)
    assert (caught.value.code, caught.value.field) == (ErrorCode.INVALID, "hash")


def test_a_merge_parent_adds_one_key_and_other_hashes_are_unchanged() -> None:
    merged_in = "cd" * 32
    expected = hashlib.sha256(
        # Sorted keys: mergeParentHash comes between entities and objective.
        CANONICAL.replace('"objective"', f'"mergeParentHash":"{merged_in}","objective"').encode(
            "utf-8"
        )
    ).hexdigest()
    assert (
        checkpoint_hash(
            CONTENT,
            space_id=7,
            parent_hash=None,
            created_at=CREATED,
            branch_name="trip/nz",
            author_agent="ana",
            merge_parent_hash=merged_in,
        )
        == expected
    )
    # No merge parent: the encoding has no such key, the digest is the old one.
    assert (
        checkpoint_hash(
            CONTENT,
            space_id=7,
            parent_hash=None,
            created_at=CREATED,
            branch_name="trip/nz",
            author_agent="ana",
            merge_parent_hash=None,
        )
        == KNOWN_DIGEST
    )


def test_verify_chain_checks_a_merge_parent() -> None:
    main = lineage(2)
    side = checkpoint(10, parent=main[0], branch_name="alt")
    body = CheckpointContent(title="Merged")
    created_at = main[1].created_at + timedelta(minutes=5)
    merge = dataclasses.replace(
        main[1],
        id=3,
        parent_id=main[1].id,
        content=body,
        created_at=created_at,
        merge_parent_id=side.id,
        hash=checkpoint_hash(
            body,
            space_id=10,
            parent_hash=main[1].hash,
            created_at=created_at,
            branch_name="main",
            author_agent="user",
            merge_parent_hash=side.hash,
        ),
    )
    assert verify_chain([*main, merge], known_hashes={side.id: side.hash}) is None
    assert verify_chain([*main, merge]) == 2  # merge parent unknown
    assert verify_chain([*main, merge], known_hashes={side.id: main[0].hash}) == 2
    unmerged = dataclasses.replace(merge, merge_parent_id=None)
    assert verify_chain([*main, unmerged]) == 2  # the link was dropped: hash disagrees


# Item identities (issue 18): one more key, only for a checkpoint that has them.
WITH_IDS = dataclasses.replace(
    CONTENT,
    item_ids=ItemIds(
        decisions=("d1", "d2"), tasks=("t1", "t2"), open_questions=("q1",), entities=("e1", "e2")
    ),
)


def test_a_checkpoint_with_item_ids_hashes_them_under_one_more_key() -> None:
    canonical = CANONICAL.replace(
        '"entities":["Singapore","Perth"],',
        '"entities":["Singapore","Perth"],"itemIds":{"decisions":["d1","d2"],'
        '"entities":["e1","e2"],"openQuestions":["q1"],"tasks":["t1","t2"]},',
    )
    # Keys sorted at every level; each list of ids in its items' order.
    assert canonical_encoding(
        WITH_IDS,
        space_id=7,
        parent_hash=None,
        created_at=CREATED,
        branch_name="trip/nz",
        author_agent="ana",
    ) == canonical.encode("utf-8")
    assert digest(WITH_IDS) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert digest(WITH_IDS) != KNOWN_DIGEST
    # A checkpoint without ids (saved before they existed) hashes as before.
    assert digest(dataclasses.replace(WITH_IDS, item_ids=None)) == KNOWN_DIGEST


def test_changing_one_item_id_changes_the_hash() -> None:
    assert WITH_IDS.item_ids is not None
    moved = dataclasses.replace(
        WITH_IDS, item_ids=dataclasses.replace(WITH_IDS.item_ids, open_questions=("q2",))
    )
    assert digest(moved) != digest(WITH_IDS)
