"""previewMerge and mergeCheckpoints through the real app (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from api.domain.hashing import verify_chain
from api.domain.types import Checkpoint, CheckpointContent, ItemIds
from tests.support.graphql import GraphQLClient
from tests.support.merging import MERGE, diverged, fork, merge_input
from tests.support.ops import ERRORS, checkpoint, create_session, create_space, send
from tests.support.queries import count_statements

FIELD = "items { text origin } conflicts { text origin }"
PREVIEW_MERGE = f"""query($input: PreviewMergeInput!) {{ previewMerge(input: $input) {{
  into ours {{ title }} theirs {{ title }} commonAncestor {{ title }} fastForward upToDate
  decisions {{ {FIELD} }} tasks {{ {FIELD} }} openQuestions {{ {FIELD} }} entities {{ {FIELD} }}
  conflictCount suggestedTitle suggestedObjective suggestedSummary }} }}"""
BRANCH_HEADS = """query($id: ID!) { space(id: $id) { branches { name head { title } } } }"""
NODE = """id hash title objective summary decisions tasks openQuestions entities branchName
  authorAgent createdAt parent { id } mergeParent { id } decisionItems { id } taskItems { id }
  openQuestionItems { id } entityItems { id }"""
VERIFY = f"""query($id: ID!) {{ checkpoint(id: $id) {{ {NODE} ancestors(first: 100) {{ {NODE} }}
  mergeParent {{ {NODE} ancestors(first: 100) {{ {NODE} }} }} }} }}"""


async def test_preview_shows_origins_conflicts_and_a_draft(gql: GraphQLClient) -> None:
    lab = await diverged(gql)
    data = await gql(PREVIEW_MERGE, input=merge_input(lab))
    assert data["previewMerge"] == {
        "into": "main",
        "ours": {"title": "M1"},
        "theirs": {"title": "A1"},
        "commonAncestor": {"title": "Base"},
        "fastForward": False,
        "upToDate": False,
        "decisions": {
            "items": [
                # Respelled on alt, untouched on main: alt's edit of the same item.
                {"text": "use postgres", "origin": "THEIRS"},
                {"text": "Cache in Redis", "origin": "OURS"},
                # A different item to "Use SQLite" (removed by both sides).
                {"text": "Use SQLite 3", "origin": "THEIRS"},
            ],
            "conflicts": [],
        },
        "tasks": {
            # "Pick a host": dropped by alt, untouched on main → dropped.
            "items": [
                {"text": "Write tests", "origin": "ANCESTOR"},
                {"text": "Write docs", "origin": "THEIRS"},
            ],
            "conflicts": [],
        },
        "openQuestions": {"items": [], "conflicts": []},
        "entities": {"items": [{"text": "Redis", "origin": "THEIRS"}], "conflicts": []},
        "conflictCount": 0,
        "suggestedTitle": "Merge alt (A1) into main",
        "suggestedObjective": "Ship it\n\nShip it fast",
        "suggestedSummary": "Docs matter.",
    }


async def test_clean_merge_saves_a_checkpoint_with_two_parents(gql: GraphQLClient) -> None:
    lab = await diverged(gql)
    data = await gql(MERGE, input=merge_input(lab, title="Merged"))
    result = data["mergeCheckpoints"]
    assert result["errors"] == []
    assert result["fastForward"] is False
    saved = result["checkpoint"]
    assert {k: v for k, v in saved.items() if k != "id"} == {
        "title": "Merged",
        "branchName": "main",
        "objective": "Ship it\n\nShip it fast",
        "summary": "Docs matter.",
        "decisions": ["use postgres", "Cache in Redis", "Use SQLite 3"],
        "tasks": ["Write tests", "Write docs"],
        "openQuestions": [],
        "entities": ["Redis"],
        "parent": {"title": "M1"},
        "mergeParent": {"title": "A1"},
    }
    heads = await gql(BRANCH_HEADS, id=lab["space"])
    assert heads["space"]["branches"] == [
        {"name": "alt", "head": {"title": "A1"}},
        {"name": "main", "head": {"title": "Merged"}},
    ]
    # Merging again: alt's head is now an ancestor of main's head.
    again = await gql(MERGE, input=merge_input(lab, title="Again"))
    assert again["mergeCheckpoints"]["errors"] == [
        {
            "code": "INVALID",
            "message": 'The branch "main" already contains that checkpoint.',
            "field": "from",
        }
    ]


async def conflicted(gql: GraphQLClient) -> dict[str, Any]:
    """main removes "Use SQLite"; alt respells it (an edit): a conflict."""
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await checkpoint(gql, main, "Base", decisions=["Use Postgres", "Use SQLite"])
    alt = await fork(gql, base["id"], "alt")
    await checkpoint(gql, main, "M1", decisions=["Use Postgres"])
    await send(gql, alt, "alt work")
    a1 = await checkpoint(gql, alt, "A1", decisions=["Use Postgres", "use SQLite!"])
    return {"space": space, "a1": a1}


async def test_a_conflict_is_refused_then_resolved(gql: GraphQLClient) -> None:
    lab = await conflicted(gql)
    preview = await gql(PREVIEW_MERGE, input=merge_input(lab))
    assert preview["previewMerge"]["decisions"] == {
        "items": [{"text": "Use Postgres", "origin": "ANCESTOR"}],
        "conflicts": [{"text": "use SQLite!", "origin": "THEIRS"}],
    }
    assert preview["previewMerge"]["conflictCount"] == 1

    refused = await gql(MERGE, input=merge_input(lab, title="Merged"))
    assert refused["mergeCheckpoints"] == {
        "checkpoint": None,
        "fastForward": False,
        "errors": [
            {
                "code": "CONFLICT",
                "message": 'Resolve the conflict on decisions "Use SQLite": keep a side\'s text '
                "or drop it.",
                "field": "resolutions",
            }
        ],
    }
    heads = await gql(BRANCH_HEADS, id=lab["space"])
    assert {"name": "main", "head": {"title": "M1"}} in heads["space"]["branches"]

    resolved = await gql(
        MERGE,
        input=merge_input(
            lab,
            title="Merged",
            resolutions=[{"field": "DECISIONS", "item": "Use SQLite", "keep": True}],
        ),
    )
    assert resolved["mergeCheckpoints"]["errors"] == []
    assert resolved["mergeCheckpoints"]["checkpoint"]["decisions"] == [
        "Use Postgres",
        "use SQLite!",
    ]


async def test_dropping_a_conflict_and_naming_no_conflict(gql: GraphQLClient) -> None:
    lab = await conflicted(gql)
    wrong = await gql(
        MERGE,
        input=merge_input(
            lab,
            title="Merged",
            resolutions=[
                {"field": "DECISIONS", "item": "use sqlite", "keep": False},
                {"field": "TASKS", "item": "Nothing", "keep": True},
            ],
        ),
    )
    assert wrong["mergeCheckpoints"]["errors"] == [
        {
            "code": "INVALID",
            "message": 'No conflict on tasks matches "Nothing".',
            "field": "resolutions",
        }
    ]
    dropped = await gql(
        MERGE,
        input=merge_input(
            lab,
            title="Merged",
            resolutions=[{"field": "DECISIONS", "item": "use sqlite", "keep": False}],
        ),
    )
    assert dropped["mergeCheckpoints"]["checkpoint"]["decisions"] == ["Use Postgres"]


async def test_fast_forward_moves_the_head_and_saves_nothing(gql: GraphQLClient) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await checkpoint(gql, main, "Base", decisions=["Use Postgres"])
    alt = await fork(gql, base["id"], "alt")
    await send(gql, alt, "alt work")
    a1 = await checkpoint(gql, alt, "A1", decisions=["Use Postgres", "Add cache"])
    lab = {"space": space, "a1": a1}
    preview = await gql(PREVIEW_MERGE, input=merge_input(lab))
    assert preview["previewMerge"]["fastForward"] is True
    assert preview["previewMerge"]["commonAncestor"] == {"title": "Base"}
    data = await gql(MERGE, input=merge_input(lab, title="ignored"))
    assert data["mergeCheckpoints"]["errors"] == []
    assert data["mergeCheckpoints"]["fastForward"] is True
    assert data["mergeCheckpoints"]["checkpoint"]["title"] == "A1"
    heads = await gql(BRANCH_HEADS, id=space)
    assert heads["space"]["branches"] == [
        {"name": "alt", "head": {"title": "A1"}},
        {"name": "main", "head": {"title": "A1"}},
    ]
    lineage = await gql(
        """query($id: ID!) { space(id: $id) { lineage(first: 10) { edges { node { title } } } } }""",
        id=space,
    )
    assert [e["node"]["title"] for e in lineage["space"]["lineage"]["edges"]] == ["Base", "A1"]


async def test_a_checkpoint_of_another_space_cannot_be_merged(gql: GraphQLClient) -> None:
    lab = await diverged(gql)
    other = await create_space(gql, "Other")
    data = await gql(MERGE, input={**merge_input(lab, title="x"), "spaceId": other})
    assert data["mergeCheckpoints"]["errors"] == [
        {"code": "NOT_FOUND", "message": "No such checkpoint in this space.", "field": "from"}
    ]
    preview = await gql(PREVIEW_MERGE, input={**merge_input(lab), "spaceId": other})
    assert preview["previewMerge"] is None
    unknown = await gql(MERGE, input={**merge_input(lab, title="x"), "into": "nope"})
    assert unknown["mergeCheckpoints"]["errors"] == [
        {"code": "NOT_FOUND", "message": 'The space has no branch "nope".', "field": "into"}
    ]


def _domain(node: dict[str, Any], space_id: int) -> Checkpoint:
    from api.graphql.core.ids import parse_id

    def key(ref: dict[str, Any] | None) -> int | None:
        if ref is None:
            return None
        parsed = parse_id(ref["id"])
        assert parsed is not None
        return parsed[1]

    return Checkpoint(
        id=key(node) or 0,
        hash=node["hash"],
        space_id=space_id,
        parent_id=key(node["parent"]),
        branch_name=node["branchName"],
        content=CheckpointContent(
            title=node["title"],
            objective=node["objective"],
            summary=node["summary"],
            decisions=tuple(node["decisions"]),
            tasks=tuple(node["tasks"]),
            open_questions=tuple(node["openQuestions"]),
            entities=tuple(node["entities"]),
            # Every checkpoint here was saved with ids: they are hashed.
            item_ids=ItemIds(
                **{
                    attr: tuple(i["id"] for i in node[name])
                    for attr, name in (
                        ("decisions", "decisionItems"),
                        ("tasks", "taskItems"),
                        ("open_questions", "openQuestionItems"),
                        ("entities", "entityItems"),
                    )
                }
            ),
        ),
        author_agent=node["authorAgent"],
        source_session_id=None,
        source_turn_range=None,
        base_sequence=0,
        created_at=datetime.fromisoformat(node["createdAt"]),
        merge_parent_id=key(node["mergeParent"]),
    )


async def test_hashes_verify_after_a_merge(gql: GraphQLClient) -> None:
    from api.graphql.core.ids import parse_id

    lab = await diverged(gql)
    merged = await gql(MERGE, input=merge_input(lab, title="Merged"))
    tip = merged["mergeCheckpoints"]["checkpoint"]["id"]
    data = (await gql(VERIFY, id=tip))["checkpoint"]
    parsed = parse_id(lab["space"])
    assert parsed is not None
    space_id = parsed[1]
    main_line = [_domain(n, space_id) for n in [*reversed(data["ancestors"]), data]]
    theirs = data["mergeParent"]
    alt_line = [_domain(n, space_id) for n in [*reversed(theirs["ancestors"]), theirs]]
    assert [c.content.title for c in main_line] == ["Base", "M1", "Merged"]
    assert verify_chain(alt_line) is None
    known = {c.id: c.hash for c in alt_line}
    assert verify_chain(main_line, known_hashes=known) is None
    # Without the merge parent's hash, or with another one, the merge does not verify.
    assert verify_chain(main_line) == 2
    assert verify_chain(main_line, known_hashes={alt_line[-1].id: alt_line[0].hash}) == 2


async def test_preview_merge_statement_count_is_bounded(gql: GraphQLClient) -> None:
    async def measure(extra: int) -> int:
        lab = await diverged(gql)
        for i in range(extra):
            await checkpoint(gql, lab["alt"], f"A{i + 2}", decisions=[f"d{i}"])
        with count_statements() as statements:
            data = await gql(
                PREVIEW_MERGE,
                input={"spaceId": lab["space"], "into": "main", "from": lab["a1"]["id"]},
            )
        assert data["previewMerge"]["commonAncestor"] == {"title": "Base"}
        return len(statements)

    short = await measure(0)
    longer = await measure(8)
    # the space with the caller's role, the checkpoint, head, common ancestor,
    # ancestor and head (the lines between are not read: items have ids)
    assert short == longer == 5


async def test_a_merge_reads_the_space_membership_once(gql: GraphQLClient) -> None:
    """The role is read once per merge and handed on, not read again for the
    preview and again for the checkpoint merged in (three times before)."""
    lab = await diverged(gql)
    merge_only = (
        "mutation($input: MergeCheckpointsInput!) { mergeCheckpoints(input: $input) "
        f"{{ fastForward {ERRORS} }} }}"
    )
    with count_statements() as statements:
        data = await gql(merge_only, input=merge_input(lab, title="Merged", resolutions=[]))
    assert data["mergeCheckpoints"] == {"fastForward": False, "errors": []}
    membership = [s for s in statements if "space_member" in s]
    assert len(membership) == 1, membership


async def test_a_second_merge_starts_from_the_first(gql: GraphQLClient) -> None:
    # After alt was merged into main, alt goes on; merging it again must take A1
    # (reached through the merge parent) as the common ancestor, not Base.
    lab = await diverged(gql)
    await gql(MERGE, input=merge_input(lab, title="Merged"))
    a2 = await checkpoint(
        gql,
        lab["alt"],
        "A2",
        decisions=["use postgres", "Use SQLite 3"],
        tasks=["Write tests", "Write docs", "Deploy"],
        entities=["Redis"],
    )
    data = await gql(PREVIEW_MERGE, input=merge_input(lab, **{"from": a2["id"]}))
    preview = data["previewMerge"]
    assert preview["commonAncestor"] == {"title": "A1"}
    assert preview["fastForward"] is False
    assert preview["tasks"] == {
        "items": [
            {"text": "Write tests", "origin": "ANCESTOR"},
            {"text": "Write docs", "origin": "ANCESTOR"},
            {"text": "Deploy", "origin": "THEIRS"},
        ],
        "conflicts": [],
    }
    assert preview["decisions"]["items"] == [
        {"text": "use postgres", "origin": "ANCESTOR"},
        {"text": "Cache in Redis", "origin": "OURS"},
        {"text": "Use SQLite 3", "origin": "ANCESTOR"},
    ]


async def test_the_background_model_drafts_the_text_when_asked(gql: GraphQLClient) -> None:
    lab = await diverged(gql)
    query = """query($input: PreviewMergeInput!) { previewMerge(input: $input) {
      suggestedTitle suggestedObjective suggestedSummary suggestionModel } }"""
    data = await gql(query, input=merge_input(lab, draftWithModel=True))
    # The offline extractor's heuristics: the first sentence of the message.
    drafted = "Merged into main (branch main): M1"
    assert data["previewMerge"] == {
        "suggestedTitle": drafted,
        "suggestedObjective": drafted,
        "suggestedSummary": drafted,
        "suggestionModel": "offline/extractor",
    }
    plain = await gql(query, input=merge_input(lab))
    assert plain["previewMerge"] == {
        "suggestedTitle": "Merge alt (A1) into main",
        "suggestedObjective": "Ship it\n\nShip it fast",
        "suggestedSummary": "Docs matter.",
        "suggestionModel": None,
    }


WARNINGS = """query($input: PreviewMergeInput!) { previewMerge(input: $input) {
  warnings { field intoText fromText reason source } warningsNote } }"""


async def test_with_the_offline_model_the_heuristic_warns_and_the_merge_still_saves(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    main = (await create_session(gql, spaceId=space, title="main"))["id"]
    await send(gql, main, "go")
    base = await checkpoint(gql, main, "Base", decisions=["Go north"])
    rail = await fork(gql, base["id"], "rail")
    await checkpoint(gql, main, "M1", decisions=["Go north", "Rent a campervan for the coast"])
    await send(gql, rail, "rail work")
    r1 = await checkpoint(gql, rail, "R1", decisions=["Go north", "Do not rent a campervan"])
    merging = {"spaceId": space, "into": "main", "from": r1["id"]}
    warning = {
        "field": "DECISIONS",
        "intoText": "Rent a campervan for the coast",
        "fromText": "Do not rent a campervan",
        "reason": 'Both mention "campervan", and only one of them says it negatively.',
        "source": "HEURISTIC",
    }
    for draft in (False, True):  # the offline background model: the heuristic either way
        data = await gql(WARNINGS, input={**merging, "draftWithModel": draft})
        assert data["previewMerge"] == {"warnings": [warning], "warningsNote": None}
    # A warning never blocks: both decisions are merged.
    saved = await gql(MERGE, input={**merging, "title": "Merged", "resolutions": []})
    assert saved["mergeCheckpoints"]["errors"] == []
    assert saved["mergeCheckpoints"]["checkpoint"]["decisions"] == [
        "Go north",
        "Rent a campervan for the coast",
        "Do not rent a campervan",
    ]
