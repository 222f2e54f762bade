"""The authorization matrix (issues 9, 16, 28): every operation of the schema, every actor.

The expected outcome of every cell is written by hand in ``MATRIX`` below,
read from the rules as api/services/policy.py's docstring states them. Two
checks hold the policy to it, never the other way round: each cell runs for
real against an accounts-mode app whose owner's objects exist first
(``test_matrix``), and the policy's rules, read as that docstring says
(``derived``), give the same table (``test_the_policy_gives_the_table``), so
a rule changed without its row fails even where the app would not show it
(a field only the matrix reads). An operation of the schema without a rule,
a document or a row fails ``test_every_operation_has_*``.

Actors: owner (a full token; an admin and the space's OWNER), editor and
viewer (members of the owner's space, EDITOR and VIEWER), other (a member of
another space only), read_only (the owner's read-only token), and anonymous /
revoked / expired / disabled (no token, a revoked one, an expired one, a
disabled user's), which are all unauthenticated.

The owner's objects: the space "Trips" with a session in it shared with the
space (visibility SPACE) and checkpoints c1 (main), c2 (branch idea) and c3
(branch idea2); a private session in no space ("loose"). Outcomes:

    OK        the answer: no error, the object itself
    HIDDEN    the owner's objects do not exist for them: null / NOT_FOUND
    OWN       it works, on their own data: none of the owner's ids appear
    FORBIDDEN the payload's typed FORBIDDEN error, nothing written
    DENIED    HTTP 401 with a top-level UNAUTHENTICATED error

Actors run in ACTORS order on one world per operation, the owner last; where
an editor's allowed write would change what the owner's cell acts on, the
editor's cell has variables of its own (ACTOR_VARIABLES).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from api.domain.types import Finish, FinishReason, Role, SpaceRole
from api.graphql.core import ids as ids_module
from api.graphql.schema import build_schema
from api.services import policy
from api.services.policy import On
from api.settings import Settings
from api.store import turns
from tests.accounts.world import World, accounts_app
from tests.support.streams import STREAM, sse_events

OK, HIDDEN, OWN, FORBIDDEN, DENIED = "OK", "HIDDEN", "OWN", "FORBIDDEN", "DENIED"
ACTORS = (
    "anonymous",
    "revoked",
    "expired",
    "disabled",
    "other",
    "read_only",
    "viewer",
    "editor",
    "owner",
)
ERR = "errors { code message field }"

# operation: (document, variables from the world's ids)
OPERATIONS: dict[str, tuple[str, Any]] = {
    "search": ('query { search(query: "hello") { edges { node { __typename } } } }', {}),
    "node": ("query($id: ID!) { node(id: $id) { id } }", {"id": "space"}),
    "spaces": ("query { spaces { edges { node { id } } } }", {}),
    "sessions": ("query { sessions { edges { node { id } } } }", {}),
    "space": ("query($id: ID!) { space(id: $id) { id } }", {"id": "space"}),
    "session": ("query($id: ID!) { session(id: $id) { id } }", {"id": "session"}),
    "checkpoint": ("query($id: ID!) { checkpoint(id: $id) { id } }", {"id": "c1"}),
    "checkpointByHash": (
        "query($s: ID!, $h: String!) { checkpointByHash(spaceId: $s, hash: $h) { id } }",
        {"s": "space", "h": "c1Hash"},
    ),
    "providers": ("query { providers { chatDefault } }", {}),
    "contextPreview": (
        'query($s: ID!) { contextPreview(input: {sessionId: $s, content: "hi"}) { mode } }',
        {"s": "session"},
    ),
    "compareCheckpoints": (
        "query($a: ID!, $b: ID!) { compareCheckpoints(a: $a, b: $b) { a { id } } }",
        {"a": "c1", "b": "c2"},
    ),
    "previewMerge": (
        'query($s: ID!, $f: ID!) { previewMerge(input: {spaceId: $s, into: "main", '
        "from: $f, draftWithModel: false}) { fastForward } }",
        {"s": "space", "f": "c2"},
    ),
    "verifyLineage": ("query($s: ID!) { verifyLineage(spaceId: $s) { ok } }", {"s": "space"}),
    "exportSpace": (
        "query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { fileName } }",
        {"s": "space"},
    ),
    "exportSession": (
        "query($s: ID!) { exportSession(input: {sessionId: $s, format: JSON}) { fileName } }",
        {"s": "loose"},
    ),
    "viewer": ("query { viewer { name apiTokens { name } } }", {}),
    "createSpace": (
        f'mutation {{ createSpace(input: {{name: "New"}}) {{ space {{ id }} {ERR} }} }}',
        {},
    ),
    "updateSpace": (
        f'mutation($id: ID!) {{ updateSpace(input: {{id: $id, name: "Renamed"}}) {{ space {{ id }} {ERR} }} }}',
        {"id": "space"},
    ),
    "deleteSpace": (
        f"mutation($id: ID!) {{ deleteSpace(input: {{id: $id}}) {{ deletedId {ERR} }} }}",
        {"id": "space"},
    ),
    "createSession": (
        f"mutation($s: ID!) {{ createSession(input: {{spaceId: $s}}) {{ session {{ id }} {ERR} }} }}",
        {"s": "space"},
    ),
    "updateSession": (
        f'mutation($id: ID!) {{ updateSession(input: {{id: $id, title: "T"}}) {{ session {{ id }} {ERR} }} }}',
        {"id": "session"},
    ),
    "attachSpace": (
        f"mutation($s: ID!, $p: ID!) {{ attachSpace(input: {{sessionId: $s, spaceId: $p}}) "
        f"{{ session {{ id }} {ERR} }} }}",
        {"s": "loose", "p": "space"},
    ),
    "detachSpace": (
        f"mutation($s: ID!) {{ detachSpace(input: {{sessionId: $s}}) {{ session {{ id }} {ERR} }} }}",
        {"s": "session"},
    ),
    "mountCheckpoint": (
        f"mutation($s: ID!, $c: ID!) {{ mountCheckpoint(input: {{sessionId: $s, checkpointId: $c}}) "
        f"{{ session {{ id }} {ERR} }} }}",
        {"s": "session", "c": "c1"},
    ),
    "unmountCheckpoint": (
        f"mutation($s: ID!) {{ unmountCheckpoint(input: {{sessionId: $s}}) {{ session {{ id }} {ERR} }} }}",
        {"s": "session"},
    ),
    "forkSession": (
        f"mutation($c: ID!) {{ forkSession(input: {{checkpointId: $c}}) "
        f"{{ session {{ id }} {ERR} }} }}",
        {"c": "c1"},
    ),
    "deleteSession": (
        f"mutation($id: ID!) {{ deleteSession(input: {{id: $id}}) {{ deletedId {ERR} }} }}",
        {"id": "session"},
    ),
    "sendMessage": (
        f'mutation($s: ID!) {{ sendMessage(input: {{sessionId: $s, content: "more"}}) '
        f"{{ userTurn {{ id }} {ERR} }} }}",
        {"s": "session"},
    ),
    "draftCheckpoint": (
        f"mutation($s: ID!) {{ draftCheckpoint(input: {{sessionId: $s}}) {{ draft {{ title }} {ERR} }} }}",
        {"s": "session"},
    ),
    "createCheckpoint": (
        f'mutation($s: ID!) {{ createCheckpoint(input: {{sessionId: $s, title: "Two"}}) '
        f"{{ checkpoint {{ id }} {ERR} }} }}",
        {"s": "session"},
    ),
    "mergeCheckpoints": (
        f'mutation($s: ID!, $f: ID!) {{ mergeCheckpoints(input: {{spaceId: $s, into: "main", '
        f'from: $f, title: "Merged", resolutions: []}}) {{ fastForward {ERR} }} }}',
        {"s": "space", "f": "c2"},
    ),
    "importSpace": (
        f"mutation($d: String!) {{ importSpace(input: {{document: $d}}) {{ created {ERR} }} }}",
        {"d": "document"},
    ),
    "createApiToken": (
        f'mutation {{ createApiToken(input: {{name: "script", readOnly: true}}) '
        f"{{ secret apiToken {{ name readOnly }} {ERR} }} }}",
        {},
    ),
    "revokeApiToken": (
        f"mutation($id: ID!) {{ revokeApiToken(input: {{id: $id}}) {{ apiToken {{ revokedAt }} {ERR} }} }}",
        {"id": "spareToken"},
    ),
    "createPreset": (
        f'mutation {{ createPreset(input: {{name: "Terse", model: "offline/echo", '
        f'settings: {{instructions: "Be terse."}}}}) {{ preset {{ name }} {ERR} }} }}',
        {},
    ),
    "updatePreset": (
        f"mutation($id: ID!) {{ updatePreset(input: {{id: $id, settings: {{temperature: 1}}}}) "
        f"{{ preset {{ name }} {ERR} }} }}",
        {"id": "preset"},
    ),
    "deletePreset": (
        f"mutation($id: ID!) {{ deletePreset(input: {{id: $id}}) {{ deletedId {ERR} }} }}",
        {"id": "preset"},
    ),
    "applyPreset": (
        f"mutation($s: ID!, $p: ID!) {{ applyPreset(input: {{sessionId: $s, presetId: $p}}) "
        f"{{ session {{ model }} {ERR} }} }}",
        {"s": "session", "p": "preset"},
    ),
    "messageStream": (STREAM, {"input": "streamInput"}),
    "continueReply": (
        f"mutation($t: ID!) {{ continueReply(input: {{turnId: $t}}) "
        f"{{ continuation {{ id }} {ERR} }} }}",
        {"t": "cutOff"},
    ),
    "regenerate": (
        f"mutation($t: ID!) {{ regenerate(input: {{turnId: $t}}) "
        f"{{ session {{ id }} assistantTurn {{ id }} {ERR} }} }}",
        {"t": "cutOff"},
    ),
    "editAndResend": (
        f'mutation($t: ID!) {{ editAndResend(input: {{turnId: $t, content: "Or Osaka?"}}) '
        f"{{ session {{ id }} assistantTurn {{ id }} {ERR} }} }}",
        {"t": "question"},
    ),
    "regenerateStream": (
        "subscription($input: RegenerateInput!) { regenerateStream(input: $input) { "
        "__typename ... on StreamFailed { errors { code message field } } } }",
        {"input": "regenerateInput"},
    ),
    "editAndResendStream": (
        "subscription($input: EditAndResendInput!) { editAndResendStream(input: $input) { "
        "__typename ... on StreamFailed { errors { code message field } } } }",
        {"input": "editInput"},
    ),
    "continueReplyStream": (
        "subscription($input: ContinueReplyInput!) { continueReplyStream(input: $input) { "
        "__typename ... on StreamFailed { errors { code message field } } } }",
        {"input": "continueInput"},
    ),
    "addSpaceMember": (
        f'mutation($s: ID!) {{ addSpaceMember(input: {{spaceId: $s, userName: "third", '
        f"role: VIEWER}}) {{ member {{ userName role }} {ERR} }} }}",
        {"s": "space"},
    ),
    "updateSpaceMember": (
        f'mutation($s: ID!) {{ updateSpaceMember(input: {{spaceId: $s, userName: "viewer", '
        f"role: EDITOR}}) {{ member {{ userName role }} {ERR} }} }}",
        {"s": "space"},
    ),
    "removeSpaceMember": (
        f'mutation($s: ID!) {{ removeSpaceMember(input: {{spaceId: $s, userName: "viewer"}}) '
        f"{{ space {{ id }} {ERR} }} }}",
        {"s": "space"},
    ),
    "setModelAccess": (
        f'mutation {{ setModelAccess(input: {{model: "lab/my-model", adminsOnly: true}}) '
        f"{{ model adminsOnly {ERR} }} }}",
        {},
    ),
    "signInFailures": ("query { signInFailures { name address failures } }", {}),
    "users": ("query { users { name isAdmin disabled apiTokens { name } } }", {}),
    "setUserDisabled": (
        f'mutation {{ setUserDisabled(input: {{name: "third", disabled: true}}) '
        f"{{ user {{ name disabled }} {ERR} }} }}",
        {},
    ),
    "deleteUser": (
        f'mutation {{ deleteUser(input: {{name: "third"}}) {{ deletedName {ERR} }} }}',
        {},
    ),
    "clearSignInFailures": (
        f'mutation {{ clearSignInFailures(input: {{address: "192.0.2.1"}}) {{ cleared {ERR} }} }}',
        {},
    ),
}

# (operation, actor): variables of that cell's own, where an allowed write by
# an earlier actor would change what the owner's cell acts on.
ACTOR_VARIABLES: dict[tuple[str, str], dict[str, str]] = {
    # The editor fast-forwards main to c3; the owner then merges c2 for real.
    ("mergeCheckpoints", "editor"): {"s": "space", "f": "c3"},
}

UNAUTHENTICATED = ("anonymous", "revoked", "expired", "disabled")

# Every cell, by hand. Columns: ACTORS after the four unauthenticated ones
# (D: anonymous, revoked, expired and disabled are DENIED everywhere), i.e.
# other, read_only, viewer, editor, owner.
D = (DENIED, DENIED, DENIED, DENIED)
MATRIX: dict[str, tuple[str, ...]] = {
    "addSpaceMember": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "applyPreset": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "attachSpace": (*D, HIDDEN, FORBIDDEN, HIDDEN, HIDDEN, OK),
    "checkpoint": (*D, HIDDEN, OK, OK, OK, OK),
    "checkpointByHash": (*D, HIDDEN, OK, OK, OK, OK),
    "clearSignInFailures": (*D, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "compareCheckpoints": (*D, HIDDEN, OK, OK, OK, OK),
    "contextPreview": (*D, HIDDEN, OK, OK, OK, OK),
    "continueReply": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "continueReplyStream": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "createApiToken": (*D, OWN, FORBIDDEN, OWN, OWN, OK),
    "createCheckpoint": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "createPreset": (*D, OWN, FORBIDDEN, OWN, OWN, OK),
    "createSession": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, OK, OK),
    "createSpace": (*D, OWN, FORBIDDEN, OWN, OWN, OK),
    "deletePreset": (*D, HIDDEN, FORBIDDEN, HIDDEN, HIDDEN, OK),
    "deleteSession": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "deleteSpace": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "deleteUser": (*D, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "detachSpace": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "draftCheckpoint": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "editAndResend": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "editAndResendStream": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "exportSession": (*D, HIDDEN, OK, HIDDEN, HIDDEN, OK),
    "exportSpace": (*D, HIDDEN, OK, OK, OK, OK),
    "forkSession": (*D, HIDDEN, FORBIDDEN, OK, OK, OK),
    "importSpace": (*D, OWN, FORBIDDEN, OWN, OWN, OK),
    "mergeCheckpoints": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, OK, OK),
    "messageStream": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "mountCheckpoint": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "node": (*D, HIDDEN, OK, OK, OK, OK),
    "previewMerge": (*D, HIDDEN, OK, OK, OK, OK),
    "providers": (*D, OK, OK, OK, OK, OK),
    "regenerate": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "regenerateStream": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "removeSpaceMember": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "revokeApiToken": (*D, HIDDEN, FORBIDDEN, HIDDEN, HIDDEN, OK),
    "search": (*D, OWN, OK, OK, OK, OK),
    "sendMessage": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "session": (*D, HIDDEN, OK, OK, OK, OK),
    "sessions": (*D, OWN, OK, OWN, OWN, OK),
    "setModelAccess": (*D, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "setUserDisabled": (*D, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "signInFailures": (*D, OWN, OK, OWN, OWN, OK),
    "space": (*D, HIDDEN, OK, OK, OK, OK),
    "spaces": (*D, OWN, OK, OK, OK, OK),
    "unmountCheckpoint": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "updatePreset": (*D, HIDDEN, FORBIDDEN, HIDDEN, HIDDEN, OK),
    "updateSession": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "updateSpace": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "updateSpaceMember": (*D, HIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
    "users": (*D, OWN, OK, OWN, OWN, OK),
    "verifyLineage": (*D, HIDDEN, OK, OK, OK, OK),
    "viewer": (*D, OWN, OK, OWN, OWN, OK),
}


@dataclass(frozen=True)
class Who:
    """An authenticated actor of the world: which user, their role in the
    owner's space "Trips" (None: not a member), admin, read-only token."""

    user: str
    role: SpaceRole | None
    admin: bool = False
    read_only: bool = False


WHO = {
    "other": Who("other", None),
    "read_only": Who("owner", SpaceRole.OWNER, admin=True, read_only=True),
    "viewer": Who("viewer", SpaceRole.VIEWER),
    "editor": Who("editor", SpaceRole.EDITOR),
    "owner": Who("owner", SpaceRole.OWNER, admin=True),
}
# The owner's objects a cell names, and the users who may read them: the
# members of Trips read it, its checkpoints and the session shared with it;
# the private session in no space and the owner's token are the owner's alone.
MEMBERS = frozenset({"owner", "editor", "viewer"})
READ_BY = {
    "space": MEMBERS,
    "session": MEMBERS,
    "streamInput": MEMBERS,  # messageStream's input names the shared session
    "cutOff": MEMBERS,  # a cut-off reply, the shared session's last turn
    "question": MEMBERS,  # the shared session's first message
    "regenerateInput": MEMBERS,  # regenerateStream's input names cutOff
    "editInput": MEMBERS,  # editAndResendStream's input names question
    "continueInput": MEMBERS,  # continueReplyStream's input names it
    "c1": MEMBERS,
    "c2": MEMBERS,
    "c3": MEMBERS,
    "loose": frozenset({"owner"}),
    "spareToken": frozenset({"owner"}),
    "preset": frozenset({"owner"}),
}


def derived(operation: str, actor: str) -> str:
    """The outcome of a cell as the operation's policy rule
    (api/services/policy.py) gives it, with what the world's actor may read:
    checked against MATRIX, never used as the expectation."""
    if actor in UNAUTHENTICATED:
        return DENIED
    rule, who = policy.RULES[operation], WHO[actor]
    if rule.writes and who.read_only:
        return FORBIDDEN
    if rule.admin and not who.admin:
        return FORBIDDEN
    if rule.on is On.NOTHING:
        return OK
    if rule.on is On.OWN:  # their own things: the owner's, or none of the owner's
        return OK if who.user == "owner" else OWN
    if rule.on is On.READABLE:  # what they may read: the owner's shared things too
        return OK if who.role is not None else OWN
    target = next(iter(OPERATIONS[operation][1].values()))
    if who.user not in READ_BY[target]:
        return HIDDEN
    if rule.author and who.user != "owner":
        return FORBIDDEN
    if rule.role is not None and (who.role is None or not who.role.allows(rule.role)):
        return FORBIDDEN
    return OK


def derived_matrix() -> dict[str, tuple[str, ...]]:
    return {op: tuple(derived(op, actor) for actor in ACTORS) for op in sorted(policy.RULES)}


def schema_operations() -> set[str]:
    schema = build_schema()._schema
    return {
        name
        for root in (schema.query_type, schema.mutation_type, schema.subscription_type)
        if root is not None
        for name in root.fields
    }


def test_every_operation_has_a_policy_rule() -> None:
    operations = schema_operations()
    assert operations - set(policy.RULES) == set(), "operations without a rule in the policy"
    assert set(policy.RULES) - operations == set(), "rules for operations the schema lacks"


def test_every_operation_has_a_cell_document() -> None:
    operations = schema_operations()
    assert operations - set(OPERATIONS) == set(), "operations without a document in OPERATIONS"
    assert set(OPERATIONS) - operations == set(), "documents for operations the schema lacks"


def test_every_operation_has_a_table_row() -> None:
    operations = schema_operations()
    assert operations - set(MATRIX) == set(), "operations without a row in MATRIX"
    assert set(MATRIX) - operations == set(), "rows for operations the schema lacks"
    assert {len(row) for row in MATRIX.values()} == {len(ACTORS)}


def test_the_policy_gives_the_table() -> None:
    """Each rule, read as the policy's docstring says, gives its row of MATRIX."""
    derived_rows = derived_matrix()
    wrong = {
        op: (derived_rows.get(op), row) for op, row in MATRIX.items() if derived_rows.get(op) != row
    }
    assert wrong == {}, "operation: (what the policy gives, the table)"


def test_the_table_has_every_outcome() -> None:
    outcomes = {outcome for row in MATRIX.values() for outcome in row}
    assert outcomes == {OK, HIDDEN, OWN, FORBIDDEN, DENIED}


# What each operation's document names (its first variable), by the kind of
# object it is; the rule's ``on`` must say the same.
KIND = {
    "space": On.SPACE,
    "session": On.SESSION,
    "loose": On.SESSION,
    "streamInput": On.SESSION,
    "cutOff": On.TURN,
    "question": On.TURN,
    "regenerateInput": On.TURN,
    "editInput": On.TURN,
    "continueInput": On.TURN,
    "c1": On.CHECKPOINT,
    "c2": On.CHECKPOINT,
    "c3": On.CHECKPOINT,
    "spareToken": On.TOKEN,
    "preset": On.PRESET,
}
# Acting on no object of the owner's: their own things (OWN, READABLE) or
# none (NOTHING); node takes an id of any kind.
NO_OBJECT = {
    "createApiToken": On.OWN,
    "createPreset": On.OWN,
    "createSpace": On.OWN,
    "importSpace": On.OWN,
    "sessions": On.OWN,
    "signInFailures": On.OWN,
    "users": On.OWN,
    "viewer": On.OWN,
    "search": On.READABLE,
    "spaces": On.READABLE,
    "providers": On.NOTHING,
    "setModelAccess": On.NOTHING,
    "clearSignInFailures": On.NOTHING,
    "setUserDisabled": On.NOTHING,
    "deleteUser": On.NOTHING,
    "node": On.NODE,
}
# The operations that reach a model on a user's behalf (chat, drafts, merge
# suggestions; a send also titles a new session), by hand: ``calls_model`` is
# read by no use case (each passes the model check where it calls), so only
# this set holds it. tests/accounts/test_model_check.py and test_send_checks.py
# check the refusal of a kept model for sends, streams, drafts and previews.
CALLS_MODEL = {
    "continueReply",
    "continueReplyStream",
    "draftCheckpoint",
    "editAndResend",
    "editAndResendStream",
    "messageStream",
    "previewMerge",
    "regenerate",
    "regenerateStream",
    "sendMessage",
}


def test_each_rule_acts_on_what_its_operation_names() -> None:
    """A rule's ``on`` is the kind of the id its operation takes (MATRIX
    cannot tell one kind of object from another: a cell only sees HIDDEN)."""
    wrong = {}
    for operation, rule in policy.RULES.items():
        names = OPERATIONS[operation][1]
        kind = NO_OBJECT.get(operation) or KIND[next(iter(names.values()))]
        if rule.on is not kind:
            wrong[operation] = (rule.on, kind)
    assert wrong == {}, "operation: (the rule's on, what the operation names)"


def test_the_rules_fields_combine_as_the_policy_says() -> None:
    """The policy's docstring: a role is needed on the space of an object
    (every operation on a space or a checkpoint names the least it needs); a
    session is written by its author only, and only what puts it into a space
    (attaching it, a checkpoint of it) needs a role there; admin-only
    operations act on no object. MATRIX cannot see these where every reader
    of the object it names already has the role (the private session is the
    owner's alone, the shared one's readers are all members)."""
    rules = policy.RULES
    assert {
        op for op, r in rules.items() if r.on in (On.SPACE, On.CHECKPOINT) and r.role is None
    } == set()
    assert {
        op
        for op, r in rules.items()
        if r.role is not None and r.on not in (On.SPACE, On.CHECKPOINT, On.SESSION)
    } == set()
    assert {
        op for op, r in rules.items() if r.author and r.on not in (On.SESSION, On.TURN)
    } == set()
    assert {
        op for op, r in rules.items() if r.on in (On.SESSION, On.TURN) and r.author != r.writes
    } == set()
    assert {op: r.role for op, r in rules.items() if r.on is On.SESSION and r.role} == {
        "attachSpace": SpaceRole.EDITOR,
        "createCheckpoint": SpaceRole.EDITOR,
    }
    assert {op for op, r in rules.items() if r.admin} == {
        "setModelAccess",
        "clearSignInFailures",
        "setUserDisabled",
        "deleteUser",
    }
    assert {op for op, r in rules.items() if r.calls_model} == CALLS_MODEL


ADD_MEMBER = (
    "mutation($s: ID!, $u: String!, $r: SpaceRole!) { addSpaceMember(input: "
    "{spaceId: $s, userName: $u, role: $r}) { member { role } errors { code } } }"
)


async def build_objects(world: World) -> None:
    """The owner's space with editor and viewer as members; a session in it shared
    with the space, with two turns and checkpoint c1; forks with c2 and c3; a
    private session in no space. Another space of the owner's has other as editor."""
    ids = world.ids
    run = world.data
    create_space = "mutation($n: String!) { createSpace(input: {name: $n}) { space { id } } }"
    ids["space"] = (await run("owner", create_space, n="Trips"))["createSpace"]["space"]["id"]
    elsewhere = (await run("owner", create_space, n="Elsewhere"))["createSpace"]["space"]["id"]
    for space, user, role in (
        (ids["space"], "editor", "EDITOR"),
        (ids["space"], "viewer", "VIEWER"),
        (elsewhere, "other", "EDITOR"),
    ):
        added = await run("owner", ADD_MEMBER, s=space, u=user, r=role)
        assert added["addSpaceMember"] == {"member": {"role": role}, "errors": []}
    created = await run(
        "owner",
        "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }",
        s=ids["space"],
    )
    ids["session"] = created["createSession"]["session"]["id"]
    shared = await run(
        "owner",
        "mutation($id: ID!) { updateSession(input: {id: $id, visibility: SPACE}) "
        "{ session { visibility } errors { code } } }",
        id=ids["session"],
    )
    assert shared["updateSession"] == {"session": {"visibility": "SPACE"}, "errors": []}
    loose = await run("owner", "mutation { createSession(input: {}) { session { id } } }")
    ids["loose"] = loose["createSession"]["session"]["id"]
    send = 'mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "hello"}) { userTurn { id } } }'
    await run("owner", send, s=ids["session"])
    # The send titles the untitled session in the background: let that land now, or
    # a refused cell's before/after snapshots could straddle it (CI saw the title
    # change under `space`, as if the anonymous read had written it).
    await world.app.state.services.drain()
    checkpoint = (
        "mutation($s: ID!, $t: String!) { createCheckpoint(input: {sessionId: $s, title: $t}) "
        "{ checkpoint { id hash } } }"
    )
    c1 = (await run("owner", checkpoint, s=ids["session"], t="One"))["createCheckpoint"][
        "checkpoint"
    ]
    # A 12-character prefix: a full 64-character hash fails on main (see the report).
    ids["c1"], ids["c1Hash"] = c1["id"], c1["hash"][:12]
    await run("owner", send, s=ids["session"])  # turns after c1, to draft from
    fork = await run(
        "owner",
        'mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "idea"}) { session { id } } }',
        c=ids["c1"],
    )
    forked = fork["forkSession"]["session"]["id"]
    await run("owner", send, s=forked)
    c2 = (await run("owner", checkpoint, s=forked, t="Two"))["createCheckpoint"]["checkpoint"]
    ids["c2"] = c2["id"]
    fork = await run(
        "owner",
        'mutation($c: ID!) { forkSession(input: {checkpointId: $c, branchName: "idea2"}) { session { id } } }',
        c=ids["c1"],
    )
    forked = fork["forkSession"]["session"]["id"]
    await run("owner", send, s=forked)
    c3 = (await run("owner", checkpoint, s=forked, t="Three"))["createCheckpoint"]["checkpoint"]
    ids["c3"] = c3["id"]
    exported = await run(
        "owner",
        "query($s: ID!) { exportSpace(input: {spaceId: $s, format: JSON}) { document } }",
        s=ids["space"],
    )
    ids["document"] = exported["exportSpace"]["document"]
    ids["streamInput"] = {"sessionId": ids["session"], "content": "streamed"}  # type: ignore[assignment]
    # The shared session ends with a reply the token limit cut off (the offline
    # model always finishes, so it is written as a provider would have left it).
    shared = ids_module.decode(ids["session"], "Session", field="id")
    last = (await turns.recent(shared, after=0, before=None, limit=1))[0]
    cut_off = await turns.append(
        shared,
        role=Role.ASSISTANT,
        content="Kyoto was the capital for",
        token_count=6,
        provider="offline",
        model="echo",
        finish=Finish(FinishReason.LENGTH),
        reply_to_sequence=last.sequence_number - 1,  # the last message, answered again
    )
    ids["cutOff"] = ids_module.encode("Turn", cut_off.id)
    first = await turns.in_range(shared, 1, 1)
    ids["question"] = ids_module.encode("Turn", first[0].id)
    ids["regenerateInput"] = {"turnId": ids["cutOff"]}  # type: ignore[assignment]
    ids["editInput"] = {"turnId": ids["question"], "content": "Or Osaka?"}  # type: ignore[assignment]
    ids["continueInput"] = {"turnId": ids["cutOff"]}  # type: ignore[assignment]
    preset = await run(
        "owner",
        'mutation { createPreset(input: {name: "Pirate", model: "offline/echo", '
        'settings: {instructions: "Talk like a pirate."}}) { preset { id } } }',
    )
    ids["preset"] = preset["createPreset"]["preset"]["id"]


def variables(world: World, operation: str, actor: str) -> dict[str, Any]:
    names = ACTOR_VARIABLES.get((operation, actor), OPERATIONS[operation][1])
    return {name: world.ids[key] for name, key in names.items()}


STREAMS = ("messageStream", "continueReplyStream", "regenerateStream", "editAndResendStream")


async def run_cell(world: World, operation: str, actor: str) -> tuple[int, dict[str, Any]]:
    document = OPERATIONS[operation][0]
    if operation in STREAMS:
        response = await world.http.post(
            "/graphql",
            json={"query": document, "variables": variables(world, operation, actor)},
            headers={**world.headers[actor], "Accept": "text/event-stream"},
        )
        if response.status_code != 200:
            return response.status_code, response.json()
        events = [
            data["data"][operation] for kind, data in sse_events(response.text) if kind == "next"
        ]
        return 200, {"data": {operation: events[-1]}}
    response = await world.post(actor, document, **variables(world, operation, actor))
    return response.status_code, response.json()


def owner_ids(world: World) -> set[str]:
    return {world.ids[k] for k in ("space", "session", "loose", "c1", "c2", "c3")}


def check(
    world: World, operation: str, actor: str, outcome: str, status: int, body: dict[str, Any]
) -> None:
    where = (operation, actor, outcome, body)
    if outcome == DENIED:
        assert status == 401, where
        assert body["data"] is None, where
        assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"], where
        return
    assert status == 200, where
    data = body.get("data") or {}
    value = data.get(operation)
    errors = body.get("errors") or []
    payload_errors = value.get("errors", []) if isinstance(value, dict) else []
    if outcome == OK:
        assert errors == [] and value is not None, where
        assert payload_errors == [], where
        if operation in STREAMS:
            assert value["__typename"] == "StreamAssistantTurn", where
        if operation == "createApiToken":
            assert value["secret"].startswith("smr_"), where
    elif outcome == OWN:
        assert errors == [] and payload_errors == [], where
        text = json.dumps(value)
        assert not any(i in text for i in owner_ids(world)), where
    elif outcome == HIDDEN:
        codes = [e.get("extensions", {}).get("code") for e in errors] + [
            e["code"] for e in payload_errors
        ]
        if operation in STREAMS:
            assert value["__typename"] == "StreamFailed", where
        if value is None or operation in STREAMS or payload_errors:
            assert set(codes) <= {"NOT_FOUND"}, where
            if isinstance(value, dict) and operation not in STREAMS:
                assert codes, where
        else:
            pytest.fail(f"visible to another user: {where}")
        assert "FORBIDDEN" not in json.dumps(body), where
    elif outcome == FORBIDDEN:
        assert errors == [], where
        assert [e["code"] for e in payload_errors] == ["FORBIDDEN"], where
    else:  # pragma: no cover
        raise AssertionError(outcome)


async def snapshot(world: World) -> str:
    """Everything the owner has, to see that a refused write wrote nothing."""
    query = (
        "query { viewer { apiTokens { name revokedAt } } providers { adminsOnly } "
        "spaces { edges { node { id name members { userName role } "
        "branches { name head { id } } } } } "
        "sessions { edges { node { id title visibility lastSequenceNumber space { id } "
        "mount { baseSequence } } } } }"
    )
    return json.dumps(await world.data("owner", query))


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
async def test_matrix(settings: Settings, operation: str) -> None:
    async with accounts_app(settings) as world:
        await build_objects(world)
        for actor in ACTORS:
            outcome = MATRIX[operation][ACTORS.index(actor)]
            before = await snapshot(world) if outcome != OK else None
            status, body = await run_cell(world, operation, actor)
            check(world, operation, actor, outcome, status, body)
            if outcome in (DENIED, FORBIDDEN, HIDDEN):
                assert await snapshot(world) == before, (operation, actor, "wrote something")


FORK_AT = (
    f"mutation($t: ID!) {{ forkSession(input: {{atTurnId: $t}}) "
    f"{{ session {{ id lastSequenceNumber }} {ERR} }} }}"
)


async def test_fork_at_a_turn_is_for_the_sessions_author(settings: Settings) -> None:
    """forkSession's atTurnId form (policy.BRANCH_AT_TURN): the session's author
    branches it; a member who reads the shared session gets FORBIDDEN, anyone
    else NOT_FOUND, a read-only token FORBIDDEN — and nothing is written."""
    async with accounts_app(settings) as world:
        await build_objects(world)
        for actor, code in (
            ("other", "NOT_FOUND"),
            ("viewer", "FORBIDDEN"),
            ("editor", "FORBIDDEN"),
            ("read_only", "FORBIDDEN"),
        ):
            before = await snapshot(world)
            response = await world.post(actor, FORK_AT, t=world.ids["question"])
            payload = response.json()["data"]["forkSession"]
            assert payload["session"] is None, (actor, payload)
            assert [e["code"] for e in payload["errors"]] == [code], (actor, payload)
            assert await snapshot(world) == before, actor
        owned = (await world.data("owner", FORK_AT, t=world.ids["question"]))["forkSession"]
        assert owned["errors"] == []
        assert owned["session"]["lastSequenceNumber"] == 1
