"""What clients hold on to stays as it is (issue 28): the exported GraphQL
schema, the MCP tool names and every stored hash, compared with literals taken
from the code at 8cec1e0.

A refactor may move any of these computations; it may not change their
results. A change that means to (a new schema field, a new tool) updates the
literal here in the same commit, on purpose. (That the printed schema equals
schema.graphql is tests/test_schema.py's.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mcp import Client

from api.app import create_app
from api.domain.accounts import secret_hash
from api.domain.export_format import Branch, Export, SpaceExport, from_document, to_document
from api.domain.hashing import canonical_encoding, checkpoint_hash, verify_chain
from api.domain.identity import implicit_item_ids
from api.domain.types import Checkpoint, CheckpointContent, ItemIds, Space
from api.domain.verification import verify_lineage
from api.mcp.server import build_server
from api.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_SHA256 = "15bf6376582b1a4dba0aeb4448a636ea938d99fe2e64820d1ee16edf7636a823"

MCP_TOOL_NAMES = [
    "branch_session",
    "compare_checkpoints",
    "continue_reply",
    "create_space",
    "edit_and_resend",
    "fork",
    "list_checkpoints",
    "list_spaces",
    "merge",
    "preview_merge",
    "regenerate",
    "save_checkpoint",
    "search",
    "send_message",
    "show_checkpoint",
    "show_session",
    "space_state",
    "start_session",
    "update_session_settings",
    "verify_lineage",
]


def test_the_exported_schema_is_todays() -> None:
    text = (ROOT / "schema.graphql").read_bytes()
    assert hashlib.sha256(text).hexdigest() == SCHEMA_SHA256


async def test_the_mcp_tool_names_are_todays(settings: Settings) -> None:
    app = create_app(settings)
    async with app.router.lifespan_context(app):

        async def nobody(context: object) -> None:
            return None  # listing the tools asks nobody

        server = build_server(nobody, app.state.services)
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
    assert sorted(tool.name for tool in tools) == MCP_TOOL_NAMES


# A small fixed world: a space (7) whose main line has a root with every
# content field and its items' ids, and a second checkpoint; a branch "idea"
# from the root; a merge of idea into main; and a checkpoint saved before items
# had ids (its ids implicit, derived from its hash).
T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
SPACE = 7
IDS = ItemIds(
    decisions=("d00000000001", "d00000000002"),
    tasks=("t00000000001", "t00000000002"),
    open_questions=("q00000000001",),
    entities=("e00000000001", "e00000000002"),
)
FULL = CheckpointContent(
    title="Trip \u2708",
    objective="Plan \u2013 two weeks",
    summary='Line one\nline "two"',
    decisions=("Fly via Singapore", "Caf\u00e9 first"),
    tasks=("Book hotels", "Apply for visa"),
    open_questions=("Visa?",),
    entities=("Singapore", "Perth"),
    item_ids=IDS,
)


def sealed(
    id: int,
    content: CheckpointContent,
    *,
    parent: Checkpoint | None,
    branch: str,
    merged: Checkpoint | None = None,
    author: str = "ana",
) -> Checkpoint:
    created_at = T0 + timedelta(minutes=id)
    digest = checkpoint_hash(
        content,
        space_id=SPACE,
        parent_hash=parent.hash if parent else None,
        created_at=created_at,
        branch_name=branch,
        author_agent=author,
        merge_parent_hash=merged.hash if merged else None,
    )
    return Checkpoint(
        id=id,
        hash=digest,
        space_id=SPACE,
        parent_id=parent.id if parent else None,
        branch_name=branch,
        content=content,
        author_agent=author,
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        created_at=created_at,
        merge_parent_id=merged.id if merged else None,
    )


def world() -> list[Checkpoint]:
    root = sealed(1, FULL, parent=None, branch="main")
    second = sealed(
        2,
        dataclasses.replace(
            FULL,
            summary="Booked.",
            tasks=("Apply for visa",),
            item_ids=dataclasses.replace(IDS, tasks=("t00000000002",)),
        ),
        parent=root,
        branch="main",
    )
    idea = sealed(
        3,
        dataclasses.replace(
            FULL,
            decisions=(*FULL.decisions, "Take the train"),
            item_ids=dataclasses.replace(IDS, decisions=(*IDS.decisions, "d00000000003")),
        ),
        parent=root,
        branch="idea",
        author="ben",
    )
    merge = sealed(
        4,
        dataclasses.replace(
            second.content,
            title="Merged",
            decisions=idea.content.decisions,
            item_ids=dataclasses.replace(
                IDS, tasks=("t00000000002",), decisions=(*IDS.decisions, "d00000000003")
            ),
        ),
        parent=second,
        branch="main",
        merged=idea,
    )
    before_ids = sealed(5, dataclasses.replace(FULL, item_ids=None), parent=merge, branch="main")
    return [root, second, idea, merge, before_ids]


HASHES = [
    "fda31828e684b72d13d09f1b666fb8c98370036419fba1ae481616c47e3eebda",  # root: every field, item ids
    "3d063503bb336924c827c0ff589b73f4650ad6a7ea578f1bbf1f26f0025a9ad7",  # main after it
    "8abbbf446134d530cd7aeabfc9dd6b94c26c0fced1141f495515f85829d8721e",  # idea, from the root
    "358374167681ef40518eab1e77a3a1e4b5449c1f4f1db77eb084db09a321bbd9",  # the merge of idea into main
    "a30cef67dd2b83b8392ed18d0b588558186fced1242a15814182acb784eee0b6",  # saved before items had ids
]
# The root's canonical encoding (what its hash digests), whole.
ROOT_ENCODING = (
    '{"authorAgent":"ana","branchName":"main","createdAt":"2024-05-01T12:01:00.123456Z",'
    '"decisions":["Fly via Singapore","Caf\u00e9 first"],"entities":["Singapore","Perth"],'
    '"itemIds":{"decisions":["d00000000001","d00000000002"],'
    '"entities":["e00000000001","e00000000002"],"openQuestions":["q00000000001"],'
    '"tasks":["t00000000001","t00000000002"]},"objective":"Plan \u2013 two weeks",'
    '"openQuestions":["Visa?"],"parentHash":null,"spaceId":7,'
    '"summary":"Line one\\nline \\"two\\"","tasks":["Book hotels","Apply for visa"],'
    '"title":"Trip \u2708"}'
)
IMPLICIT_IDS = {
    "decisions": ["d5b6fcd4b6a3", "6d155f06e503"],
    "tasks": ["92a0596e5763", "e027b0175536"],
    "openQuestions": ["b4ce0dc6b250"],
    "entities": ["ad74edb90e44", "451e3f26cfb1"],
}
TOKEN_HASH = "a2e91f27f2e4f096405d8a35113a5db38303dea8675eedcda34ad058042ce1dc"
# The export document of the world (its JSON, keys sorted), by its SHA-256.
EXPORT_SHA256 = "5c9cf90327de8dbc0b2e95405346d694dfd1ae5c2a44c09730438e698aac0353"


def test_every_kind_of_checkpoint_keeps_its_hash() -> None:
    checkpoints = world()
    assert [c.hash for c in checkpoints] == HASHES
    root = checkpoints[0]
    encoded = canonical_encoding(
        root.content,
        space_id=SPACE,
        parent_hash=None,
        created_at=root.created_at,
        branch_name="main",
        author_agent="ana",
    )
    assert encoded.decode() == ROOT_ENCODING


def test_the_chain_verifies_with_todays_hashes() -> None:
    checkpoints = world()
    main_line = [checkpoints[0], checkpoints[1], checkpoints[3], checkpoints[4]]
    assert verify_chain(main_line, known_hashes={3: HASHES[2]}) is None
    verified = verify_lineage(checkpoints)
    assert (verified.checked, verified.broken) == (5, None)


def test_implicit_item_ids_are_todays() -> None:
    before_ids = world()[4]
    assert implicit_item_ids(before_ids.hash, before_ids.content).by_name() == IMPLICIT_IDS


def test_a_stored_token_hash_is_todays() -> None:
    assert secret_hash("smr_" + "a" * 43) == TOKEN_HASH


def test_the_export_of_the_world_is_todays() -> None:
    checkpoints = world()
    space = Space(id=SPACE, name="Trips", description="", owner_id=1, created_at=T0, updated_at=T0)
    export = Export(
        spaces=(
            SpaceExport(
                space=space,
                hash_space_id=SPACE,
                branches=(
                    Branch("main", 5, T0, T0 + timedelta(minutes=5)),
                    Branch("idea", 3, T0, T0 + timedelta(minutes=3)),
                ),
                checkpoints=tuple(checkpoints),
                sessions=(),
            ),
        ),
        sessions=(),
    )
    document = to_document(export, exported_at=T0 + timedelta(days=1))
    text = json.dumps(document, sort_keys=True, ensure_ascii=False)
    assert hashlib.sha256(text.encode()).hexdigest() == EXPORT_SHA256
    assert [c["hash"] for c in document["spaces"][0]["checkpoints"]] == HASHES
    read = from_document(json.loads(text)).spaces[0]
    assert [c.hash for c in read.checkpoints] == HASHES
    assert verify_lineage(read.checkpoints, hash_space_id=SPACE).broken is None
