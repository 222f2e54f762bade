"""Every model call a user's action causes passes the model check (issue 16).

The background model (lab/my-model, on the recording fake server) is kept for
admins. A non-admin's drafts, merge suggestions and session titles go to the
first model they may use (lab/other-model: configuration order, an available
provider); the kept model receives nothing of theirs. An admin's still go to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from api.settings import Settings
from tests.accounts.world import World, accounts_app
from tests.support.fake_openai import FakeOpenAI

ERR = "errors { code field }"
DRAFT = json.dumps(
    {
        "title": "Drafted",
        "objective": "o",
        "summary": "s",
        "decisions": ["d"],
        "tasks": [],
        "openQuestions": [],
        "entities": [],
    }
)


@pytest.fixture
def providers_file(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    path = tmp_path / "providers.yaml"
    path.write_text(
        "chat_default: offline/echo\n"
        "background_intelligence: lab/my-model\n"
        "providers:\n"
        "  lab:\n"
        "    litellm_provider: openai\n"
        f'    api_base: "{fake_openai.base_url}"\n'
        "    models: [my-model, other-model]\n"
        "  offline: {}\n"
    )
    return path


def models_asked(fake: FakeOpenAI) -> list[str]:
    return [str(request["model"]) for request in fake.requests]


async def keep(world: World, model: str) -> None:
    kept = await world.data(
        "owner",
        f'mutation {{ setModelAccess(input: {{model: "{model}", adminsOnly: true}}) '
        f"{{ adminsOnly {ERR} }} }}",
    )
    assert kept["setModelAccess"] == {"adminsOnly": True, "errors": []}


async def lineage_of(
    world: World, actor: str, *, idea: tuple[str, ...] = (), main: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A space of the owner's with ``actor`` as EDITOR, a session of ``actor``'s
    in it with one exchange, and a lineage that diverged: c1 on main, c2 on
    branch idea, c3 on main after c1 (merging c2 into main is no fast-forward);
    c2 and c3 with the decisions ``idea`` and ``main``."""
    space = (
        await world.data("owner", 'mutation { createSpace(input: {name: "S"}) { space { id } } }')
    )["createSpace"]["space"]["id"]
    if actor != "owner":
        added = await world.data(
            "owner",
            f'mutation($s: ID!) {{ addSpaceMember(input: {{spaceId: $s, userName: "{actor}", '
            f"role: EDITOR}}) {{ {ERR} }} }}",
            s=space,
        )
        assert added["addSpaceMember"] == {"errors": []}
    create = "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id model } } }"
    created = (await world.data(actor, create, s=space))["createSession"]["session"]
    assert created["model"] == "offline/echo"
    session = created["id"]
    send = (
        'mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "my secret plan"}) '
        f"{{ assistantTurn {{ model }} {ERR} }} }}"
    )
    assert (await world.data(actor, send, s=session))["sendMessage"]["errors"] == []
    await world.app.state.services.drain()  # its title is written in the background
    save = (
        "mutation($s: ID!, $t: String!, $d: [String!]) { createCheckpoint(input: "
        f"{{sessionId: $s, title: $t, decisions: $d}}) {{ checkpoint {{ id }} {ERR} }} }}"
    )
    c1 = (await world.data(actor, save, s=session, t="One"))["createCheckpoint"]["checkpoint"]
    fork = (
        'mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "idea"}) '
        "{ session { id } } }"
    )
    forked = (await world.data(actor, fork, c=c1["id"]))["forkSession"]["session"]["id"]
    await world.data(actor, send, s=forked)
    saved = await world.data(actor, save, s=forked, t="Two", d=list(idea))
    c2 = saved["createCheckpoint"]["checkpoint"]
    await world.data(actor, send, s=session)
    await world.data(actor, save, s=session, t="Three", d=list(main))
    await world.data(actor, send, s=session)  # a window to draft from
    return {"space": space, "session": session, "c2": c2["id"]}


DRAFT_CHECKPOINT = (
    "mutation($s: ID!) { draftCheckpoint(input: {sessionId: $s}) "
    f"{{ extracted {{ title model }} {ERR} }} }}"
)
PREVIEW = (
    'query($s: ID!, $f: ID!) { previewMerge(input: {spaceId: $s, into: "main", from: $f, '
    "draftWithModel: true}) { suggestedTitle suggestionModel } }"
)


async def test_a_non_admins_text_never_reaches_a_background_model_kept_for_admins(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with accounts_app(settings) as world:
        await keep(world, "lab/my-model")
        fake_openai.reply("A title")  # the session's title, after its first reply
        lab = await lineage_of(world, "editor")

        fake_openai.reply(DRAFT)
        drafted = await world.data("editor", DRAFT_CHECKPOINT, s=lab["session"])
        assert drafted["draftCheckpoint"] == {
            "extracted": {"title": "Drafted", "model": "lab/other-model"},
            "errors": [],
        }
        fake_openai.reply(DRAFT)
        suggested = await world.data("editor", PREVIEW, s=lab["space"], f=lab["c2"])
        assert suggested["previewMerge"] == {
            "suggestedTitle": "Drafted",
            "suggestionModel": "lab/other-model",
        }
        title = "query($s: ID!) { session(id: $s) { title } }"
        assert await world.data("editor", title, s=lab["session"]) == {
            "session": {"title": "A title"}
        }
        # The title, the draft and the suggestion: none went to the kept model.
        assert models_asked(fake_openai) == ["other-model", "other-model", "other-model"]
        assert not any(
            "my secret plan" in json.dumps(r)
            for r in fake_openai.requests
            if r["model"] == "my-model"
        )


async def test_an_admins_drafts_still_use_the_background_model(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with accounts_app(settings) as world:
        await keep(world, "lab/my-model")
        fake_openai.reply("A title")
        lab = await lineage_of(world, "owner")
        fake_openai.reply(DRAFT)
        drafted = await world.data("owner", DRAFT_CHECKPOINT, s=lab["session"])
        assert drafted["draftCheckpoint"]["extracted"] == {
            "title": "Drafted",
            "model": "lab/my-model",
        }
        assert models_asked(fake_openai) == ["my-model", "my-model"]


async def test_with_no_model_they_may_use_a_draft_says_so_and_calls_nothing(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with accounts_app(settings) as world:
        lab = await lineage_of(world, "editor")
        before = len(fake_openai.requests)
        for model in ("lab/my-model", "lab/other-model", "offline/echo", "offline/extractor"):
            await keep(world, model)
        drafted = await world.data("editor", DRAFT_CHECKPOINT, s=lab["session"])
        assert drafted["draftCheckpoint"] == {
            "extracted": None,
            "errors": [{"code": "FORBIDDEN", "field": "model"}],
        }
        suggested = await world.data("editor", PREVIEW, s=lab["space"], f=lab["c2"])
        assert suggested["previewMerge"]["suggestionModel"] is None  # the plain-text one
        assert len(fake_openai.requests) == before


async def test_the_contradictions_check_passes_the_same_model_check(
    settings: Settings, fake_openai: FakeOpenAI
) -> None:
    async with accounts_app(settings) as world:
        await keep(world, "lab/my-model")
        fake_openai.reply("A title")
        lab = await lineage_of(world, "editor", idea=("Take the train",), main=("Rent a van",))
        fake_openai.reply(DRAFT)
        fake_openai.reply(json.dumps({"contradictions": []}))
        warned = await world.data(
            "editor",
            'query($s: ID!, $f: ID!) { previewMerge(input: {spaceId: $s, into: "main", '
            "from: $f, draftWithModel: true}) { warnings { intoText } warningsNote } }",
            s=lab["space"],
            f=lab["c2"],
        )
        assert warned["previewMerge"] == {"warnings": [], "warningsNote": None}
        # The title, the draft and the contradictions check: none to the kept model.
        assert models_asked(fake_openai) == ["other-model", "other-model", "other-model"]
        assert "Take the train" in json.dumps(fake_openai.requests[-1]["messages"])
