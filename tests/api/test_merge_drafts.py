"""previewMerge's draft from the background model (the fake OpenAI server), and its
plain-text fallback when the model's answer cannot be used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.api.test_merge import diverged, merge_input
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient

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
    sent = fake_openai.requests[-1]["messages"]
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
