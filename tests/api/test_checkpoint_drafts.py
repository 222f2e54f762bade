"""draftCheckpoint carries the parent's state forward (`carried`) apart from what
the background model extracted from the window (`extracted`), and a checkpoint
saved from both holds the full state: the next message's context still has the
parent's decisions. The background model here is the fake OpenAI server, so the
extraction prompt is asserted as it crossed the wire.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from api.domain.extraction import EXTRACTION_INSTRUCTIONS
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, send

DRAFT = """mutation($id: ID!) { draftCheckpoint(input: {sessionId: $id}) {
  carried { checkpoint { id title } objective decisions tasks openQuestions entities }
  extracted { title objective summary decisions tasks openQuestions entities
    sourceTurnRange { first last } model }
  draft { title decisions }
  errors { code message field } } }"""

NZ_EXTRACTION = {
    "title": "New Zealand extension",
    "objective": "Add New Zealand to the trip",
    "summary": "A week in New Zealand after Australia.",
    "decisions": ["Add a week in New Zealand"],
    "tasks": ["Book the Queenstown lodge"],
    "openQuestions": ["Ferry or flight to the South Island?"],
    "entities": ["New Zealand", "Queenstown"],
}


@pytest.fixture
def providers_file(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    """Chat and background models both served by the fake OpenAI server."""
    path = tmp_path / "providers.yaml"
    path.write_text(
        "chat_default: lab/my-model\n"
        "background_intelligence: lab/extractor\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{fake_openai.base_url}"\n'
        "    models: [my-model, extractor]\n"
    )
    return path


async def plan_australia(gql: GraphQLClient, fake_openai: FakeOpenAI) -> tuple[str, dict[str, Any]]:
    space_id = await create_space(gql, "Trips")
    sid = (await create_session(gql, spaceId=space_id, title="Trip"))["id"]  # LATEST_1
    fake_openai.reply("Sydney first, then Melbourne.")
    await send(gql, sid, "Plan two weeks in Australia.")
    australia = await checkpoint(
        gql,
        sid,
        "Australia plan",
        objective="Two weeks in Australia",
        summary="Sydney, then Melbourne.",
        decisions=["Fly into Sydney"],
        tasks=["Book the Sydney hotel", "Buy travel insurance"],
        openQuestions=["Which month is best?"],
        entities=["Australia", "Sydney"],
    )
    fake_openai.reply("Add a week in Auckland and Queenstown.")
    await send(gql, sid, "Extend the trip to New Zealand.")
    return sid, australia


async def test_draft_returns_the_parents_items_apart_from_what_the_window_gave(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid, australia = await plan_australia(gql, fake_openai)
    fake_openai.reply(json.dumps(NZ_EXTRACTION))

    payload = (await gql(DRAFT, id=sid))["draftCheckpoint"]

    assert payload["errors"] == []
    assert payload["carried"] == {
        "checkpoint": {"id": australia["id"], "title": "Australia plan"},
        "objective": "Two weeks in Australia",
        "decisions": ["Fly into Sydney"],
        "tasks": ["Book the Sydney hotel", "Buy travel insurance"],
        "openQuestions": ["Which month is best?"],
        "entities": ["Australia", "Sydney"],
    }
    assert payload["extracted"] == {
        **NZ_EXTRACTION,
        "sourceTurnRange": {"first": 3, "last": 4},
        "model": "lab/extractor",
    }
    # The deprecated field still answers what it always did: the extracted draft.
    assert payload["draft"] == {
        "title": "New Zealand extension",
        "decisions": ["Add a week in New Zealand"],
    }
    # The extraction prompt held the window and nothing carried (rule 6).
    extraction = fake_openai.requests[-1]
    assert extraction["model"] == "extractor"
    assert extraction["messages"] == [
        {"role": "system", "content": EXTRACTION_INSTRUCTIONS},
        {
            "role": "user",
            "content": "[USER #3]\nExtend the trip to New Zealand.\n\n"
            "[ASSISTANT #4]\nAdd a week in Auckland and Queenstown.",
        },
    ]
    assert "Sydney" not in json.dumps(extraction)


async def test_a_checkpoint_saved_from_carried_and_extracted_keeps_the_parents_decisions(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    # Given "Australia plan", then a draft after the New Zealand turns
    sid, australia = await plan_australia(gql, fake_openai)
    fake_openai.reply(json.dumps(NZ_EXTRACTION))
    payload = (await gql(DRAFT, id=sid))["draftCheckpoint"]
    carried, extracted = payload["carried"], payload["extracted"]

    # When "Australia + NZ" is saved as the full state (the insurance is bought)
    saved = await checkpoint(
        gql,
        sid,
        "Australia + NZ",
        objective=carried["objective"],
        summary=extracted["summary"],
        decisions=carried["decisions"] + extracted["decisions"],
        tasks=[t for t in carried["tasks"] if t != "Buy travel insurance"] + extracted["tasks"],
        openQuestions=carried["openQuestions"] + extracted["openQuestions"],
        entities=carried["entities"] + extracted["entities"],
    )
    assert saved["parent"] == {"id": australia["id"]}

    # Then with the default scope (the latest checkpoint only) the next message
    # still carries "Fly into Sydney"
    fake_openai.reply("Layers and a rain jacket.")
    result = await send(gql, sid, "What should we pack?")
    assert result["errors"] == []
    assert fake_openai.requests[-1]["messages"] == [
        {
            "role": "system",
            "content": "You are continuing a conversation.\n\n"
            f"Checkpoint [1] \u2014 Australia + NZ ({saved['shortHash']})\n"
            "Objective: Two weeks in Australia\n"
            "Summary:\nA week in New Zealand after Australia.\n"
            "Key Decisions:\n- Fly into Sydney\n- Add a week in New Zealand\n"
            "Open Tasks:\n- Book the Sydney hotel\n- Book the Queenstown lodge\n"
            "Open Questions:\n- Which month is best?\n- Ferry or flight to the South Island?",
        },
        {"role": "user", "content": "What should we pack?"},
    ]

    # And the comparison with the parent shows the real changes
    compare = await gql(
        """query($a: ID!, $b: ID!) { compareCheckpoints(a: $a, b: $b) {
             decisions { onlyA shared onlyB } tasks { onlyA shared onlyB } } }""",
        a=australia["id"],
        b=saved["id"],
    )
    assert compare["compareCheckpoints"] == {
        "decisions": {
            "onlyA": [],
            "shared": ["Fly into Sydney"],
            "onlyB": ["Add a week in New Zealand"],
        },
        "tasks": {
            "onlyA": ["Buy travel insurance"],
            "shared": ["Book the Sydney hotel"],
            "onlyB": ["Book the Queenstown lodge"],
        },
    }


async def test_nothing_is_carried_on_a_branch_without_a_checkpoint(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql, "Empty")
    sid = (await create_session(gql, spaceId=space_id, title="t"))["id"]
    fake_openai.reply("Sure.")
    await send(gql, sid, "Plan Peru.")
    fake_openai.reply(json.dumps({**NZ_EXTRACTION, "title": "Peru"}))

    payload = (await gql(DRAFT, id=sid))["draftCheckpoint"]

    assert payload["carried"] == {
        "checkpoint": None,
        "objective": "",
        "decisions": [],
        "tasks": [],
        "openQuestions": [],
        "entities": [],
    }
    assert payload["extracted"]["title"] == "Peru"


async def test_a_failed_draft_carries_nothing_and_says_why(gql: GraphQLClient) -> None:
    space_id = await create_space(gql, "Nothing yet")
    sid = (await create_session(gql, spaceId=space_id, title="t"))["id"]

    payload = (await gql(DRAFT, id=sid))["draftCheckpoint"]

    assert payload == {
        "carried": None,
        "extracted": None,
        "draft": None,
        "errors": [
            {
                "code": "INVALID",
                "message": "There are no turns after the context boundary to draft from.",
                "field": "sessionId",
            }
        ],
    }
