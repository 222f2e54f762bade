"""Instructions and model parameters of sessions and spaces (issue 21 §2).

Given a session (and a space with defaults), when its settings are set through
updateSession / updateSpace, then Show context (contextPreview) holds the
instructions, the provider receives them and the parameters, and the reply
records which settings produced it. Bad values are typed errors that change
nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from api.domain.prompt import PREAMBLE
from api.providers.offline import OFFLINE_CONTEXT_WINDOW
from api.settings import Settings
from tests.accounts.world import World, accounts_app
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import ERRORS, checkpoint, create_session, create_space, preview, send

SETTINGS = "settings { instructions temperature topP maxOutputTokens stop }"
UPDATE_SESSION = f"""mutation($input: UpdateSessionInput!) {{
  updateSession(input: $input) {{ session {{ id model {SETTINGS}
    effectiveSettings {{ instructions temperature topP maxOutputTokens stop }}
    inheritedSettings }} {ERRORS} }} }}"""
UPDATE_SPACE = f"""mutation($input: UpdateSpaceInput!) {{
  updateSpace(input: $input) {{ space {{ id {SETTINGS} }} {ERRORS} }} }}"""
SESSION = f"""query($id: ID!) {{ node(id: $id) {{ ... on Session {{ {SETTINGS}
  effectiveSettings {{ instructions temperature topP maxOutputTokens stop }}
  inheritedSettings turns {{ nodes {{ role {SETTINGS} }} }} }} }} }}"""

NONE = {
    "instructions": None,
    "temperature": None,
    "topP": None,
    "maxOutputTokens": None,
    "stop": None,
}
PIRATE = "Answer as a pirate would."


async def _update_session(gql: GraphQLClient, session_id: str, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql(UPDATE_SESSION, input={"id": session_id, **fields}))[
        "updateSession"
    ]
    return result


async def _update_space(gql: GraphQLClient, space_id: str, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql(UPDATE_SPACE, input={"id": space_id, **fields}))[
        "updateSpace"
    ]
    return result


async def test_a_sessions_settings_are_saved_shown_sent_and_recorded_on_the_reply(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, title="pirate", model="lab/my-model"))["id"]
    given = {
        "instructions": f"  {PIRATE}\n",
        "temperature": 0.3,
        "topP": 0.9,
        "maxOutputTokens": 200,
        "stop": ["END", "###"],
    }
    saved = {**given, "instructions": PIRATE}

    updated = await _update_session(gql, sid, settings=given)

    assert updated["errors"] == []
    assert updated["session"]["settings"] == saved
    assert updated["session"]["effectiveSettings"] == saved
    assert updated["session"]["inheritedSettings"] == []
    # Show context holds exactly what will be sent: the instructions alone are
    # the system message of a session in no space (FRESH).
    plan = await preview(gql, sid, "Where is the treasure?")
    assert plan["mode"] == "FRESH"
    assert plan["messages"] == [
        {"role": "system", "content": PIRATE},
        {"role": "user", "content": "Where is the treasure?"},
    ]

    shown = await gql(
        'query($s: ID!) { contextPreview(input: {sessionId: $s, content: "x"}) '
        "{ settings { instructions temperature topP maxOutputTokens stop } } }",
        s=sid,
    )
    assert shown["contextPreview"]["settings"] == saved

    fake_openai.reply("Arr, buried on the island.")
    sent = await send(gql, sid, "Where is the treasure?")

    assert sent["errors"] == []
    body = fake_openai.requests[-1]
    assert body["messages"] == [
        {"role": "system", "content": PIRATE},
        {"role": "user", "content": "Where is the treasure?"},
    ]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["stop"]) == (
        0.3,
        0.9,
        200,
        ["END", "###"],
    )
    turns = (await gql(SESSION, id=sid))["node"]["turns"]["nodes"]
    assert turns == [
        {"role": "USER", "settings": None},
        {"role": "ASSISTANT", "settings": saved},
    ]


async def test_space_defaults_apply_field_by_field_and_the_session_wins(
    gql: GraphQLClient,
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, title="trip", spaceId=space))["id"]
    defaults = {"instructions": "Be brief.", "temperature": 1.5, "stop": ["STOP"]}
    space_saved = await _update_space(gql, space, settings=defaults)
    assert space_saved == {
        "space": {"id": space, "settings": {**NONE, **defaults}},
        "errors": [],
    }

    updated = await _update_session(gql, sid, settings={"temperature": 0.2})

    assert updated["session"]["settings"] == {**NONE, "temperature": 0.2}
    assert updated["session"]["effectiveSettings"] == {
        **NONE,
        "instructions": "Be brief.",
        "temperature": 0.2,
        "stop": ["STOP"],
    }
    assert updated["session"]["inheritedSettings"] == ["instructions", "stop"]
    # HEAD mode with a checkpoint: the instructions first, then the block.
    await send(gql, sid, "Plan the trip to Lisbon.")
    saved = await checkpoint(gql, sid, "Lisbon", decisions=["Go in May"])
    plan = await preview(gql, sid, "And hotels?")
    assert plan["mode"] == "HEAD"
    assert plan["messages"][0] == {
        "role": "system",
        "content": (
            f"Be brief.\n\n{PREAMBLE}\n\nCheckpoint [1] \u2014 Lisbon "
            f"({(saved['shortHash'])})\nKey Decisions:\n- Go in May"
        ),
    }


async def test_settings_input_replaces_whole_and_an_empty_one_clears(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    await _update_session(gql, sid, settings={"instructions": PIRATE, "temperature": 1.0})

    replaced = await _update_session(gql, sid, settings={"topP": 0.5})
    assert replaced["session"]["settings"] == {**NONE, "topP": 0.5}
    untouched = await _update_session(gql, sid, title="renamed")
    assert untouched["session"]["settings"] == {**NONE, "topP": 0.5}
    cleared = await _update_session(gql, sid, settings={})
    assert cleared["session"]["settings"] == NONE
    # Blank instructions and an empty stop list are "not set".
    blank = await _update_session(gql, sid, settings={"instructions": "  ", "stop": []})
    assert blank["session"]["settings"] == NONE
    plan = await preview(gql, sid, "hi")
    assert plan["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("given", "field", "code"),
    [
        ({"temperature": 2.01}, "settings.temperature", "OUT_OF_RANGE"),
        ({"temperature": -0.1}, "settings.temperature", "OUT_OF_RANGE"),
        ({"topP": 0.0}, "settings.topP", "OUT_OF_RANGE"),
        ({"topP": 1.5}, "settings.topP", "OUT_OF_RANGE"),
        ({"maxOutputTokens": 0}, "settings.maxOutputTokens", "OUT_OF_RANGE"),
        (
            {"maxOutputTokens": OFFLINE_CONTEXT_WINDOW + 1},
            "settings.maxOutputTokens",
            "OUT_OF_RANGE",
        ),
        ({"stop": ["a", "b", "c", "d", "e"]}, "settings.stop", "OUT_OF_RANGE"),
        ({"stop": ["x" * 101]}, "settings.stop", "OUT_OF_RANGE"),
        ({"stop": [""]}, "settings.stop", "INVALID"),
        ({"instructions": "x" * 20_001}, "settings.instructions", "OUT_OF_RANGE"),
    ],
)
async def test_bad_values_are_typed_errors_that_change_nothing(
    gql: GraphQLClient, given: dict[str, Any], field: str, code: str
) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    await _update_session(gql, sid, settings={"temperature": 1.0})

    refused = await _update_session(gql, sid, title="not applied", settings=given)

    assert refused["session"] is None
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [(code, field)]
    kept = (await gql(SESSION, id=sid))["node"]["settings"]
    assert kept == {**NONE, "temperature": 1.0}


async def test_max_output_tokens_is_checked_against_the_new_model_when_both_change(
    gql: GraphQLClient,
) -> None:
    sid = (await create_session(gql, title="t"))["id"]  # offline/echo: 32,768
    allowed = await _update_session(gql, sid, settings={"maxOutputTokens": 20_000})
    assert allowed["errors"] == []

    # lab/my-model is unknown to LiteLLM's catalogue: its limit is its window, 8,192.
    refused = await _update_session(
        gql, sid, model="lab/my-model", settings={"maxOutputTokens": 8193}
    )
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [
        ("OUT_OF_RANGE", "settings.maxOutputTokens")
    ]
    fits = await _update_session(gql, sid, model="lab/my-model", settings={"maxOutputTokens": 8192})
    assert fits["session"]["model"] == "lab/my-model"
    assert fits["session"]["settings"]["maxOutputTokens"] == 8192


async def test_a_space_default_beyond_the_models_limit_is_sent_as_the_limit(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space = await create_space(gql)
    sid = (await create_session(gql, title="t", spaceId=space, model="lab/my-model"))["id"]
    await _update_space(gql, space, settings={"maxOutputTokens": 100_000})

    sent = await send(gql, sid, "hello")

    assert sent["errors"] == []
    assert fake_openai.requests[-1]["max_tokens"] == 8192
    replies = (await gql(SESSION, id=sid))["node"]["turns"]["nodes"]
    assert replies[1]["settings"] == {**NONE, "maxOutputTokens": 8192}


async def test_a_reply_asked_with_no_settings_records_none_and_sends_the_defaults(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, title="t", model="lab/my-model"))["id"]

    await send(gql, sid, "hello")

    body = fake_openai.requests[-1]
    assert body["max_tokens"] == 1024  # the usual answer reserve
    assert "temperature" not in body and "top_p" not in body and "stop" not in body
    replies = (await gql(SESSION, id=sid))["node"]["turns"]["nodes"]
    assert [t["settings"] for t in replies] == [None, None]


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    async with accounts_app(settings) as world:
        created = await world.data(
            "owner", 'mutation { createSpace(input: {name: "Trips"}) { space { id } } }'
        )
        world.ids["space"] = space = created["createSpace"]["space"]["id"]
        for user, role in (("editor", "EDITOR"), ("viewer", "VIEWER")):
            await world.data(
                "owner",
                "mutation($s: ID!, $u: String!, $r: SpaceRole!) { addSpaceMember(input: "
                "{spaceId: $s, userName: $u, role: $r}) { member { role } } }",
                s=space,
                u=user,
                r=role,
            )
        session = await world.data(
            "owner",
            "mutation($s: ID) { createSession(input: {spaceId: $s}) { session { id } } }",
            s=space,
        )
        world.ids["session"] = session["createSession"]["session"]["id"]
        yield world


@pytest.mark.parametrize("actor", ["viewer", "editor"])
async def test_only_the_spaces_owner_sets_its_defaults(world: World, actor: str) -> None:
    refused = await world.data(
        actor, UPDATE_SPACE, input={"id": world.ids["space"], "settings": {"temperature": 1}}
    )
    assert refused["updateSpace"]["space"] is None
    assert [e["code"] for e in refused["updateSpace"]["errors"]] == ["FORBIDDEN"]
    space = await world.data(
        "owner",
        f"query($id: ID!) {{ node(id: $id) {{ ... on Space {{ {SETTINGS} }} }} }}",
        id=world.ids["space"],
    )
    assert space["node"]["settings"] == NONE


async def test_another_users_session_settings_cannot_be_set(world: World) -> None:
    refused = await world.data(
        "viewer",
        UPDATE_SESSION,
        input={"id": world.ids["session"], "settings": {"instructions": "Leak it all."}},
    )
    assert refused["updateSession"]["session"] is None
    assert [e["code"] for e in refused["updateSession"]["errors"]] == ["NOT_FOUND"]


# --- presets -------------------------------------------------------------------

CREATE_PRESET = f"""mutation($input: CreatePresetInput!) {{
  createPreset(input: $input) {{ preset {{ id name model {SETTINGS} }} {ERRORS} }} }}"""
UPDATE_PRESET = f"""mutation($input: UpdatePresetInput!) {{
  updatePreset(input: $input) {{ preset {{ id name model {SETTINGS} }} {ERRORS} }} }}"""
DELETE_PRESET = f"""mutation($id: ID!) {{
  deletePreset(input: {{id: $id}}) {{ deletedId {ERRORS} }} }}"""
APPLY_PRESET = f"""mutation($s: ID!, $p: ID!) {{
  applyPreset(input: {{sessionId: $s, presetId: $p}}) {{ session {{ model {SETTINGS} }} {ERRORS} }} }}"""
PRESETS = "{ viewer { presets { name model } } }"


async def _preset(gql: GraphQLClient, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = (await gql(CREATE_PRESET, input=fields))["createPreset"]
    return result


async def test_a_preset_applied_gives_the_session_its_model_and_settings(
    gql: GraphQLClient,
) -> None:
    created = await _preset(
        gql,
        name="  Pirate ",
        model="offline/echo",
        settings={"instructions": PIRATE, "temperature": 0.7},
    )
    assert created["errors"] == []
    preset = created["preset"]
    assert (preset["name"], preset["model"]) == ("Pirate", "offline/echo")
    await _preset(gql, name="Analyst", model="lab/my-model", settings={"topP": 0.5})
    listed = (await gql(PRESETS))["viewer"]["presets"]
    assert listed == [
        {"name": "Analyst", "model": "lab/my-model"},
        {"name": "Pirate", "model": "offline/echo"},
    ]
    sid = (await create_session(gql, title="t", model="lab/my-model"))["id"]
    await _update_session(gql, sid, settings={"stop": ["X"]})

    applied = (await gql(APPLY_PRESET, s=sid, p=preset["id"]))["applyPreset"]

    assert applied == {
        "session": {
            "model": "offline/echo",
            "settings": {**NONE, "instructions": PIRATE, "temperature": 0.7},
        },
        "errors": [],
    }
    sent = await send(gql, sid, "Ahoy?")
    assert sent["assistantTurn"]["content"].splitlines()[-2:] == [
        f"Instructions: {PIRATE}",
        "Parameters: temperature 0.7",
    ]


@pytest.mark.parametrize(
    ("fields", "code", "field"),
    [
        ({"name": "", "model": "offline/echo", "settings": {}}, "INVALID", "name"),
        ({"name": "x", "model": "nope/none", "settings": {}}, "UNKNOWN_MODEL", "model"),
        (
            {"name": "x", "model": "lab/my-model", "settings": {"maxOutputTokens": 8193}},
            "OUT_OF_RANGE",
            "settings.maxOutputTokens",
        ),
        (
            {"name": "x", "model": "offline/echo", "settings": {"temperature": 9}},
            "OUT_OF_RANGE",
            "settings.temperature",
        ),
    ],
)
async def test_a_bad_preset_is_a_typed_error(
    gql: GraphQLClient, fields: dict[str, Any], code: str, field: str
) -> None:
    refused = await _preset(gql, **fields)

    assert refused["preset"] is None
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [(code, field)]
    assert (await gql(PRESETS))["viewer"]["presets"] == []


async def test_preset_names_are_unique_and_presets_can_be_changed_and_deleted(
    gql: GraphQLClient,
) -> None:
    first = (await _preset(gql, name="A", model="offline/echo", settings={}))["preset"]
    second = (await _preset(gql, name="B", model="offline/echo", settings={}))["preset"]
    again = await _preset(gql, name="A", model="offline/echo", settings={})
    assert [(e["code"], e["field"]) for e in again["errors"]] == [("CONFLICT", "name")]
    renamed = (await gql(UPDATE_PRESET, input={"id": second["id"], "name": "A"}))["updatePreset"]
    assert [(e["code"], e["field"]) for e in renamed["errors"]] == [("CONFLICT", "name")]

    changed = (
        await gql(
            UPDATE_PRESET,
            input={"id": first["id"], "name": "C", "settings": {"temperature": 0.1}},
        )
    )["updatePreset"]
    assert changed["preset"]["name"] == "C"
    assert changed["preset"]["settings"] == {**NONE, "temperature": 0.1}
    deleted = (await gql(DELETE_PRESET, id=first["id"]))["deletePreset"]
    assert deleted == {"deletedId": first["id"], "errors": []}
    assert (await gql(PRESETS))["viewer"]["presets"] == [{"name": "B", "model": "offline/echo"}]


async def test_another_users_preset_does_not_exist_for_them(world: World) -> None:
    created = await world.data(
        "owner", CREATE_PRESET, input={"name": "Mine", "model": "offline/echo", "settings": {}}
    )
    preset_id = created["createPreset"]["preset"]["id"]
    theirs = await world.data("viewer", "mutation { createSession(input: {}) { session { id } } }")
    their_session = theirs["createSession"]["session"]["id"]

    applied = await world.data("viewer", APPLY_PRESET, s=their_session, p=preset_id)
    deleted = await world.data("viewer", DELETE_PRESET, id=preset_id)
    listed = await world.data("viewer", PRESETS)

    assert [(e["code"], e["field"]) for e in applied["applyPreset"]["errors"]] == [
        ("NOT_FOUND", "presetId")
    ]
    assert [e["code"] for e in deleted["deletePreset"]["errors"]] == ["NOT_FOUND"]
    assert listed["viewer"]["presets"] == []
