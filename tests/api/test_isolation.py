"""Context isolation (docs/architecture.md#context-modes) end to end: what the provider *received*, through real LiteLLM.

The `lab` provider points LiteLLM's OpenAI client at a fake server on
127.0.0.1, so every assertion here is about bytes that crossed the wire.
"""

from __future__ import annotations

import json

from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import checkpoint, create_session, create_space, mount, preview, send


async def test_mounting_the_first_checkpoint_hides_everything_after_it(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    # Given a session that plans Australia, checkpoints, extends to New Zealand
    # and checkpoints again
    space_id = await create_space(gql, "Trips")
    session = await create_session(gql, spaceId=space_id, model="lab/my-model", title="Trip")
    sid = session["id"]
    fake_openai.reply("Sydney, Melbourne, then the Great Barrier Reef.")
    await send(gql, sid, "Plan two weeks in Australia.")
    australia = await checkpoint(
        gql,
        sid,
        "Australia plan",
        objective="Two weeks in Australia",
        decisions=["Fly into Sydney"],
        entities=["Australia", "Sydney"],
    )
    fake_openai.reply("Add Auckland and Queenstown for a week.")
    await send(gql, sid, "Extend the trip to New Zealand.")
    nz = await checkpoint(
        gql,
        sid,
        "New Zealand extension",
        decisions=["Add a week in New Zealand"],
        entities=["New Zealand", "Queenstown"],
    )
    assert nz["parent"] == {"id": australia["id"]}

    # When the first checkpoint is mounted and a message is sent
    mounted = await mount(gql, sid, australia["id"])
    assert mounted["mount"] == {"baseSequence": 4, "checkpoint": {"id": australia["id"]}}
    fake_openai.reply("Pack light layers.")
    result = await send(gql, sid, "What should we pack?")

    # Then the provider received the Australia checkpoint and the new message only
    assert result["errors"] == []
    request = fake_openai.requests[-1]
    assert request["model"] == "my-model"
    assert request["messages"] == [
        {
            "role": "system",
            "content": "You are continuing a conversation.\n\n"
            f"Checkpoint [1] \u2014 Australia plan ({australia['shortHash']})\n"
            "Objective: Two weeks in Australia\n"
            "Key Decisions:\n- Fly into Sydney",
        },
        {"role": "user", "content": "What should we pack?"},
    ]
    assert "Zealand" not in json.dumps(request)
    assert "Queenstown" not in json.dumps(request)
    assert result["context"]["mode"] == "MOUNTED"
    assert result["context"]["boundary"] == 4
    assert [c["title"] for c in result["context"]["checkpoints"]] == ["Australia plan"]
    assert result["userTurn"]["sequenceNumber"] == 5
    assert result["assistantTurn"]["sequenceNumber"] == 6
    assert result["assistantTurn"]["content"] == "Pack light layers."

    # And the next message sees the turns after the mount, still no New Zealand
    fake_openai.reply("Sunscreen.")
    await send(gql, sid, "Anything else?")
    assert [m["content"] for m in fake_openai.requests[-1]["messages"][1:]] == [
        "What should we pack?",
        "Pack light layers.",
        "Anything else?",
    ]


async def test_head_mode_sends_the_head_and_only_turns_after_it(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql)
    sid = (await create_session(gql, spaceId=space_id, model="lab/my-model", title="t"))["id"]
    await send(gql, sid, "First question")
    saved = await checkpoint(gql, sid, "Basics", summary="We covered the basics.")
    await send(gql, sid, "Second question")
    fake_openai.reply("fine")
    result = await send(gql, sid, "Third question")
    assert result["context"]["mode"] == "HEAD"
    assert result["context"]["boundary"] == 2
    assert fake_openai.requests[-1]["messages"] == [
        {
            "role": "system",
            "content": "You are continuing a conversation.\n\n"
            f"Checkpoint [1] \u2014 Basics ({saved['shortHash']})\n"
            "Summary:\nWe covered the basics.",
        },
        {"role": "user", "content": "Second question"},
        {"role": "assistant", "content": "fake reply #2"},
        {"role": "user", "content": "Third question"},
    ]


async def test_fresh_mode_keeps_the_sessions_own_turns_without_checkpoints(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.reply("Hello!")
    await send(gql, sid, "Hi")
    fake_openai.reply("Still here.")
    result = await send(gql, sid, "Are you there?")
    assert result["context"]["mode"] == "FRESH"
    assert fake_openai.requests[-1]["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Are you there?"},
    ]


async def test_preview_returns_exactly_what_send_then_sends(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql)
    sid = (await create_session(gql, spaceId=space_id, model="lab/my-model", title="t"))["id"]
    await send(gql, sid, "Plan a garden.")
    await checkpoint(gql, sid, "Garden", tasks=["Buy seeds"], openQuestions=["Which soil?"])
    await send(gql, sid, "Tomatoes or beans?")
    planned = await preview(gql, sid, "Both, then.")
    result = await send(gql, sid, "Both, then.")
    assert planned["messages"] == fake_openai.requests[-1]["messages"]
    assert planned["messages"] == result["context"]["messages"]
    assert planned["tokenEstimate"] == result["context"]["tokenEstimate"]
    assert planned["tokenEstimate"] > 0


async def test_a_fork_sees_its_checkpoint_and_every_turn_of_its_own(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql)
    sid = (await create_session(gql, spaceId=space_id, model="lab/my-model", title="t"))["id"]
    await send(gql, sid, "Design a logo.")
    base = await checkpoint(gql, sid, "Logo brief", decisions=["Use blue"])
    await send(gql, sid, "Make it red instead.")
    await checkpoint(gql, sid, "Red logo", decisions=["Use red"])

    data = await gql(
        """mutation($id: ID!) { forkSession(input: {checkpointId: $id, branchName: "green"}) {
             session { id branchName forkedFrom { id } model } errors { code } } }""",
        id=base["id"],
    )
    fork = data["forkSession"]["session"]
    assert fork["branchName"] == "green"
    assert fork["forkedFrom"] == {"id": base["id"]}
    await gql(
        """mutation($id: ID!) { updateSession(input: {id: $id, model: "lab/my-model"}) { errors { code } } }""",
        id=fork["id"],
    )
    fake_openai.reply("Green it is.")
    first = await send(gql, fork["id"], "Try green.")
    assert first["context"]["mode"] == "HEAD"
    assert fake_openai.requests[-1]["messages"] == [
        {
            "role": "system",
            "content": "You are continuing a conversation.\n\n"
            f"Checkpoint [1] \u2014 Logo brief ({base['shortHash']})\nKey Decisions:\n- Use blue",
        },
        {"role": "user", "content": "Try green."},
    ]
    saved = await checkpoint(gql, fork["id"], "Green logo", decisions=["Use green"])
    assert saved["branchName"] == "green"
    assert saved["parent"] == {"id": base["id"]}
    fake_openai.reply("ok")
    await send(gql, fork["id"], "Darker?")
    system = fake_openai.requests[-1]["messages"][0]["content"]
    assert "Green logo" in system
    assert "Red logo" not in system
    assert "red" not in json.dumps(fake_openai.requests[-1]).lower()


async def test_draft_sees_exactly_the_chat_window_and_no_checkpoint_fields(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    space_id = await create_space(gql)
    sid = (await create_session(gql, spaceId=space_id, model="lab/my-model", title="t"))["id"]
    fake_openai.reply("Take the train.")
    await send(gql, sid, "How do I get to Paris?")
    await checkpoint(gql, sid, "Paris route", decisions=["We decided to take the train."])
    fake_openai.reply("We decided to book the Louvre for Monday.")
    await send(gql, sid, "What about museums? Which day is best?")
    data = await gql(
        """mutation($id: ID!) { draftCheckpoint(input: {sessionId: $id}) {
             draft { title objective decisions openQuestions sourceTurnRange { first last } model }
             errors { code message } } }""",
        id=sid,
    )
    draft = data["draftCheckpoint"]
    assert draft["errors"] == []
    assert draft["draft"]["sourceTurnRange"] == {"first": 3, "last": 4}
    assert draft["draft"]["model"] == "offline/extractor"
    assert draft["draft"]["decisions"] == ["We decided to book the Louvre for Monday."]
    assert draft["draft"]["openQuestions"] == ["What about museums?", "Which day is best?"]
    assert "train" not in json.dumps(draft).lower()
