"""Items with identity, and the merge on identity, through the real app
(issue 18 §1 and §2; SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from api.domain.hashing import checkpoint_hash
from api.domain.identity import implicit_item_ids
from api.domain.types import CheckpointContent
from tests.support.graphql import GraphQLClient
from tests.support.merging import fork
from tests.support.ops import ERRORS, create_session, create_space, send
from tests.support.transfer import IMPORT, SCHEMA, VERIFY, export_document

RENT = "Rent a campervan for the Queensland coast"
RENT_4WD = "Rent a 4WD campervan for the Queensland coast"
TRAIN = "Take the train"

ITEMS = "decisionItems { id text } taskItems { id text }"
SAVE = f"""mutation($input: CreateCheckpointInput!) {{ createCheckpoint(input: $input) {{
  checkpoint {{ id hash decisions tasks {ITEMS} }} {ERRORS} }} }}"""
FIELD = """items { id text origin matchedBy } conflicts { text origin }
  itemConflicts { id ancestorText intoBranch intoText intoChange fromBranch fromText
    fromChange description matchedBy }
  dropped { id text removedOn keptOn matchedBy }
  similarityMatches { id ancestorText intoText fromText similarity }"""
PREVIEW = f"""query($input: PreviewMergeInput!) {{ previewMerge(input: $input) {{
  conflictCount decisions {{ {FIELD} }} tasks {{ {FIELD} }} }} }}"""
MERGE = f"""mutation($input: MergeCheckpointsInput!) {{ mergeCheckpoints(input: $input) {{
  checkpoint {{ id decisions tasks {ITEMS} mergeParent {{ id }} }} fastForward {ERRORS} }} }}"""
CHECKPOINT_ITEMS = f"query($id: ID!) {{ checkpoint(id: $id) {{ hash {ITEMS} }} }}"


async def save(gql: GraphQLClient, session: str, title: str, **fields: Any) -> dict[str, Any]:
    data = (await gql(SAVE, input={"sessionId": session, "title": title, **fields}))[
        "createCheckpoint"
    ]
    assert data["errors"] == [], data
    saved: dict[str, Any] = data["checkpoint"]
    return saved


async def refused(gql: GraphQLClient, session: str, **fields: Any) -> list[dict[str, Any]]:
    data = await gql(SAVE, input={"sessionId": session, "title": "x", **fields})
    assert data["createCheckpoint"]["checkpoint"] is None
    errors: list[dict[str, Any]] = data["createCheckpoint"]["errors"]
    return errors


async def trip(gql: GraphQLClient) -> dict[str, Any]:
    """The issue's case: on `rail` the campervan is removed and the train
    added; on `main` the campervan is edited to a 4WD one. Task "Pick a host"
    is removed on rail and untouched on main."""
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await save(gql, main, "Base", decisions=[RENT], tasks=["Pick a host", "Pack"])
    rent, host, pack = base["decisionItems"][0], *base["taskItems"]
    rail = await fork(gql, base["id"], "rail")
    await send(gql, rail, "rail work")
    r1 = await save(
        gql,
        rail,
        "R1",
        decisionItems=[{"text": TRAIN}],
        taskItems=[{"id": pack["id"], "text": "Pack"}],
    )
    m1 = await save(
        gql,
        main,
        "M1",
        decisionItems=[{"id": rent["id"], "text": RENT_4WD}],
        taskItems=[{"id": host["id"], "text": "Pick a host"}, {"id": pack["id"], "text": "Pack"}],
    )
    return {
        "space": space,
        "main": main,
        "rail": rail,
        "base": base,
        "r1": r1,
        "m1": m1,
        "rent": rent["id"],
        "host": host["id"],
        "pack": pack["id"],
    }


async def test_ids_are_given_kept_through_edits_and_matched_for_plain_text(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await save(gql, main, "Base", decisions=["Use Postgres", "Use SQLite"])
    first, second = base["decisionItems"]
    assert [first["text"], second["text"]] == ["Use Postgres", "Use SQLite"]
    assert len(first["id"]) == 12 and int(first["id"], 16) >= 0 and first["id"] != second["id"]
    # An edit sent with the id keeps it; a new item gets a new one.
    edited = await save(
        gql,
        main,
        "Edited",
        decisionItems=[{"id": first["id"], "text": "Use PostgreSQL 16"}, {"text": "Cache"}],
    )
    assert edited["decisions"] == ["Use PostgreSQL 16", "Cache"]
    assert edited["decisionItems"][0] == {"id": first["id"], "text": "Use PostgreSQL 16"}
    assert edited["decisionItems"][1]["id"] not in (first["id"], second["id"])
    # Plain strings: the parent's item with the same text (up to case and
    # punctuation) keeps its id; anything else is new.
    plain = await save(gql, main, "Plain", decisions=["use postgresql 16!", "Cache", "New"])
    assert [i["id"] for i in plain["decisionItems"][:2]] == [
        first["id"],
        edited["decisionItems"][1]["id"],
    ]
    assert plain["decisionItems"][2]["id"] not in {i["id"] for i in edited["decisionItems"]}
    # The ids are part of the checkpoint: read back the same.
    again = (await gql(CHECKPOINT_ITEMS, id=plain["id"]))["checkpoint"]
    assert again["decisionItems"] == plain["decisionItems"]


async def test_items_and_ids_that_do_not_fit_are_refused(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    await save(gql, main, "Base", decisions=["a"])
    assert await refused(gql, main, decisions=["a"], decisionItems=[{"text": "a"}]) == [
        {
            "code": "INVALID",
            "message": "Give decisions or decisionItems, not both.",
            "field": "decisionItems",
        }
    ]
    assert await refused(gql, main, openQuestionItems=[{"id": "nowhere", "text": "q"}]) == [
        {
            "code": "INVALID",
            "message": 'openQuestionItems names item "nowhere", which the checkpoint this one '
            "continues does not have; leave the id out for a new item.",
            "field": "openQuestionItems",
        }
    ]
    assert await refused(gql, main, taskItems=[{"id": "no spaces", "text": "t"}]) == [
        {
            "code": "INVALID",
            "message": "An item id in taskItems is 1 to 64 letters, digits, '-' or '_'.",
            "field": "taskItems",
        }
    ]


async def test_the_issues_merge_is_a_conflict_by_branch_name_and_shows_what_is_dropped(
    gql: GraphQLClient,
) -> None:
    lab = await trip(gql)
    train = lab["r1"]["decisionItems"][0]["id"]
    preview = (
        await gql(PREVIEW, input={"spaceId": lab["space"], "into": "main", "from": lab["r1"]["id"]})
    )["previewMerge"]
    assert preview["conflictCount"] == 1
    assert preview["decisions"] == {
        "items": [{"id": train, "text": TRAIN, "origin": "THEIRS", "matchedBy": "IDENTITY"}],
        "conflicts": [{"text": RENT_4WD, "origin": "OURS"}],
        "itemConflicts": [
            {
                "id": lab["rent"],
                "ancestorText": RENT,
                "intoBranch": "main",
                "intoText": RENT_4WD,
                "intoChange": "EDITED",
                "fromBranch": "rail",
                "fromText": None,
                "fromChange": "REMOVED",
                "description": "removed on rail, edited on main",
                "matchedBy": "IDENTITY",
            }
        ],
        "dropped": [],
        "similarityMatches": [],
    }
    assert preview["tasks"]["items"] == [
        {"id": lab["pack"], "text": "Pack", "origin": "ANCESTOR", "matchedBy": "IDENTITY"}
    ]
    assert preview["tasks"]["dropped"] == [
        {
            "id": lab["host"],
            "text": "Pick a host",
            "removedOn": "rail",
            "keptOn": "main",
            "matchedBy": "IDENTITY",
        }
    ]
    into_main = {"spaceId": lab["space"], "into": "main", "from": lab["r1"]["id"], "title": "M"}
    undecided = (await gql(MERGE, input=into_main))["mergeCheckpoints"]
    assert undecided["errors"] == [
        {
            "code": "CONFLICT",
            "message": f'Resolve the conflict on decisions "{RENT}": keep a side\'s text or '
            "drop it.",
            "field": "resolutions",
        }
    ]
    resolution = {"field": "DECISIONS", "itemId": lab["rent"], "take": "INTO"}
    merged = (await gql(MERGE, input={**into_main, "resolutions": [resolution]}))[
        "mergeCheckpoints"
    ]
    assert merged["errors"] == []
    saved = merged["checkpoint"]
    # Every item keeps its identity through the merge.
    assert saved["decisionItems"] == [
        {"id": lab["rent"], "text": RENT_4WD},
        {"id": train, "text": TRAIN},
    ]
    assert saved["taskItems"] == [{"id": lab["pack"], "text": "Pack"}]
    assert (await gql(VERIFY, s=lab["space"]))["verifyLineage"] == {"ok": True, "checked": 4}


async def test_the_same_case_from_a_client_without_ids_matches_by_similarity(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await save(gql, main, "Base", decisions=[RENT])
    rail = await fork(gql, base["id"], "rail")
    await send(gql, rail, "rail work")
    r1 = await save(gql, rail, "R1", decisions=[TRAIN])
    await save(gql, main, "M1", decisions=[RENT_4WD])  # plain text: a new id
    preview = (await gql(PREVIEW, input={"spaceId": space, "into": "main", "from": r1["id"]}))[
        "previewMerge"
    ]
    rent = base["decisionItems"][0]["id"]
    [conflict] = preview["decisions"]["itemConflicts"]
    assert (conflict["id"], conflict["description"], conflict["matchedBy"]) == (
        rent,
        "removed on rail, edited on main",
        "SIMILARITY",
    )
    assert preview["decisions"]["similarityMatches"] == [
        {
            "id": rent,
            "ancestorText": RENT,
            "intoText": RENT_4WD,
            "fromText": None,
            "similarity": 0.875,
        }
    ]
    dropped = (
        await gql(
            MERGE,
            input={
                "spaceId": space,
                "into": "main",
                "from": r1["id"],
                "title": "M",
                "resolutions": [{"field": "DECISIONS", "item": RENT, "keep": False}],
            },
        )
    )["mergeCheckpoints"]
    assert dropped["checkpoint"]["decisions"] == [TRAIN]


async def test_ids_survive_export_and_import_and_verify(gql: GraphQLClient) -> None:
    lab = await trip(gql)
    document = await export_document(gql, lab["space"])
    jsonschema.validate(document, SCHEMA)
    by_title = {c["title"]: c for c in document["spaces"][0]["checkpoints"]}
    assert by_title["M1"]["itemIds"] == {
        "decisions": [lab["rent"]],
        "tasks": [lab["host"], lab["pack"]],
        "openQuestions": [],
        "entities": [],
    }
    imported = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert imported["errors"] == []
    copy = imported["spaces"][0]["id"]
    assert (await gql(VERIFY, s=copy))["verifyLineage"] == {"ok": True, "checked": 3}
    again = await export_document(gql, copy)
    assert [c["itemIds"] for c in again["spaces"][0]["checkpoints"]] == [
        c["itemIds"] for c in document["spaces"][0]["checkpoints"]
    ]
    # Ids that do not line up with the items are refused, naming the field.
    broken = json.loads(json.dumps(document))
    broken["spaces"][0]["checkpoints"][0]["itemIds"]["tasks"] = ["only-one"]
    errors = (await gql(IMPORT, d=json.dumps(broken)))["importSpace"]["errors"]
    assert errors == [
        {
            "code": "INVALID",
            "message": "document.spaces[0].checkpoints[0].itemIds.tasks must be as many ids "
            "as document.spaces[0].checkpoints[0].tasks has items.",
            "field": "document.spaces[0].checkpoints[0].itemIds.tasks",
        }
    ]


def as_old_export(document: dict[str, Any]) -> dict[str, Any]:
    """The document as a server before item ids wrote it: no `itemIds`, and
    every hash computed without them (the chain re-sealed oldest first)."""
    old = json.loads(json.dumps(document))
    for space in old["spaces"]:
        hashes: dict[int, str] = {}
        for c in space["checkpoints"]:
            del c["itemIds"]
            merge = c["mergeParentId"]
            c["hash"] = checkpoint_hash(
                CheckpointContent.from_columns(
                    {
                        "title": c["title"],
                        "objective": c["objective"],
                        "summary": c["summary"],
                        "decisions": c["decisions"],
                        "tasks": c["tasks"],
                        "open_questions": c["openQuestions"],
                        "entities": c["entities"],
                    }
                ),
                space_id=space["hashSpaceId"],
                parent_hash=hashes.get(c["parentId"]),
                created_at=__import__("datetime").datetime.fromisoformat(c["createdAt"]),
                branch_name=c["branchName"],
                author_agent=c["authorAgent"],
                **({"merge_parent_hash": hashes[merge]} if merge else {}),
            )
            hashes[c["id"]] = c["hash"]
    return old


async def test_an_export_without_ids_imports_verifies_and_carries_implicit_ids(
    gql: GraphQLClient, tmp_path: Path
) -> None:
    lab = await trip(gql)
    old = as_old_export(await export_document(gql, lab["space"]))
    jsonschema.validate(old, SCHEMA)
    fixture = Path(__file__).parents[1] / "data" / "export-before-item-ids.json"
    assert json.loads(fixture.read_text())["spaces"][0]["checkpoints"][0].get("itemIds") is None
    for document in (old, json.loads(fixture.read_text())):
        imported = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
        assert imported["errors"] == []
        copy = imported["spaces"][0]["id"]
        checked = len(document["spaces"][0]["checkpoints"])
        assert (await gql(VERIFY, s=copy))["verifyLineage"] == {"ok": True, "checked": checked}
    # The last import (the fixture): its ids are implicit, from each hash.
    exported = await export_document(gql, copy)
    first = exported["spaces"][0]["checkpoints"][0]
    assert first["itemIds"] is None
    shown = (await gql(SPACE_HEAD, s=copy))["space"]["branches"]
    head = next(b["head"] for b in shown if b["name"] == "main")
    content = CheckpointContent(
        title="",
        decisions=tuple(i["text"] for i in head["decisionItems"]),
        tasks=tuple(i["text"] for i in head["taskItems"]),
    )
    implicit = implicit_item_ids(head["hash"], content)
    assert [i["id"] for i in head["decisionItems"]] == list(implicit.decisions)
    assert [i["id"] for i in head["taskItems"]] == list(implicit.tasks)
    # A checkpoint saved on top carries them as its stored ids.
    session = (await create_session(gql, spaceId=copy, title="next"))["id"]
    await send(gql, session, "more")
    saved = await save(gql, session, "After", decisions=list(content.decisions))
    assert saved["decisionItems"] == head["decisionItems"]


SPACE_HEAD = (
    f"""query($s: ID!) {{ space(id: $s) {{ branches {{ name head {{ hash {ITEMS} }} }} }} }}"""
)


DRAFT_ITEMS = """mutation($id: ID!) { draftCheckpoint(input: {sessionId: $id}) {
  carried { decisions decisionItems { id text } taskItems { id text } }
  errors { code } } }"""


async def test_a_draft_carries_the_ids_and_sending_them_back_keeps_them(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, spaceId=space, title="trip"))["id"]
    await send(gql, sid, "Plan the coast.")
    base = await save(gql, sid, "Base", decisions=[RENT], tasks=["Pack"])
    await send(gql, sid, "Beach roads?")
    payload = (await gql(DRAFT_ITEMS, id=sid))["draftCheckpoint"]
    assert payload["errors"] == []
    carried = payload["carried"]
    assert carried["decisionItems"] == base["decisionItems"]
    assert carried["taskItems"] == base["taskItems"]
    # The form edits the carried decision and adds a new one.
    [rent] = carried["decisionItems"]
    saved = await save(
        gql,
        sid,
        "4WD",
        decisionItems=[{"id": rent["id"], "text": RENT_4WD}, {"text": "Drive on sand"}],
        taskItems=carried["taskItems"],
    )
    assert saved["decisionItems"][0] == {"id": rent["id"], "text": RENT_4WD}
    assert saved["decisionItems"][1]["text"] == "Drive on sand"
    assert saved["taskItems"] == base["taskItems"]
