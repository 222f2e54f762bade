"""show_session and update_session_settings: a session as an agent reads it
(its settings, where it was branched from, its alternatives, its last turns
with the ids the branch tools take), and its instructions and parameters set
as GraphQL's updateSession sets them — the same use case, so a value out of
range is OUT_OF_RANGE naming the field as GraphQL does (`settings.topP`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..domain import chat_settings
from ..domain.accounts import Actor
from ..domain.chat_settings import INSTRUCTIONS_MAX_CHARS, STOP_MAX_CHARS, STOP_MAX_ITEMS
from ..domain.pages import PageRequest
from ..domain.types import ChatSettings
from ..errors import NotFound, SmritiError
from ..services import branching, reading, sessions
from ..services.base import Services
from . import shapes
from .schema import Answer, Arguments, Count, Id, advertised, says
from .shapes import BranchedSession, branched_json, settings_json, turn_json
from .tool import Result, tool


class SettingsInput(Arguments):
    """GraphQL's ChatSettingsInput, each field of the type it declares; a field
    left out or null is not set. The ranges are the use case's to check (its
    words name the range and the value)."""

    instructions: Annotated[
        str | None,
        advertised(
            maxLength=INSTRUCTIONS_MAX_CHARS, description="Sent first in the system message."
        ),
        says("a string"),
    ] = None
    temperature: Annotated[
        float | None,
        Field(allow_inf_nan=False),
        advertised(minimum=0, maximum=chat_settings.TEMPERATURE_MAX),
        says("a number", finite_number="a finite number"),
    ] = None
    top_p: Annotated[
        float | None,
        Field(allow_inf_nan=False),
        advertised(exclusiveMinimum=0, maximum=1),
        says("a number", finite_number="a finite number"),
    ] = None
    max_output_tokens: Annotated[
        int | None,
        advertised(minimum=1, description="At most the model's output limit."),
        says("a whole number"),
    ] = None
    stop: Annotated[
        list[Annotated[str, advertised(maxLength=STOP_MAX_CHARS)]] | None,
        advertised(maxItems=STOP_MAX_ITEMS),
        says("a list of strings"),
    ] = None

    def domain(self) -> ChatSettings:
        return ChatSettings(
            instructions=self.instructions,
            temperature=self.temperature,
            top_p=self.top_p,
            max_output_tokens=self.max_output_tokens,
            stop=tuple(self.stop) if self.stop is not None else None,
        )


class UpdateSessionSettings(Arguments):
    session_id: Id
    settings: Annotated[SettingsInput, says("an object")]


@tool(
    "update_session_settings",
    title="Set a session's instructions and parameters",
    description="Replace a session's own instructions (a system prompt of yours) and "
    "model parameters whole: a field left out or null is not set (the session then "
    "takes its space's default), `{}` clears them all. A value out of range is refused "
    "(OUT_OF_RANGE, naming the field); maxOutputTokens is checked against the session's "
    "model. Your sessions only.",
    arguments=UpdateSessionSettings,
    answer=BranchedSession,
    writes=True,
)
async def update_session_settings(
    services: Services, actor: Actor, args: UpdateSessionSettings
) -> Result:
    try:
        updated = await sessions.update_session(
            services,
            actor,
            args.session_id,
            title=None,
            memory_scope=None,
            model=None,
            settings=args.settings.domain(),
        )
    except SmritiError as exc:
        # updateSession names its session `id`; this tool's argument is `sessionId`.
        if exc.field == "id":
            exc.field = "sessionId"
        raise
    answer = branched_json(updated)
    shown = {k: v for k, v in answer["settings"].items() if v is not None}
    return answer, f"Session {updated.id} settings: {shown or 'none of its own'}."


class ShowSession(Arguments):
    session_id: Id
    last_turns: Count = 20


class Alternative(Answer):
    sequence_number: shapes.Id
    session_ids: list[shapes.Id]
    index: shapes.Count


class SessionShown(Answer):
    session: BranchedSession
    effective_settings: shapes.Settings
    alternatives: list[Alternative]
    turns: list[shapes.TurnJson]
    has_earlier: bool


@tool(
    "show_session",
    title="Show a session",
    description="A session you can read: its model, its own settings and what the next "
    "message is sent with (effectiveSettings: its own, else its space's defaults), "
    "where it was branched from (branchedFrom: the session and the last of its turns it "
    "holds a copy of; null if it is no branch), the positions where its family has "
    "alternatives (regenerated replies, edited messages: the sessions, oldest first, "
    "and which one this is), and its last turns with their ids for regenerate, "
    "edit_and_resend, branch_session and continue_reply.",
    arguments=ShowSession,
    answer=SessionShown,
)
async def show_session(services: Services, actor: Actor, args: ShowSession) -> Result:
    session_id = args.session_id
    found = (await reading.sessions_by_id(actor, [session_id])).get(session_id)
    if found is None:
        raise NotFound("No such session.", field="sessionId")
    defaults = None
    if found.space_id is not None:
        space = (await reading.spaces_by_id(actor, [found.space_id])).get(found.space_id)
        defaults = space.settings if space is not None else None
    page = await reading.session_turns(actor, found, PageRequest(last=args.last_turns))
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


SESSION_TOOLS = (show_session, update_session_settings)
