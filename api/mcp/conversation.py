"""start_session and send_message: an agent that wants Smriti to hold its own
conversation with a model. The use cases of GraphQL's createSession and
sendMessage, with the same actor and the same arguments: the same checks in
the same order (a model kept for admins is refused before anything is
written), the same context sent to the model (the session's, or an explicit
`context` as sendMessage's), and a failed provider call keeps the user's
turn, as GraphQL's payload does (the tool error carries it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from ..domain.accounts import Actor
from ..domain.context import ContextOverride
from ..domain.types import MemoryScope
from ..domain.validation import IDEMPOTENCY_KEY_MAX_CHARS
from ..services import chat, sessions
from ..services.base import Services
from .schema import Arguments, Id, Text, advertised, choice, says
from .shapes import Exchange, SessionJson, exchange_json, session_json, turn_json
from .tool import Result, ToolFailure, tool

if TYPE_CHECKING:  # what mypy sees of the type built from MemoryScope
    Scope = str
else:
    Scope = choice(MemoryScope.__members__, " or ".join(MemoryScope.__members__))
Model = Annotated[Text | None, Field(description='"provider/model" (default: the session\'s).')]
IdempotencyKey = Annotated[
    Text | None, advertised(minLength=1, maxLength=IDEMPOTENCY_KEY_MAX_CHARS)
]


class StartSession(Arguments):
    space_id: Id | None = None
    title: Text | None = None
    model: Annotated[Text | None, Field(description='"provider/model".')] = None
    memory_scope: Scope | None = None


@tool(
    "start_session",
    title="Start a session",
    description="Start a conversation that Smriti holds with a model, optionally in a "
    "space (it then continues from the head of the space's main branch, and you can "
    'save checkpoints into it). `model` is "provider/model" (default: yours); '
    "`memoryScope` is how many checkpoints the model sees (LATEST_1 or LATEST_3).",
    arguments=StartSession,
    answer=SessionJson,
    writes=True,
)
async def start_session(services: Services, actor: Actor, args: StartSession) -> Result:
    session = await sessions.create_session(
        services,
        actor,
        title=args.title,
        space_id=args.space_id,
        memory_scope=MemoryScope[args.memory_scope] if args.memory_scope else None,
        model=args.model,
    )
    where = f"space {session.space_id}" if session.space_id else "no space"
    answer = session_json(session)
    return answer, f"Session {session.id} in {where}, with {answer['model']}."


class Context(Arguments):
    """GraphQL's ContextInput: an explicit context instead of the session's own."""

    space_id: Annotated[
        Id | None, Field(description="Use this space's head (on the session's branch).")
    ] = None
    checkpoint_id: Annotated[Id | None, Field(description="Use this checkpoint as if mounted.")] = (
        None
    )
    base_sequence: Annotated[
        int | None,
        Field(
            description="With checkpointId: only turns after this sequence number "
            "(default: the session's current last sequence number)."
        ),
        says("a whole number"),
    ] = None
    memory_scope: Annotated[
        Scope | None,
        Field(description="How many checkpoints (default: the session's scope)."),
    ] = None

    def override(self) -> ContextOverride:
        return ContextOverride(
            space_id=self.space_id,
            checkpoint_id=self.checkpoint_id,
            base_sequence=self.base_sequence,
            memory_scope=MemoryScope[self.memory_scope] if self.memory_scope else None,
        )


class SendMessage(Arguments):
    session_id: Id
    content: Annotated[Text, advertised(minLength=1)]
    model: Model = None
    idempotency_key: IdempotencyKey = None
    context: Annotated[Context | None, says("an object")] = None


@tool(
    "send_message",
    title="Send a message",
    description="Send a message in a session: Smriti saves it, sends it to the model "
    "with the session's context (its checkpoints and recent turns; or `context`: a "
    "space's head or a checkpoint of your choosing) and saves the reply. "
    "finishReason says why the reply ended (STOP: it finished; LENGTH: the token limit "
    "cut it). If the model call fails, your message is kept: send it again with the "
    "same `idempotencyKey` to retry without a second copy.",
    arguments=SendMessage,
    answer=Exchange,
    writes=True,
)
async def send_message(services: Services, actor: Actor, args: SendMessage) -> Result:
    message = chat.Message(
        session_id=args.session_id,
        content=args.content,
        model=args.model,
        idempotency_key=args.idempotency_key,
        override=args.context.override() if args.context else None,
    )
    exchange = await chat.send_message(services, actor, message)
    user_turn = turn_json(exchange.user_turn)
    if exchange.error is not None:
        retry = exchange.error.retry_after
        raise ToolFailure(exchange.error, {"userTurn": user_turn, "retryAfterSeconds": retry})
    reply = exchange.assistant_turn
    return exchange_json(user_turn, reply), reply.content if reply else "No reply."


CONVERSATION_TOOLS = (start_session, send_message)
