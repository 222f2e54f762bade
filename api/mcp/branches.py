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

from typing import Annotated

from pydantic import Field

from ..domain.accounts import Actor
from ..domain.validation import validate_title
from ..services import branching, continuation, sessions
from ..services.base import Services
from .conversation import IdempotencyKey, Model
from .schema import Answer, Arguments, Id, Text, advertised
from .shapes import BranchedSession, Finish, TurnJson, branched_json, exchange_json, turn_json
from .tool import Result, ToolFailure, tool

TurnId = Annotated[Id, Field(description="A turn's id (send_message's and show_session's `id`).")]


class BranchSession(Arguments):
    at_turn_id: TurnId
    title: Text | None = None


@tool(
    "branch_session",
    title="Branch a conversation at a turn",
    description="A new session holding a copy of a session's turns up to and including "
    "`atTurnId`, to go on differently from there (the old line is kept). Its "
    "`branchedFrom` says where it left. (To branch a space's lineage from a checkpoint, "
    "use fork.)",
    arguments=BranchSession,
    answer=BranchedSession,
    writes=True,
)
async def branch_session(services: Services, actor: Actor, args: BranchSession) -> Result:
    created = await sessions.fork_either(
        services,
        actor,
        checkpoint_id=None,
        at_turn_id=args.at_turn_id,
        branch_name=None,
        title=validate_title(args.title) if args.title else None,
    )
    answer = branched_json(created)
    point = created.branched_from
    after = point.after_sequence if point else created.last_sequence_number
    return answer, f"Session {created.id}: a branch holding turns 1..{after}."


class Branched(Answer):
    """The new branch, the message sent there and its reply (as send_message's)."""

    session: BranchedSession
    user_turn: TurnJson
    reply: TurnJson | None
    finish_reason: Finish | None


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
    answer = {"session": session, **exchange_json(user_turn, reply)}
    return answer, reply.content if reply else "No reply."


class Regenerate(Arguments):
    turn_id: TurnId
    model: Model = None


@tool(
    "regenerate",
    title="Regenerate a reply",
    description="Answer a reply's question again: a new branch holding the turns before "
    "the reply (the old line is kept), and a new reply in it. If the model call fails, "
    "the branch and its copy of the question are kept (the error carries them): "
    "regenerate that question's reply in the branch later, or send again.",
    arguments=Regenerate,
    answer=Branched,
    writes=True,
)
async def regenerate(services: Services, actor: Actor, args: Regenerate) -> Result:
    return _branched(await branching.regenerate(services, actor, args.turn_id, model=args.model))


class EditAndResend(Arguments):
    turn_id: TurnId
    content: Annotated[Text, advertised(minLength=1)]
    model: Model = None
    idempotency_key: IdempotencyKey = None


@tool(
    "edit_and_resend",
    title="Edit a message and send it again",
    description="Replace a message you sent: a new branch holding the turns before it "
    "(the old line is kept), the new content sent there as send_message sends it, and "
    "its reply. If the model call fails the branch and the new message are kept: call "
    "again with the same `idempotencyKey` to ask for the reply without a second branch.",
    arguments=EditAndResend,
    answer=Branched,
    writes=True,
)
async def edit_and_resend(services: Services, actor: Actor, args: EditAndResend) -> Result:
    edit = branching.Edit(
        turn_id=args.turn_id,
        content=args.content,
        model=args.model,
        idempotency_key=args.idempotency_key,
    )
    return _branched(await branching.edit_and_resend(services, actor, edit))


class ContinueReply(Arguments):
    turn_id: TurnId
    model: Annotated[
        Text | None, Field(description='"provider/model" (default: the reply\'s own).')
    ] = None


class Continued(Answer):
    continued: TurnJson
    continuation: TurnJson
    finish_reason: Finish | None


@tool(
    "continue_reply",
    title="Continue a cut-off reply",
    description="Ask the model to go on from a reply cut off before its end "
    "(finishReason LENGTH or a lost connection; the session's last reply). What it "
    "writes is saved as a new reply right after it; a reply continued already answers "
    "its continuation again without a model call. A failed model call writes nothing.",
    arguments=ContinueReply,
    answer=Continued,
    writes=True,
)
async def continue_reply(services: Services, actor: Actor, args: ContinueReply) -> Result:
    request = continuation.Continue(turn_id=args.turn_id, model=args.model)
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


BRANCH_TOOLS = (branch_session, regenerate, edit_and_resend, continue_reply)
