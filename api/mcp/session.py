"""show_session and update_session_settings: a session as an agent reads it
(its settings, where it was branched from, its alternatives, its last turns
with the ids the branch tools take), and its instructions and parameters set
as GraphQL's updateSession sets them — the same use case, so a value out of
range is OUT_OF_RANGE naming the field as GraphQL does (`settings.topP`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..domain import chat_settings
from ..domain.accounts import Actor
from ..domain.chat_settings import INSTRUCTIONS_MAX_CHARS, STOP_MAX_CHARS, STOP_MAX_ITEMS
from ..domain.pages import PageRequest
from ..domain.types import ChatSettings, MemoryScope, Session
from ..errors import InputError, NotFound, SmritiError
from ..services import branching, reading, sessions
from ..services.base import Services
from .conversation import _TEXT, _TURN, session_json, turn_json
from .tools import _ID, MAX_PAGE, Result, Tool, _count, _id, _no_others, _object

# GraphQL's ChatSettings fields, in its order: the domain attribute of each.
_SETTINGS = {
    "instructions": "instructions",
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_output_tokens",
    "stop": "stop",
}


def settings_json(settings: ChatSettings) -> dict[str, Any]:
    return {
        name: list(value) if isinstance(value := getattr(settings, attr), tuple) else value
        for name, attr in _SETTINGS.items()
    }


def branched_json(session: Session) -> dict[str, Any]:
    """A session with its own settings and where it left its origin (null:
    not a conversation branch)."""
    point = session.branched_from
    return {
        **session_json(session),
        "settings": settings_json(session.settings),
        "branchedFrom": {"sessionId": point.session_id, "afterSequence": point.after_sequence}
        if point
        else None,
    }


def _settings(args: Mapping[str, Any]) -> ChatSettings:
    """`settings` as given, each field of the type GraphQL's ChatSettingsInput
    declares; the ranges are the use case's to check."""
    given = args.get("settings")
    if not isinstance(given, dict):
        raise InputError("`settings` is an object.", field="settings")
    _no_others({f"settings.{k}": v for k, v in given.items()}, {f"settings.{k}" for k in _SETTINGS})
    values: dict[str, Any] = {}
    for name, attr in _SETTINGS.items():
        value = given.get(name)
        field = f"settings.{name}"
        if value is None:
            continue
        if name == "instructions" and not isinstance(value, str):
            raise InputError(f"`{field}` is a string.", field=field)
        if name in ("temperature", "topP"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"`{field}` is a number.", field=field)
            if not math.isfinite(value):
                raise InputError(f"`{field}` is a finite number.", field=field)
            value = float(value)
        if name == "maxOutputTokens" and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(f"`{field}` is a whole number.", field=field)
        if name == "stop":
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise InputError(f"`{field}` is a list of strings.", field=field)
            value = tuple(value)
        values[attr] = value
    return ChatSettings(**values)


async def update_session_settings(
    services: Services, actor: Actor, args: Mapping[str, Any]
) -> Result:
    _no_others(args, {"sessionId", "settings"})
    session_id = _id(args, "sessionId")
    assert session_id is not None
    settings = _settings(args)
    try:
        updated = await sessions.update_session(
            services,
            actor,
            session_id,
            title=None,
            memory_scope=None,
            model=None,
            settings=settings,
        )
    except SmritiError as exc:
        # updateSession names its session `id`; this tool's argument is `sessionId`.
        if exc.field == "id":
            exc.field = "sessionId"
        raise
    answer = branched_json(updated)
    shown = {k: v for k, v in answer["settings"].items() if v is not None}
    return answer, f"Session {updated.id} settings: {shown or 'none of its own'}."


async def show_session(services: Services, actor: Actor, args: Mapping[str, Any]) -> Result:
    _no_others(args, {"sessionId", "lastTurns"})
    session_id = _id(args, "sessionId")
    assert session_id is not None
    found = (await reading.sessions_by_id(actor, [session_id])).get(session_id)
    if found is None:
        raise NotFound("No such session.", field="sessionId")
    defaults = None
    if found.space_id is not None:
        space = (await reading.spaces_by_id(actor, [found.space_id])).get(found.space_id)
        defaults = space.settings if space is not None else None
    page = await reading.session_turns(
        actor, found, PageRequest(last=_count(args, "lastTurns", 20))
    )
    alternatives = await branching.alternatives(actor, found, None)
    answer = {
        "session": branched_json(found),
        "effectiveSettings": settings_json(chat_settings.effective(found.settings, defaults)),
        "alternatives": [
            {"sequenceNumber": a.position, "sessionIds": list(a.sessions), "index": a.index}
            for a in alternatives
        ],
        "turns": [turn_json(turn) for turn in page.items],
        "hasEarlier": page.has_previous,
    }
    lines = [f"# {found.title} (session {found.id})"]
    if found.branched_from:
        point = found.branched_from
        lines.append(f"branched from session {point.session_id} after turn {point.after_sequence}")
    lines += [
        f"alternatives at turn {a.position}: sessions {', '.join(map(str, a.sessions))}"
        for a in alternatives
    ]
    lines += [
        f"[{t.sequence_number}] {t.role.value} (turn {t.id}): {t.content}" for t in page.items
    ]
    return answer, "\n".join(lines)


_NUMBER = {"type": ["number", "null"]}
SETTINGS = {
    "type": "object",
    "properties": {
        "instructions": {
            "type": ["string", "null"],
            "maxLength": INSTRUCTIONS_MAX_CHARS,
            "description": "Sent first in the system message.",
        },
        "temperature": {**_NUMBER, "minimum": 0, "maximum": chat_settings.TEMPERATURE_MAX},
        "topP": {**_NUMBER, "exclusiveMinimum": 0, "maximum": 1},
        "maxOutputTokens": {
            "type": ["integer", "null"],
            "minimum": 1,
            "description": "At most the model's output limit.",
        },
        "stop": {
            "type": ["array", "null"],
            "items": {"type": "string", "maxLength": STOP_MAX_CHARS},
            "maxItems": STOP_MAX_ITEMS,
        },
    },
    "additionalProperties": False,
}
_SETTINGS_OUT = {**SETTINGS, "required": list(_SETTINGS)}
SESSION = _object(
    {
        "sessionId": _ID,
        "spaceId": {"type": ["integer", "null"]},
        "branchName": _TEXT,
        "title": _TEXT,
        "model": _TEXT,
        "memoryScope": {"enum": list(MemoryScope.__members__)},
        "settings": _SETTINGS_OUT,
        "branchedFrom": {
            "type": ["object", "null"],
            "properties": {"sessionId": _ID, "afterSequence": {"type": "integer", "minimum": 0}},
            "required": ["sessionId", "afterSequence"],
        },
    },
    [
        "sessionId",
        "spaceId",
        "branchName",
        "title",
        "model",
        "memoryScope",
        "settings",
        "branchedFrom",
    ],
)

SESSION_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="show_session",
        title="Show a session",
        description="A session you can read: its model, its own settings and what the next "
        "message is sent with (effectiveSettings: its own, else its space's defaults), "
        "where it was branched from (branchedFrom: the session and the last of its turns it "
        "holds a copy of; null if it is no branch), the positions where its family has "
        "alternatives (regenerated replies, edited messages: the sessions, oldest first, "
        "and which one this is), and its last turns with their ids for regenerate, "
        "edit_and_resend, branch_session and continue_reply.",
        input_schema=_object(
            {
                "sessionId": _ID,
                "lastTurns": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 20},
            },
            ["sessionId"],
        ),
        output_schema=_object(
            {
                "session": SESSION,
                "effectiveSettings": _SETTINGS_OUT,
                "alternatives": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sequenceNumber": _ID,
                            "sessionIds": {"type": "array", "items": _ID},
                            "index": {"type": "integer", "minimum": 0},
                        },
                        "required": ["sequenceNumber", "sessionIds", "index"],
                    },
                },
                "turns": {"type": "array", "items": _TURN},
                "hasEarlier": {"type": "boolean"},
            },
            ["session", "effectiveSettings", "alternatives", "turns", "hasEarlier"],
        ),
        run=show_session,
    ),
    Tool(
        name="update_session_settings",
        title="Set a session's instructions and parameters",
        description="Replace a session's own instructions (a system prompt of yours) and "
        "model parameters whole: a field left out or null is not set (the session then "
        "takes its space's default), `{}` clears them all. A value out of range is refused "
        "(OUT_OF_RANGE, naming the field); maxOutputTokens is checked against the session's "
        "model. Your sessions only.",
        input_schema=_object({"sessionId": _ID, "settings": SETTINGS}, ["sessionId", "settings"]),
        output_schema=SESSION,
        run=update_session_settings,
        writes=True,
    ),
)
