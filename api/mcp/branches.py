"""Conversation branches for an agent: branch_session, regenerate,
edit_and_resend and continue_reply — GraphQL's forkSession (atTurnId),
regenerate, editAndResend and continueReply, through the same use cases
(api/services/branching.py, continuation.py) with the same actor, so the same
checks in the same order: a read-only token refused first, a model kept for
admins refused before anything is written, a turn of another's session not
found. Turn ids are those send_message and show_session answer.

A failed provider call keeps what GraphQL's payload keeps: regenerate's and
edit_and_resend's branch and its user turn (the tool error carries them, as
send_message's carries its user turn); continue_reply writes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.accounts import Actor
from ..domain.validation import IDEMPOTENCY_KEY_MAX_CHARS, validate_title
from ..services import branching, continuation, sessions
from ..services.base import Services
from .conversation import _TEXT, _TURN, turn_json
from .session import SESSION, branched_json
from .tools import _ID, Result, Tool, ToolFailure, _id, _no_others, _object, _text


def _optional_text(args: Mapping[str, Any], name: str) -> str | None:
    return None if args.get(name) is None else _text(args, name)


def _turn_id(args: Mapping[str, Any]) -> int:
    found = _id(args, "turnId")
    assert found is not None
    return found


async def branch_session(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"atTurnId", "title"})
    title = _optional_text(args, "title")
    created = await sessions.fork_either(
        services,
        actor,
        checkpoint_id=None,
        at_turn_id=_id(args, "atTurnId"),
        branch_name=None,
        title=validate_title(title) if title else None,
    )
    answer = branched_json(created)
    point = created.branched_from
    after = point.after_sequence if point else created.last_sequence_number
    return answer, f"Session {created.id}: a branch holding turns 1..{after}."


def _branched(done: branching.Branched) -> Result:
    """regenerate's and edit_and_resend's answer; a provider failure as a tool
    error carrying the branch and its user turn, which are kept."""
    exchange = done.exchange
    session = branched_json(done.session)
    user_turn = turn_json(exchange.user_turn)
    if exchange.error is not None:
        kept = {
            "session": session,
            "userTurn": user_turn,
            "retryAfterSeconds": exchange.error.retry_after,
        }
        raise ToolFailure(exchange.error, kept)
    reply = exchange.assistant_turn
    answer = {
        "session": session,
        "userTurn": user_turn,
        "reply": turn_json(reply) if reply else None,
        "finishReason": reply.finish_reason.value if reply and reply.finish_reason else None,
    }
    return answer, reply.content if reply else "No reply."


async def regenerate(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"turnId", "model"})
    done = await branching.regenerate(
        services, actor, _turn_id(args), model=_optional_text(args, "model")
    )
    return _branched(done)


async def edit_and_resend(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"turnId", "content", "model", "idempotencyKey"})
    edit = branching.Edit(
        turn_id=_turn_id(args),
        content=_text(args, "content"),
        model=_optional_text(args, "model"),
        idempotency_key=_optional_text(args, "idempotencyKey"),
    )
    return _branched(await branching.edit_and_resend(services, actor, edit))


async def continue_reply(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"turnId", "model"})
    request = continuation.Continue(turn_id=_turn_id(args), model=_optional_text(args, "model"))
    done = await continuation.continue_reply(services, actor, request)
    if done.error is not None:  # nothing was written; when to try again, as GraphQL says
        raise ToolFailure(done.error, {"retryAfterSeconds": done.error.retry_after})
    went_on = done.continuation
    assert went_on is not None
    answer = {
        "continued": turn_json(done.cut_off),
        "continuation": turn_json(went_on),
        "finishReason": went_on.finish_reason.value if went_on.finish_reason else None,
    }
    return answer, went_on.content


_MODEL = {**_TEXT, "description": '"provider/model" (default: the session\'s).'}
_TURN_ID = {**_ID, "description": "A turn's id (send_message's and show_session's `id`)."}
_BRANCHED = _object(
    {
        "session": SESSION,
        "userTurn": _TURN,
        "reply": {**_TURN, "type": ["object", "null"]},
        "finishReason": {"type": ["string", "null"]},
    },
    ["session", "userTurn", "reply", "finishReason"],
)

BRANCH_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="branch_session",
        title="Branch a conversation at a turn",
        description="A new session holding a copy of a session's turns up to and including "
        "`atTurnId`, to go on differently from there (the old line is kept). Its "
        "`branchedFrom` says where it left. (To branch a space's lineage from a checkpoint, "
        "use fork.)",
        input_schema=_object({"atTurnId": _TURN_ID, "title": _TEXT}, ["atTurnId"]),
        output_schema=SESSION,
        run=branch_session,
        writes=True,
    ),
    Tool(
        name="regenerate",
        title="Regenerate a reply",
        description="Answer a reply's question again: a new branch holding the turns before "
        "the reply (the old line is kept), and a new reply in it. If the model call fails, "
        "the branch and its copy of the question are kept (the error carries them): "
        "regenerate that question's reply in the branch later, or send again.",
        input_schema=_object({"turnId": _TURN_ID, "model": _MODEL}, ["turnId"]),
        output_schema=_BRANCHED,
        run=regenerate,
        writes=True,
    ),
    Tool(
        name="edit_and_resend",
        title="Edit a message and send it again",
        description="Replace a message you sent: a new branch holding the turns before it "
        "(the old line is kept), the new content sent there as send_message sends it, and "
        "its reply. If the model call fails the branch and the new message are kept: call "
        "again with the same `idempotencyKey` to ask for the reply without a second branch.",
        input_schema=_object(
            {
                "turnId": _TURN_ID,
                "content": {**_TEXT, "minLength": 1},
                "model": _MODEL,
                "idempotencyKey": {**_TEXT, "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_CHARS},
            },
            ["turnId", "content"],
        ),
        output_schema=_BRANCHED,
        run=edit_and_resend,
        writes=True,
    ),
    Tool(
        name="continue_reply",
        title="Continue a cut-off reply",
        description="Ask the model to go on from a reply cut off before its end "
        "(finishReason LENGTH or a lost connection; the session's last reply). What it "
        "writes is saved as a new reply right after it; a reply continued already answers "
        "its continuation again without a model call. A failed model call writes nothing.",
        input_schema=_object(
            {
                "turnId": _TURN_ID,
                "model": {**_TEXT, "description": '"provider/model" (default: the reply\'s own).'},
            },
            ["turnId"],
        ),
        output_schema=_object(
            {
                "continued": _TURN,
                "continuation": _TURN,
                "finishReason": {"type": ["string", "null"]},
            },
            ["continued", "continuation", "finishReason"],
        ),
        run=continue_reply,
        writes=True,
    ),
)
