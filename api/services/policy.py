"""What each operation needs of its actor: the one table of authorization.

Keyed by the GraphQL operation name (a Query, Mutation or Subscription field);
the command line names the operation it performs the same way (`smriti export`
is exportSpace / exportSession, `smriti import` importSpace, `smriti verify`
verifyLineage). Every use case in ``api.services`` asks ``allow`` for its rule
when it runs, before it reads anything, and applies the rest of the rule
through ``api.services.access`` (the reads that find the actor's role in a
space or the session's author). The authorization matrix test
(tests/accounts/test_authorization_matrix.py) holds this table to a
hand-written one, cell by cell, and fails for an operation of the schema
without a rule.

A rule says:

    on          what the operation acts on, which decides what an actor who
                may not see it gets: NOTHING (no object: the same answer for
                everyone), OWN (the actor's own things only), READABLE
                (everything the actor may read: theirs and what is shared
                with them), or one object named by id: SPACE, SESSION,
                TURN (by its session), CHECKPOINT, TOKEN, PRESET, NODE (any of
                them). An object the actor may not read is NOT_FOUND (null
                for a query), never FORBIDDEN.
    writes      it changes something (or spends a model call on the actor's
                behalf): a read-only token gets FORBIDDEN
    admin       only an admin (FORBIDDEN for anyone else)
    role        the role it needs on the space of its object (a member whose
                role is lower gets FORBIDDEN)
    author      only the session's author (a member who reads a shared
                session gets FORBIDDEN)
    calls_model a user's action that reaches a model (chat, drafts, merge
                suggestions, titles): every such call passes the model check
                (``api.services.access.check_model`` for a model the actor
                names, ``access.background_model`` for drafts, merge
                suggestions and titles)

What a role allows, and who reads what:

    a space       exists for its members only; VIEWER reads it, EDITOR also
                  writes its lineage and attaches sessions, OWNER also renames,
                  deletes and manages members (``SpaceRole.allows``)
    a session     readable by its author, and by the members of its space
                  (any role) when its visibility is SPACE; only its author
                  writes to it (``api.store.readable.readable_sessions`` is
                  the SQL of this rule, used by every read that shows one)
    a checkpoint  readable by the members of its space
    a model       kept for admins (``setModelAccess``): used by admins only, for
                  every call a user's action causes
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..domain.accounts import Actor
from ..domain.types import SpaceRole
from ..errors import Forbidden


class On(enum.Enum):
    NOTHING = "nothing"
    OWN = "own"
    READABLE = "readable"
    SPACE = "space"
    SESSION = "session"
    TURN = "turn"
    CHECKPOINT = "checkpoint"
    TOKEN = "token"
    PRESET = "preset"
    NODE = "node"


@dataclass(frozen=True)
class Rule:
    on: On
    writes: bool = False
    admin: bool = False
    role: SpaceRole | None = None
    author: bool = False
    calls_model: bool = False


_READ_SPACE = Rule(On.SPACE, role=SpaceRole.VIEWER)
_OWN_SESSION = Rule(On.SESSION, writes=True, author=True)

RULES: dict[str, Rule] = {
    # Queries
    "node": Rule(On.NODE),
    "spaces": Rule(On.READABLE),
    "sessions": Rule(On.OWN),
    "space": _READ_SPACE,
    "session": Rule(On.SESSION),
    "checkpoint": Rule(On.CHECKPOINT, role=SpaceRole.VIEWER),
    "checkpointByHash": _READ_SPACE,
    "providers": Rule(On.NOTHING),
    "contextPreview": Rule(On.SESSION),
    "compareCheckpoints": Rule(On.CHECKPOINT, role=SpaceRole.VIEWER),
    # With draftWithModel the background model writes the suggestion.
    "previewMerge": Rule(On.SPACE, role=SpaceRole.VIEWER, calls_model=True),
    "verifyLineage": _READ_SPACE,
    "exportSpace": _READ_SPACE,
    "exportSession": Rule(On.SESSION),
    "search": Rule(On.READABLE),
    "viewer": Rule(On.OWN),
    # Mutations
    "createSpace": Rule(On.OWN, writes=True),
    "updateSpace": Rule(On.SPACE, writes=True, role=SpaceRole.OWNER),
    "deleteSpace": Rule(On.SPACE, writes=True, role=SpaceRole.OWNER),
    # The space it is created in, when one is given (else: the actor's own).
    "createSession": Rule(On.SPACE, writes=True, role=SpaceRole.EDITOR),
    "updateSession": _OWN_SESSION,
    # The author's session, into a space they may edit.
    "attachSpace": Rule(On.SESSION, writes=True, author=True, role=SpaceRole.EDITOR),
    "detachSpace": _OWN_SESSION,
    "mountCheckpoint": _OWN_SESSION,
    "unmountCheckpoint": _OWN_SESSION,
    # A viewer's fork is a private session outside the space (no branch).
    "forkSession": Rule(On.CHECKPOINT, writes=True, role=SpaceRole.VIEWER),
    "deleteSession": _OWN_SESSION,
    # Titles of new sessions are written by the background model after the reply.
    "sendMessage": Rule(On.SESSION, writes=True, author=True, calls_model=True),
    "messageStream": Rule(On.SESSION, writes=True, author=True, calls_model=True),
    # A cut-off reply of the actor's session, continued as sendMessage sends.
    "continueReply": Rule(On.TURN, writes=True, author=True, calls_model=True),
    "continueReplyStream": Rule(On.TURN, writes=True, author=True, calls_model=True),
    # A reply of the actor's session answered again / a message of theirs
    # edited: a new branch of the conversation, sent as sendMessage sends.
    "regenerate": Rule(On.TURN, writes=True, author=True, calls_model=True),
    "editAndResend": Rule(On.TURN, writes=True, author=True, calls_model=True),
    "regenerateStream": Rule(On.TURN, writes=True, author=True, calls_model=True),
    "editAndResendStream": Rule(On.TURN, writes=True, author=True, calls_model=True),
    # Writes nothing, but spends a model call on the actor's behalf.
    "draftCheckpoint": Rule(On.SESSION, writes=True, author=True, calls_model=True),
    "createCheckpoint": Rule(On.SESSION, writes=True, author=True, role=SpaceRole.EDITOR),
    "mergeCheckpoints": Rule(On.SPACE, writes=True, role=SpaceRole.EDITOR),
    "importSpace": Rule(On.OWN, writes=True),
    "createApiToken": Rule(On.OWN, writes=True),
    # One of the actor's tokens; an admin's: anyone's.
    "revokeApiToken": Rule(On.TOKEN, writes=True),
    "addSpaceMember": Rule(On.SPACE, writes=True, role=SpaceRole.OWNER),
    "updateSpaceMember": Rule(On.SPACE, writes=True, role=SpaceRole.OWNER),
    "removeSpaceMember": Rule(On.SPACE, writes=True, role=SpaceRole.OWNER),
    "setModelAccess": Rule(On.NOTHING, writes=True, admin=True),
    # Presets are their owner's alone (viewer.presets lists them).
    "createPreset": Rule(On.OWN, writes=True),
    "updatePreset": Rule(On.PRESET, writes=True),
    "deletePreset": Rule(On.PRESET, writes=True),
    # The author's session takes one of the actor's presets (model + settings).
    "applyPreset": Rule(On.SESSION, writes=True, author=True),
    # Accounts: an admin sees every account and the failed sign-ins; anyone
    # else sees only themselves, and no failures.
    "users": Rule(On.OWN),
    "signInFailures": Rule(On.OWN),
    "clearSignInFailures": Rule(On.NOTHING, writes=True, admin=True),
    "setUserDisabled": Rule(On.NOTHING, writes=True, admin=True),
    "deleteUser": Rule(On.NOTHING, writes=True, admin=True),
}

# Decisions inside a use case, beyond its operation's rule:
# a fork that makes a branch in the space (a viewer's fork is a private session);
BRANCH_IN_SPACE = SpaceRole.EDITOR
# sharing a session with its space (updateSession's visibility: SPACE);
SHARE_SESSION = SpaceRole.EDITOR
# forkSession at a turn (atTurnId): a branch of the conversation, for the
# session's author only (its turns are copied into a session of theirs).
BRANCH_AT_TURN = Rule(On.TURN, writes=True, author=True)

_MESSAGES = {
    SpaceRole.OWNER: "Only an owner of the space may do this.",
    SpaceRole.EDITOR: "Viewers of a space read it: this needs an editor or an owner.",
    SpaceRole.VIEWER: "Only a member of the space may do this.",
}


def allow(actor: Actor, operation: str) -> Rule:
    """The rule of ``operation``, once what needs no read holds for ``actor``:
    Forbidden for a read-only token that would write, or a non-admin where an
    admin is needed. KeyError for an operation without a rule (a bug)."""
    rule = RULES[operation]
    if rule.writes and actor.read_only:
        raise Forbidden("This API token is read-only: it cannot change anything.")
    if rule.admin and not actor.is_admin:
        field, message = _ADMIN_REFUSALS.get(operation, (None, "Only an admin may do this."))
        raise Forbidden(message, field=field)
    return rule


# What an admin-only refusal says, and the input field it names.
_ADMIN_REFUSALS = {
    "setModelAccess": ("model", "Only an admin decides who may use a model."),
    "clearSignInFailures": (None, "Only an admin clears failed sign-ins."),
    "setUserDisabled": ("name", "Only an admin disables or enables accounts."),
    "deleteUser": ("name", "Only an admin deletes accounts."),
}


def check_role(role: SpaceRole, needs: SpaceRole | None, *, field: str | None) -> None:
    """Forbidden when a member's ``role`` does not allow what ``needs``."""
    if needs is not None and not role.allows(needs):
        raise Forbidden(_MESSAGES[needs], field=field)


def check_author(actor: Actor, author_id: int, *, field: str | None) -> None:
    """Forbidden for a reader of a session who is not its author."""
    if author_id != actor.user_id:
        raise Forbidden("Only its author writes to a session.", field=field)


def roles_allowed(needs: SpaceRole) -> tuple[SpaceRole, ...]:
    """The roles that allow ``needs`` (for a store write that checks the role
    again under its own statement)."""
    return tuple(role for role in SpaceRole if role.allows(needs))
