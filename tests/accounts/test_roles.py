"""Role rules the authorization matrix cannot express (issue 9, phase 2).

Given an accounts-mode app where the owner's space "Trips" has editor and
viewer as members, each test changes one thing and reads the result as each
user sees it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from api.settings import Settings
from tests.accounts.world import World, accounts_app

ERR = "errors { code field }"
ADD = (
    "mutation($s: ID!, $u: String!, $r: SpaceRole!) { addSpaceMember(input: "
    f"{{spaceId: $s, userName: $u, role: $r}}) {{ member {{ userName role }} {ERR} }} }}"
)
UPDATE = (
    "mutation($s: ID!, $u: String!, $r: SpaceRole!) { updateSpaceMember(input: "
    f"{{spaceId: $s, userName: $u, role: $r}}) {{ member {{ userName role }} {ERR} }} }}"
)
REMOVE = (
    "mutation($s: ID!, $u: String!) { removeSpaceMember(input: {spaceId: $s, userName: $u}) "
    f"{{ space {{ id }} {ERR} }} }}"
)
MEMBERS = "query($s: ID!) { space(id: $s) { viewerRole members { userName role } } }"
CREATE_SESSION = (
    "mutation($s: ID) { createSession(input: {spaceId: $s}) "
    f"{{ session {{ id visibility authorName }} {ERR} }} }}"
)
SEND = (
    "mutation($s: ID!, $c: String!, $m: String) { sendMessage(input: "
    "{sessionId: $s, content: $c, model: $m}) { userTurn { sequenceNumber author { name viaToken } } "
    f"assistantTurn {{ author {{ name viaToken }} }} context {{ mode checkpoints {{ title }} }} {ERR} }} }}"
)
SAVE = (
    "mutation($s: ID!, $t: String!) { createCheckpoint(input: {sessionId: $s, title: $t}) "
    f"{{ checkpoint {{ id hash author {{ name viaToken }} }} {ERR} }} }}"
)
SHARE = (
    "mutation($id: ID!, $v: SessionVisibility!) { updateSession(input: {id: $id, visibility: $v}) "
    f"{{ session {{ visibility }} {ERR} }} }}"
)


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    async with accounts_app(settings) as world:
        created = await world.data(
            "owner", 'mutation { createSpace(input: {name: "Trips"}) { space { id } } }'
        )
        world.ids["space"] = created["createSpace"]["space"]["id"]
        for user, role in (("editor", "EDITOR"), ("viewer", "VIEWER")):
            added = await world.data("owner", ADD, s=world.ids["space"], u=user, r=role)
            assert added["addSpaceMember"] == {
                "member": {"userName": user, "role": role},
                "errors": [],
            }
        yield world


async def _session(world: World, actor: str, space: str | None) -> str:
    created = (await world.data(actor, CREATE_SESSION, s=space))["createSession"]
    assert created["errors"] == [], created
    session_id: str = created["session"]["id"]
    return session_id


async def _send(world: World, actor: str, session: str, content: str = "hello") -> Any:
    return (await world.data(actor, SEND, s=session, c=content, m=None))["sendMessage"]


async def test_the_members_and_each_ones_role(world: World) -> None:
    space = world.ids["space"]
    expected = [
        {"userName": "owner", "role": "OWNER"},
        {"userName": "editor", "role": "EDITOR"},
        {"userName": "viewer", "role": "VIEWER"},
    ]
    for actor, role in (("owner", "OWNER"), ("editor", "EDITOR"), ("viewer", "VIEWER")):
        assert (await world.data(actor, MEMBERS, s=space))["space"] == {
            "viewerRole": role,
            "members": expected,
        }
    assert (await world.data("other", MEMBERS, s=space))["space"] is None


async def test_the_last_owner_can_be_neither_demoted_nor_removed(world: World) -> None:
    space = world.ids["space"]
    demoted = await world.data("owner", UPDATE, s=space, u="owner", r="EDITOR")
    assert demoted["updateSpaceMember"] == {
        "member": None,
        "errors": [{"code": "LAST_OWNER", "field": "userName"}],
    }
    removed = await world.data("owner", REMOVE, s=space, u="owner")
    assert removed["removeSpaceMember"] == {
        "space": None,
        "errors": [{"code": "LAST_OWNER", "field": "userName"}],
    }

    # With a second owner, the first may step down, and then leave.
    promoted = await world.data("owner", UPDATE, s=space, u="editor", r="OWNER")
    assert promoted["updateSpaceMember"]["member"] == {"userName": "editor", "role": "OWNER"}
    stepped = await world.data("owner", UPDATE, s=space, u="owner", r="VIEWER")
    assert stepped["updateSpaceMember"] == {
        "member": {"userName": "owner", "role": "VIEWER"},
        "errors": [],
    }
    # A viewer now: changing members is the owners' (FORBIDDEN, the space is visible).
    refused = await world.data("owner", REMOVE, s=space, u="viewer")
    assert refused["removeSpaceMember"] == {
        "space": None,
        "errors": [{"code": "FORBIDDEN", "field": "spaceId"}],
    }
    left = await world.data("editor", REMOVE, s=space, u="owner")
    assert left["removeSpaceMember"] == {"space": {"id": space}, "errors": []}
    assert (await world.data("owner", MEMBERS, s=space))["space"] is None
    assert (await world.data("editor", MEMBERS, s=space))["space"]["members"] == [
        {"userName": "editor", "role": "OWNER"},
        {"userName": "viewer", "role": "VIEWER"},
    ]
    last = await world.data("editor", UPDATE, s=space, u="editor", r="EDITOR")
    assert last["updateSpaceMember"]["errors"] == [{"code": "LAST_OWNER", "field": "userName"}]


async def test_member_changes_are_refused_with_typed_errors(world: World) -> None:
    space = world.ids["space"]
    unknown = await world.data("owner", ADD, s=space, u="nobody", r="VIEWER")
    assert unknown["addSpaceMember"]["errors"] == [{"code": "NOT_FOUND", "field": "userName"}]
    again = await world.data("owner", ADD, s=space, u="editor", r="VIEWER")
    assert again["addSpaceMember"]["errors"] == [{"code": "CONFLICT", "field": "userName"}]
    not_member = await world.data("owner", UPDATE, s=space, u="third", r="VIEWER")
    assert not_member["updateSpaceMember"]["errors"] == [{"code": "NOT_FOUND", "field": "userName"}]
    by_editor = await world.data("editor", ADD, s=space, u="third", r="VIEWER")
    assert by_editor["addSpaceMember"]["errors"] == [{"code": "FORBIDDEN", "field": "spaceId"}]
    by_stranger = await world.data("other", ADD, s=space, u="other", r="OWNER")
    assert by_stranger["addSpaceMember"]["errors"] == [{"code": "NOT_FOUND", "field": "spaceId"}]
    assert [
        m["userName"] for m in (await world.data("owner", MEMBERS, s=space))["space"]["members"]
    ] == ["owner", "editor", "viewer"]


async def test_a_session_is_read_by_the_space_only_once_shared(world: World) -> None:
    space = world.ids["space"]
    session = await _session(world, "owner", space)
    await _send(world, "owner", session)
    saved = (await world.data("owner", SAVE, s=session, t="Plan"))["createCheckpoint"]
    checkpoint = saved["checkpoint"]["id"]
    read = (
        "query($s: ID!, $c: ID!) { session(id: $s) { id turns { nodes { role } } } "
        "checkpoint(id: $c) { title sourceSession { id } sourceTurns { role } } "
        "space(id: $s2) { sessions { edges { node { id } } } } }"
    ).replace("$c: ID!)", "$c: ID!, $s2: ID!)")

    async def seen_by(actor: str) -> Any:
        return await world.data(actor, read, s=session, c=checkpoint, s2=space)

    private = await seen_by("editor")
    assert private == {
        "session": None,
        "checkpoint": {"title": "Plan", "sourceSession": None, "sourceTurns": []},
        "space": {"sessions": {"edges": []}},
    }
    # Only its author shares it, and writes to it.
    by_editor = await world.data("editor", SHARE, id=session, v="SPACE")
    assert by_editor["updateSession"]["errors"] == [{"code": "NOT_FOUND", "field": "id"}]
    shared = await world.data("owner", SHARE, id=session, v="SPACE")
    assert shared["updateSession"] == {"session": {"visibility": "SPACE"}, "errors": []}

    for actor in ("editor", "viewer"):
        assert await seen_by(actor) == {
            "session": {
                "id": session,
                "turns": {"nodes": [{"role": "USER"}, {"role": "ASSISTANT"}]},
            },
            "checkpoint": {
                "title": "Plan",
                "sourceSession": {"id": session},
                "sourceTurns": [{"role": "USER"}, {"role": "ASSISTANT"}],
            },
            "space": {"sessions": {"edges": [{"node": {"id": session}}]}},
        }
        refused = await world.data(actor, SEND, s=session, c="mine?", m=None)
        assert refused["sendMessage"]["errors"] == [{"code": "FORBIDDEN", "field": "sessionId"}]
    stranger = await world.data("other", "query($s: ID!) { session(id: $s) { id } }", s=session)
    assert stranger == {"session": None}

    private_again = await world.data("owner", SHARE, id=session, v="PRIVATE")
    assert private_again["updateSession"]["session"] == {"visibility": "PRIVATE"}
    assert await seen_by("viewer") == private


async def test_a_session_in_no_space_cannot_be_shared(world: World) -> None:
    loose = await _session(world, "owner", None)
    refused = await world.data("owner", SHARE, id=loose, v="SPACE")
    assert refused["updateSession"] == {
        "session": None,
        "errors": [{"code": "NO_SPACE", "field": "visibility"}],
    }


async def test_turns_and_checkpoints_record_their_author_and_token(world: World) -> None:
    space = world.ids["space"]
    session = await _session(world, "editor", space)
    sent = await _send(world, "editor", session)
    assert sent["userTurn"]["author"] == {"name": "editor", "viaToken": "editing"}
    assert sent["assistantTurn"]["author"] == {"name": "editor", "viaToken": "editing"}
    saved = (await world.data("editor", SAVE, s=session, t="Editor's"))["createCheckpoint"]
    assert saved["errors"] == []
    assert saved["checkpoint"]["author"] == {"name": "editor", "viaToken": "editing"}
    # The owner reads who saved it; the author is no part of the hash.
    read = await world.data(
        "owner",
        "query($c: ID!, $s: ID!) { checkpoint(id: $c) { author { name viaToken } } "
        "verifyLineage(spaceId: $s) { ok checked } }",
        c=saved["checkpoint"]["id"],
        s=space,
    )
    assert read == {
        "checkpoint": {"author": {"name": "editor", "viaToken": "editing"}},
        "verifyLineage": {"ok": True, "checked": 1},
    }


async def test_a_viewer_forks_into_a_session_of_their_own_outside_the_space(
    world: World,
) -> None:
    space = world.ids["space"]
    session = await _session(world, "owner", space)
    await _send(world, "owner", session)
    checkpoint = (await world.data("owner", SAVE, s=session, t="Plan"))["createCheckpoint"][
        "checkpoint"
    ]["id"]

    refused = await world.data("viewer", CREATE_SESSION, s=space)
    assert refused["createSession"]["errors"] == [{"code": "FORBIDDEN", "field": "spaceId"}]
    named = await world.data(
        "viewer",
        'mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "mine"}) '
        f"{{ session {{ id }} {ERR} }} }}",
        c=checkpoint,
    )
    assert named["forkSession"]["errors"] == [{"code": "FORBIDDEN", "field": "branchName"}]
    fork = await world.data(
        "viewer",
        "mutation($c: ID!) { forkSession(input: {checkpointId: $c}) { session { id space { id } "
        f"visibility authorName mount {{ baseSequence checkpoint {{ id }} }} }} {ERR} }} }}",
        c=checkpoint,
    )
    forked = fork["forkSession"]["session"]
    assert fork["forkSession"]["errors"] == []
    assert {k: v for k, v in forked.items() if k != "id"} == {
        "space": None,
        "visibility": "PRIVATE",
        "authorName": "viewer",
        "mount": {"baseSequence": 0, "checkpoint": {"id": checkpoint}},
    }
    sent = await _send(world, "viewer", forked["id"], "go on")
    assert sent["context"] == {"mode": "MOUNTED", "checkpoints": [{"title": "Plan"}]}
    kept_out = await world.data("viewer", SAVE, s=forked["id"], t="Mine")
    assert kept_out["createCheckpoint"]["errors"] == [{"code": "NO_SPACE", "field": "sessionId"}]
    # The lineage has no branch of the viewer's.
    branches = await world.data(
        "owner", "query($s: ID!) { space(id: $s) { branches { name } } }", s=space
    )
    assert branches == {"space": {"branches": [{"name": "main"}]}}


async def test_a_removed_member_takes_their_sessions_out_of_the_space(world: World) -> None:
    space = world.ids["space"]
    session = await _session(world, "editor", space)
    await _send(world, "editor", session)
    removed = await world.data("owner", REMOVE, s=space, u="editor")
    assert removed["removeSpaceMember"]["errors"] == []
    mine = await world.data(
        "editor",
        "query($s: ID!, $p: ID!) { session(id: $s) { space { id } visibility lastSequenceNumber } "
        "space(id: $p) { id } }",
        s=session,
        p=space,
    )
    assert mine == {
        "session": {"space": None, "visibility": "PRIVATE", "lastSequenceNumber": 2},
        "space": None,
    }


async def test_deleting_a_space_keeps_other_members_sessions(world: World) -> None:
    space = world.ids["space"]
    theirs = await _session(world, "editor", space)
    deleted = await world.data(
        "owner",
        f"mutation($s: ID!) {{ deleteSpace(input: {{id: $s}}) {{ deletedId {ERR} }} }}",
        s=space,
    )
    assert deleted["deleteSpace"] == {"deletedId": space, "errors": []}
    kept = await world.data(
        "editor", "query($s: ID!) { session(id: $s) { space { id } } }", s=theirs
    )
    assert kept == {"session": {"space": None}}


async def test_an_admins_only_model_is_neither_listed_nor_usable_by_others(
    world: World,
) -> None:
    space = world.ids["space"]
    listed = "query { providers { providers { name models } adminsOnly } }"
    kept = await world.data(
        "owner",
        'mutation { setModelAccess(input: {model: "lab/my-model", adminsOnly: true}) '
        f"{{ model adminsOnly {ERR} }} }}",
    )
    assert kept["setModelAccess"] == {"model": "lab/my-model", "adminsOnly": True, "errors": []}
    refused = await world.data(
        "editor",
        'mutation { setModelAccess(input: {model: "lab/my-model", adminsOnly: false}) '
        f"{{ model {ERR} }} }}",
    )
    assert refused["setModelAccess"]["errors"] == [{"code": "FORBIDDEN", "field": "model"}]

    def lab(providers: Any) -> list[str]:
        [found] = [p for p in providers["providers"]["providers"] if p["name"] == "lab"]
        return list(found["models"])

    as_owner = await world.data("owner", listed)
    assert lab(as_owner) == ["lab/my-model", "lab/other-model"]
    assert as_owner["providers"]["adminsOnly"] == ["lab/my-model"]
    as_editor = await world.data("editor", listed)
    assert lab(as_editor) == ["lab/other-model"]
    assert as_editor["providers"]["adminsOnly"] == []

    session = await _session(world, "editor", space)
    sent = await world.data("editor", SEND, s=session, c="hi", m="lab/my-model")
    assert sent["sendMessage"] == {
        "userTurn": None,
        "assistantTurn": None,
        "context": None,
        "errors": [{"code": "FORBIDDEN", "field": "model"}],
    }
    # Refused before anything was written: the session is as it was.
    after = await world.data(
        "editor", "query($s: ID!) { session(id: $s) { lastSequenceNumber model } }", s=session
    )
    assert after == {"session": {"lastSequenceNumber": 0, "model": "offline/echo"}}
    switched = await world.data(
        "editor",
        'mutation($s: ID!) { updateSession(input: {id: $s, model: "lab/my-model"}) '
        f"{{ session {{ model }} {ERR} }} }}",
        s=session,
    )
    assert switched["updateSession"]["errors"] == [{"code": "FORBIDDEN", "field": "model"}]

    opened = await world.data(
        "owner",
        'mutation { setModelAccess(input: {model: "lab/my-model", adminsOnly: false}) '
        f"{{ adminsOnly {ERR} }} }}",
    )
    assert opened["setModelAccess"] == {"adminsOnly": False, "errors": []}
    assert lab(await world.data("editor", listed)) == ["lab/my-model", "lab/other-model"]


async def test_when_the_default_model_is_kept_for_admins_others_start_with_one_they_may_use(
    world: World,
) -> None:
    space = world.ids["space"]
    session = await _session(world, "owner", space)
    await _send(world, "owner", session)
    checkpoint = (await world.data("owner", SAVE, s=session, t="Plan"))["createCheckpoint"][
        "checkpoint"
    ]["id"]
    kept = await world.data(
        "owner",
        'mutation { setModelAccess(input: {model: "offline/echo", adminsOnly: true}) '
        f"{{ adminsOnly {ERR} }} }}",
    )
    assert kept["setModelAccess"] == {"adminsOnly": True, "errors": []}
    default = "query { providers { chatDefault } }"
    assert await world.data("owner", default) == {"providers": {"chatDefault": "offline/echo"}}
    # The next configured model the editor may use, from an available provider.
    assert await world.data("editor", default) == {
        "providers": {"chatDefault": "offline/extractor"}
    }

    model = "query($s: ID!) { session(id: $s) { model } }"
    mine = await _session(world, "editor", space)
    assert await world.data("editor", model, s=mine) == {"session": {"model": "offline/extractor"}}
    assert (await _send(world, "editor", mine))["errors"] == []
    theirs = await _session(world, "owner", space)
    assert await world.data("owner", model, s=theirs) == {"session": {"model": "offline/echo"}}
    fork = await world.data(
        "viewer",
        f"mutation($c: ID!) {{ forkSession(input: {{checkpointId: $c}}) {{ session {{ model }} "
        f"{ERR} }} }}",
        c=checkpoint,
    )
    assert fork["forkSession"] == {"session": {"model": "offline/extractor"}, "errors": []}
    edited = await world.data(
        "editor",
        f'mutation($c: ID!) {{ forkSession(input: {{checkpointId: $c, branchName: "ed"}}) '
        f"{{ session {{ model }} {ERR} }} }}",
        c=checkpoint,
    )
    assert edited["forkSession"] == {"session": {"model": "offline/extractor"}, "errors": []}


SEARCH = (
    'query { search(query: "apricot", kinds: [TURN, CHECKPOINT, SPACE]) { edges { kind '
    "node { ... on Turn { session { id } } ... on Checkpoint { id } ... on Space { id } } } } }"
)


async def _hits(world: World, actor: str) -> list[tuple[str, str]]:
    found = (await world.data(actor, SEARCH))["search"]["edges"]
    hits = []
    for edge in found:
        node = edge["node"]
        hits.append((edge["kind"], node["session"]["id"] if "session" in node else node["id"]))
    return sorted(hits)


async def test_search_finds_what_the_caller_may_read_and_nothing_else(world: World) -> None:
    space = world.ids["space"]
    renamed = await world.data(
        "owner",
        'mutation($s: ID!) { updateSpace(input: {id: $s, name: "Apricot trips"}) { space { id } } }',
        s=space,
    )
    assert renamed["updateSpace"]["space"] == {"id": space}
    shared = await _session(world, "owner", space)
    await _send(world, "owner", shared, "apricot jam")
    checkpoint = (await world.data("owner", SAVE, s=shared, t="Apricot plan"))["createCheckpoint"][
        "checkpoint"
    ]["id"]
    loose = await _session(world, "owner", None)
    await _send(world, "owner", loose, "apricot secrets")
    editors = await _session(world, "editor", space)
    await _send(world, "editor", editors, "apricot drafts")
    # Another space's members see none of it.
    other_space = (
        await world.data(
            "other", 'mutation { createSpace(input: {name: "Apricot elsewhere"}) { space { id } } }'
        )
    )["createSpace"]["space"]["id"]

    lineage = [("CHECKPOINT", checkpoint), ("SPACE", space)]
    owner_turns = [("TURN", shared)] * 2 + [("TURN", loose)] * 2
    assert await _hits(world, "owner") == sorted(lineage + owner_turns)
    assert await _hits(world, "editor") == sorted(lineage + [("TURN", editors)] * 2)
    assert await _hits(world, "viewer") == sorted(lineage)
    assert await _hits(world, "other") == [("SPACE", other_space)]

    await world.data("owner", SHARE, id=shared, v="SPACE")
    assert await _hits(world, "viewer") == sorted(lineage + [("TURN", shared)] * 2)
    assert await _hits(world, "other") == [("SPACE", other_space)]

    # A member removed, even the space's creator, finds nothing of it any more.
    await world.data("owner", UPDATE, s=space, u="editor", r="OWNER")
    await world.data("editor", REMOVE, s=space, u="owner")
    assert await _hits(world, "owner") == sorted([("TURN", loose)] * 2 + [("TURN", shared)] * 2)


async def test_a_readers_context_preview_names_only_what_the_reader_may_read(
    world: World,
) -> None:
    space = world.ids["space"]
    shared = await _session(world, "owner", space)
    await world.data("owner", SHARE, id=shared, v="SPACE")
    # A checkpoint in a space of the owner's that the editor is not a member of.
    private_space = (
        await world.data(
            "owner", 'mutation { createSpace(input: {name: "Mine"}) { space { id } } }'
        )
    )["createSpace"]["space"]["id"]
    elsewhere = await _session(world, "owner", private_space)
    await _send(world, "owner", elsewhere)
    secret = (await world.data("owner", SAVE, s=elsewhere, t="Secret plan"))["createCheckpoint"][
        "checkpoint"
    ]["id"]
    preview = (
        'query($s: ID!, $p: ID, $c: ID) { contextPreview(input: {sessionId: $s, content: "x", '
        "context: {spaceId: $p, checkpointId: $c}}) { mode checkpoints { title } } }"
    )
    as_owner = await world.data("owner", preview, s=shared, p=private_space, c=secret)
    assert as_owner == {
        "contextPreview": {"mode": "MOUNTED", "checkpoints": [{"title": "Secret plan"}]}
    }
    assert await world.data("editor", preview, s=shared, c=secret) == {"contextPreview": None}
    assert (await world.data("editor", preview, s=shared, c=None))["contextPreview"][
        "mode"
    ] == "HEAD"


async def test_a_members_export_holds_the_lineage_and_only_the_sessions_they_may_read(
    world: World,
) -> None:
    schema = json.loads((Path(__file__).parents[2] / "docs/export.schema.json").read_text())
    space = world.ids["space"]
    private = await _session(world, "owner", space)
    await _send(world, "owner", private)
    await world.data("owner", SAVE, s=private, t="From a private session")
    shared = await _session(world, "owner", space)
    await _send(world, "owner", shared)
    await world.data("owner", SHARE, id=shared, v="SPACE")
    export = "query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }"

    def session_count(text: str) -> int:
        document = json.loads(text)
        jsonschema.validate(document, schema)
        [item] = document["spaces"]
        assert [c["title"] for c in item["checkpoints"]] == ["From a private session"]
        return len(item["sessions"])

    as_owner = (await world.data("owner", export, s=space))["exportSpace"]["document"]
    as_viewer = (await world.data("viewer", export, s=space))["exportSpace"]["document"]
    assert (session_count(as_owner), session_count(as_viewer)) == (2, 1)
    # The viewer's copy imports as a space of theirs; the checkpoint's source
    # session, which it does not hold, is dropped.
    imported = await world.data(
        "viewer",
        "mutation($d: String!) { importSpace(input: {document: $d}) { created spaces { id "
        "viewerRole lineage(first: 10) { edges { node { sourceSession { id } } } } } "
        "errors { code } } }",
        d=as_viewer,
    )
    result = imported["importSpace"]
    assert (result["created"], result["errors"]) == (1, [])
    assert result["spaces"][0]["viewerRole"] == "OWNER"
    assert result["spaces"][0]["lineage"]["edges"] == [{"node": {"sourceSession": None}}]


async def test_two_owners_stepping_down_at_once_leave_one_owner(world: World) -> None:
    space = world.ids["space"]
    await world.data("owner", UPDATE, s=space, u="editor", r="OWNER")
    both = await asyncio.gather(
        world.data("owner", UPDATE, s=space, u="editor", r="VIEWER"),
        world.data("editor", UPDATE, s=space, u="owner", r="VIEWER"),
    )
    codes = sorted(
        tuple(e["code"] for e in answer["updateSpaceMember"]["errors"]) for answer in both
    )
    # The second is refused: as the last owner's demotion, or (when the first had
    # committed before it started) as no longer an owner's change.
    assert codes in ([(), ("LAST_OWNER",)], [(), ("FORBIDDEN",)])
    members = (await world.data("viewer", MEMBERS, s=space))["space"]["members"]
    assert sorted(m["role"] for m in members) == ["OWNER", "VIEWER", "VIEWER"]
