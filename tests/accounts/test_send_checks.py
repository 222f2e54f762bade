"""sendMessage and messageStream check a message in one order (issue 16).

Both go through ``api.services.chat.admit``: the token's scope, the session,
the content, the idempotency key, the model (known, the caller's to use, its
provider's key), then the explicit context. The same bad input gets the same
error code from both, whatever else is wrong with it; nothing is written.
"""

from __future__ import annotations

from typing import Any

from api.settings import Settings
from tests.accounts.world import World, accounts_app
from tests.support.streams import STREAM, sse_events

SEND = (
    "mutation($input: SendMessageInput!) { sendMessage(input: $input) "
    "{ userTurn { id } errors { code field } } }"
)
TOO_LONG_KEY = "k" * 201

# (actor, input besides sessionId, expected code and field). The session is
# the owner's shared session for owner, read_only and viewer, the editor's
# own one for editor; lab/my-model is kept for admins.
CASES: list[tuple[str, dict[str, Any], tuple[str, str | None]]] = [
    # A bad idempotency key with a model kept for admins: the key is wrong first.
    ("editor", {"content": "hi", "idempotencyKey": "", "model": "lab/my-model"}, ("INVALID", "idempotencyKey")),
    ("editor", {"content": "hi", "idempotencyKey": TOO_LONG_KEY, "model": "lab/my-model"}, ("INVALID", "idempotencyKey")),
    # Empty content before the key and the model.
    ("editor", {"content": "  ", "idempotencyKey": "", "model": "lab/my-model"}, ("EMPTY_CONTENT", "content")),
    # A good key and a kept model: the model.
    ("editor", {"content": "hi", "idempotencyKey": "k1", "model": "lab/my-model"}, ("FORBIDDEN", "model")),
    # An unknown model, and a provider without its key, after the key.
    ("editor", {"content": "hi", "idempotencyKey": "", "model": "nope/x"}, ("INVALID", "idempotencyKey")),
    ("editor", {"content": "hi", "model": "nope/x"}, ("UNKNOWN_MODEL", "model")),
    ("editor", {"content": "hi", "model": "openai/gpt-4o-mini"}, ("PROVIDER_UNAVAILABLE", "model")),
    # A kept model and a context naming a space the editor is no member of: the model.
    ("editor", {"content": "hi", "model": "lab/my-model", "context": {"spaceId": "otherSpace"}}, ("FORBIDDEN", "model")),
    ("editor", {"content": "hi", "context": {"spaceId": "otherSpace"}}, ("NOT_FOUND", "context.spaceId")),
    # Someone else's session they read: the session, whatever the rest.
    ("viewer", {"content": "", "idempotencyKey": "", "model": "lab/my-model"}, ("FORBIDDEN", "sessionId")),
    # A read-only token: its scope, first of all.
    ("read_only", {"content": "", "idempotencyKey": "", "model": "nope/x"}, ("FORBIDDEN", None)),
]  # fmt: skip


async def setup(world: World) -> dict[str, str]:
    async def create(actor: str, query: str, **variables: Any) -> Any:
        return await world.data(actor, query, **variables)

    space = (
        await create("owner", 'mutation { createSpace(input: {name: "S"}) { space { id } } }')
    )["createSpace"]["space"]["id"]
    other = (
        await create("owner", 'mutation { createSpace(input: {name: "O"}) { space { id } } }')
    )["createSpace"]["space"]["id"]
    for user, role in (("editor", "EDITOR"), ("viewer", "VIEWER")):
        await create(
            "owner",
            f'mutation($s: ID!) {{ addSpaceMember(input: {{spaceId: $s, userName: "{user}", '
            f"role: {role}}}) {{ errors {{ code }} }} }}",
            s=space,
        )
    new = "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }"
    shared = (await create("owner", new, s=space))["createSession"]["session"]["id"]
    await create(
        "owner",
        "mutation($id: ID!) { updateSession(input: {id: $id, visibility: SPACE}) "
        "{ errors { code } } }",
        id=shared,
    )
    mine = (await create("editor", new, s=space))["createSession"]["session"]["id"]
    kept = await create(
        "owner",
        'mutation { setModelAccess(input: {model: "lab/my-model", adminsOnly: true}) '
        "{ errors { code } } }",
    )
    assert kept["setModelAccess"] == {"errors": []}
    return {"shared": shared, "mine": mine, "otherSpace": other}


def with_ids(fields: dict[str, Any], ids: dict[str, str], session: str) -> dict[str, Any]:
    given = dict(fields)
    if "context" in given:
        given["context"] = {k: ids[v] for k, v in given["context"].items()}
    return {"sessionId": session, **given}


async def send_code(world: World, actor: str, input: dict[str, Any]) -> tuple[str, str | None]:
    body = (await world.post(actor, SEND, input=input)).json()
    payload = body["data"]["sendMessage"]
    assert payload["userTurn"] is None, body
    [error] = payload["errors"]
    return error["code"], error["field"]


async def stream_code(world: World, actor: str, input: dict[str, Any]) -> tuple[str, str | None]:
    response = await world.http.post(
        "/graphql",
        json={"query": STREAM, "variables": {"input": input}},
        headers={**world.headers[actor], "Accept": "text/event-stream"},
    )
    events = [d["data"]["messageStream"] for kind, d in sse_events(response.text) if kind == "next"]
    [failed] = events  # refused before anything was written: no StreamUserTurn
    assert failed["__typename"] == "StreamFailed", events
    [error] = failed["errors"]
    return error["code"], error["field"]


async def test_send_and_stream_refuse_the_same_input_with_the_same_error(
    settings: Settings,
) -> None:
    async with accounts_app(settings) as world:
        ids = await setup(world)
        answers = []
        for actor, fields, _ in CASES:
            session = ids["mine"] if actor == "editor" else ids["shared"]
            input = with_ids(fields, ids, session)
            answers.append(
                (await send_code(world, actor, input), await stream_code(world, actor, input))
            )
        assert answers == [(expected, expected) for _, _, expected in CASES]
        turns = "query($s: ID!) { session(id: $s) { lastSequenceNumber } }"
        for actor, session in (("owner", ids["shared"]), ("editor", ids["mine"])):
            assert await world.data(actor, turns, s=session) == {
                "session": {"lastSequenceNumber": 0}
            }


async def test_regenerate_and_edit_refuse_a_model_kept_for_admins_and_write_nothing(
    settings: Settings,
) -> None:
    async with accounts_app(settings) as world:
        ids = await setup(world)
        sent = await world.data(
            "editor",
            "mutation($input: SendMessageInput!) { sendMessage(input: $input) "
            "{ userTurn { id } assistantTurn { id } errors { code } } }",
            input={"sessionId": ids["mine"], "content": "hi"},
        )
        assert sent["sendMessage"]["errors"] == []
        question = sent["sendMessage"]["userTurn"]["id"]
        reply = sent["sendMessage"]["assistantTurn"]["id"]
        regenerated = await world.data(
            "editor",
            'mutation($t: ID!) { regenerate(input: {turnId: $t, model: "lab/my-model"}) '
            "{ session { id } errors { code field } } }",
            t=reply,
        )
        edited = await world.data(
            "editor",
            'mutation($t: ID!) { editAndResend(input: {turnId: $t, content: "hello", '
            'model: "lab/my-model"}) { session { id } errors { code field } } }',
            t=question,
        )
        refused = {"session": None, "errors": [{"code": "FORBIDDEN", "field": "model"}]}
        assert (regenerated["regenerate"], edited["editAndResend"]) == (refused, refused)
        # No branch was made, and the session still holds its two turns.
        assert await world.data(
            "editor",
            "query($s: ID!) { session(id: $s) { lastSequenceNumber branchCount } }",
            s=ids["mine"],
        ) == {"session": {"lastSequenceNumber": 2, "branchCount": 1}}
