"""start_session and send_message: an agent that wants Smriti to hold its own
conversation with a model. The use cases of GraphQL's createSession and
sendMessage, with the same actor: the same checks in the same order (a model
kept for admins is refused before anything is written), the same context
sent to the model, and a failed provider call keeps the user's turn, as
GraphQL's payload does (the tool error carries it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.accounts import Actor
from ..domain.types import MemoryScope, Session, Turn
from ..domain.validation import IDEMPOTENCY_KEY_MAX_CHARS
from ..errors import InputError
from ..services import chat, sessions
from ..services.base import Services
from .tools import _ID, Result, Tool, ToolFailure, _id, _no_others, _object, _text


def _optional_text(args: Mapping[str, Any], name: str) -> str | None:
    return None if args.get(name) is None else _text(args, name)


def _scope(args: Mapping[str, Any]) -> MemoryScope | None:
    value = args.get("memoryScope")
    if value is None:
        return None
    if value not in MemoryScope.__members__:
        scopes = " or ".join(MemoryScope.__members__)
        raise InputError(f"`memoryScope` is {scopes}.", field="memoryScope")
    return MemoryScope[value]


def session_json(session: Session) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "spaceId": session.space_id,
        "branchName": session.branch_name,
        "title": session.title,
        "model": f"{session.active_provider}/{session.active_model}",
        "memoryScope": session.memory_scope.value,
    }


def turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.id,
        "sessionId": turn.session_id,
        "sequenceNumber": turn.sequence_number,
        "role": turn.role.value,
        "content": turn.content,
        "model": f"{turn.provider}/{turn.model}" if turn.provider else turn.model,
        "finishReason": turn.finish_reason.value if turn.finish_reason else None,
        "createdAt": turn.created_at.isoformat(),
    }


async def start_session(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"spaceId", "title", "model", "memoryScope"})
    session = await sessions.create_session(
        services,
        actor,
        title=_optional_text(args, "title"),
        space_id=_id(args, "spaceId", required=False),
        memory_scope=_scope(args),
        model=_optional_text(args, "model"),
    )
    where = f"space {session.space_id}" if session.space_id else "no space"
    answer = session_json(session)
    return answer, f"Session {session.id} in {where}, with {answer['model']}."


async def send_message(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"sessionId", "content", "model", "idempotencyKey"})
    session_id = _id(args, "sessionId")
    assert session_id is not None
    message = chat.Message(
        session_id=session_id,
        content=_text(args, "content"),
        model=_optional_text(args, "model"),
        idempotency_key=_optional_text(args, "idempotencyKey"),
    )
    exchange = await chat.send_message(services, actor, message)
    user_turn = turn_json(exchange.user_turn)
    if exchange.error is not None:
        retry = exchange.error.retry_after
        raise ToolFailure(exchange.error, {"userTurn": user_turn, "retryAfterSeconds": retry})
    reply = exchange.assistant_turn
    answer = {
        "userTurn": user_turn,
        "reply": turn_json(reply) if reply else None,
        "finishReason": reply.finish_reason.value if reply and reply.finish_reason else None,
    }
    return answer, reply.content if reply else "No reply."


_TEXT = {"type": "string"}
_NULLABLE = {"type": ["string", "null"]}
_TURN = {
    "type": "object",
    "properties": {
        "id": _ID,
        "sessionId": _ID,
        "sequenceNumber": _ID,
        "role": {"enum": ["USER", "ASSISTANT", "SYSTEM"]},
        "content": _TEXT,
        "model": _NULLABLE,
        "finishReason": _NULLABLE,
        "createdAt": {"type": "string", "format": "date-time"},
    },
    "required": ["id", "sessionId", "sequenceNumber", "role", "content", "createdAt"],
}

CONVERSATION_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="start_session",
        title="Start a session",
        description="Start a conversation that Smriti holds with a model, optionally in a "
        "space (it then continues from the head of the space's main branch, and you can "
        'save checkpoints into it). `model` is "provider/model" (default: yours); '
        "`memoryScope` is how many checkpoints the model sees (LATEST_1 or LATEST_3).",
        input_schema=_object(
            {
                "spaceId": _ID,
                "title": _TEXT,
                "model": {**_TEXT, "description": '"provider/model".'},
                "memoryScope": {"enum": list(MemoryScope.__members__)},
            },
            [],
        ),
        output_schema=_object(
            {
                "sessionId": _ID,
                "spaceId": {"type": ["integer", "null"]},
                "branchName": _TEXT,
                "title": _TEXT,
                "model": _TEXT,
                "memoryScope": {"enum": list(MemoryScope.__members__)},
            },
            ["sessionId", "spaceId", "branchName", "title", "model", "memoryScope"],
        ),
        run=start_session,
        writes=True,
    ),
    Tool(
        name="send_message",
        title="Send a message",
        description="Send a message in a session: Smriti saves it, sends it to the model "
        "with the session's context (its checkpoints and recent turns) and saves the reply. "
        "finishReason says why the reply ended (STOP: it finished; LENGTH: the token limit "
        "cut it). If the model call fails, your message is kept: send it again with the "
        "same `idempotencyKey` to retry without a second copy.",
        input_schema=_object(
            {
                "sessionId": _ID,
                "content": {**_TEXT, "minLength": 1},
                "model": {**_TEXT, "description": '"provider/model" (default: the session\'s).'},
                "idempotencyKey": {**_TEXT, "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_CHARS},
            },
            ["sessionId", "content"],
        ),
        output_schema=_object(
            {
                "userTurn": _TURN,
                "reply": {**_TURN, "type": ["object", "null"]},
                "finishReason": _NULLABLE,
            },
            ["userTurn", "reply", "finishReason"],
        ),
        run=send_message,
        writes=True,
    ),
)
