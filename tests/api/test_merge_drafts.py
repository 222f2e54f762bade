"""previewMerge's draft from the background model (the fake OpenAI server), and its
plain-text fallback when the model's answer cannot be used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.domain.contradictions import CONTRADICTION_INSTRUCTIONS
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.merging import diverged, merge_input

QUERY = """query($input: PreviewMergeInput!) { previewMerge(input: $input) {
  suggestedTitle suggestedObjective suggestedSummary suggestionModel conflictCount } }"""


@pytest.fixture
def providers_file(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    path = tmp_path / "providers.yaml"
    path.write_text(
        "chat_default: offline/echo\n"
        "background_intelligence: lab/extractor\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{fake_openai.base_url}"\n'
        "    models: [extractor]\n"
    )
    return path


async def test_the_model_writes_the_title_objective_and_summary(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    lab = await diverged(gql)
    fake_openai.reply(
        json.dumps(
            {
                "title": "Postgres with a cache, documented",
                "objective": "Ship it fast",
                "summary": "Both lines agree on Postgres.",
                "decisions": ["ignored"],
                "tasks": [],
                "openQuestions": [],
                "entities": [],
            }
        )
    )
    data = await gql(QUERY, input=merge_input(lab, draftWithModel=True))
    assert data["previewMerge"] == {
        "suggestedTitle": "Postgres with a cache, documented",
        "suggestedObjective": "Ship it fast",
        "suggestedSummary": "Both lines agree on Postgres.",
        "suggestionModel": "lab/extractor",
        "conflictCount": 0,
    }
    # The draft first (then the contradictions check: see below).
    sent = fake_openai.requests[0]["messages"]
    assert sent[0]["role"] == "system"
    assert sent[1] == {
        "role": "user",
        "content": "Merged into main (branch main): M1\nObjective: Ship it\nSummary: \n\n"
        "Merged in (branch alt): A1\nObjective: Ship it fast\nSummary: Docs matter.",
    }


async def test_an_unusable_answer_leaves_the_plain_text_draft(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    lab = await diverged(gql)
    fake_openai.reply("Sorry, I cannot help with that.")
    data = await gql(QUERY, input=merge_input(lab, draftWithModel=True))
    assert data["previewMerge"] == {
        "suggestedTitle": "Merge alt (A1) into main",
        "suggestedObjective": "Ship it\n\nShip it fast",
        "suggestedSummary": "Docs matter.",
        "suggestionModel": None,
        "conflictCount": 0,
    }


WARNINGS = """query($input: PreviewMergeInput!) { previewMerge(input: $input) {
  suggestionModel warnings { field intoItemId intoText fromItemId fromText reason source }
  warningsNote } }"""
CONTRADICTS = {
    "field": "decisions",
    "into": "Cache in Redis",
    "from": "Use SQLite 3",
    "reason": "A cache in Redis and SQLite pull the storage two ways.",
}


async def item_id(gql: GraphQLClient, checkpoint: str, text: str) -> str:
    data = await gql(
        "query($id: ID!) { checkpoint(id: $id) { decisionItems { id text } } }", id=checkpoint
    )
    return next(i["id"] for i in data["checkpoint"]["decisionItems"] if i["text"] == text)


async def test_the_model_flags_contradictions_from_the_two_checkpoints_only(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    lab = await diverged(gql)
    fake_openai.reply("not a draft")
    fake_openai.reply(json.dumps({"contradictions": [CONTRADICTS]}))
    data = await gql(WARNINGS, input=merge_input(lab, draftWithModel=True))
    assert data["previewMerge"] == {
        "suggestionModel": None,
        "warnings": [
            {
                "field": "DECISIONS",
                "intoItemId": await item_id(gql, lab["m1"]["id"], "Cache in Redis"),
                "intoText": "Cache in Redis",
                "fromItemId": await item_id(gql, lab["a1"]["id"], "Use SQLite 3"),
                "fromText": "Use SQLite 3",
                "reason": "A cache in Redis and SQLite pull the storage two ways.",
                "source": "MODEL",
            }
        ],
        "warningsNote": None,
    }
    assert len(fake_openai.requests) == 2
    sent = fake_openai.requests[1]["messages"]
    # Exactly the items each side added or edited, under the branch names: not the
    # ancestor's, not an item both sides kept, not a word of the conversations.
    assert sent == [
        {"role": "system", "content": CONTRADICTION_INSTRUCTIONS},
        {
            "role": "user",
            "content": "Merging branch alt into branch main.\n\n"
            "Field decisions:\n- main (merged into):\n  - Cache in Redis\n"
            "- alt (merged in):\n  - use postgres\n  - Use SQLite 3",
        },
    ]


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        (
            "They contradict.",
            "lab/extractor could not check for contradictions: the answer is not a JSON object",
        ),
        (
            json.dumps({"contradictions": [{**CONTRADICTS, "from": "Write docs"}]}),
            "lab/extractor could not check for contradictions: a contradiction quotes an "
            "item that was not sent",
        ),
    ],
)
async def test_an_unusable_answer_gives_no_warnings_and_a_note(
    gql: GraphQLClient, fake_openai: FakeOpenAI, answer: str, note: str
) -> None:
    lab = await diverged(gql)
    fake_openai.reply("not a draft")
    fake_openai.reply(answer)
    data = await gql(WARNINGS, input=merge_input(lab, draftWithModel=True))
    assert data["previewMerge"] == {"suggestionModel": None, "warnings": [], "warningsNote": note}


async def test_a_failed_call_gives_no_warnings_and_a_note(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    lab = await diverged(gql)
    fake_openai.reply("not a draft")
    fake_openai.fail(500)
    data = await gql(WARNINGS, input=merge_input(lab, draftWithModel=True))
    preview = data["previewMerge"]
    assert preview["warnings"] == []
    assert preview["warningsNote"].startswith("lab/extractor could not check for contradictions: ")


async def test_without_draft_with_model_the_heuristic_warns_and_no_model_is_called(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    lab = await diverged(gql)
    data = await gql(WARNINGS, input=merge_input(lab))
    assert data["previewMerge"] == {"suggestionModel": None, "warnings": [], "warningsNote": None}
    assert fake_openai.requests == []
