"""GraphQL enums, each value described (the schema is the documentation)."""

from __future__ import annotations

import enum

import strawberry


@strawberry.enum(description="Who wrote a turn.")
class Role(enum.Enum):
    USER = strawberry.enum_value("USER", description="The person using Smriti.")
    ASSISTANT = strawberry.enum_value("ASSISTANT", description="A model's reply.")
    SYSTEM = strawberry.enum_value(
        "SYSTEM", description="A note from Smriti itself; never sent to a model."
    )


@strawberry.enum(description="How many checkpoints of a chain a model sees.")
class MemoryScope(enum.Enum):
    LATEST_1 = strawberry.enum_value("LATEST_1", description="Only the newest checkpoint.")
    LATEST_3 = strawberry.enum_value(
        "LATEST_3", description="The newest checkpoint and up to two of its ancestors."
    )


@strawberry.enum(description="Where the context of the next message comes from.")
class ContextMode(enum.Enum):
    FRESH = strawberry.enum_value(
        "FRESH", description="No space: no checkpoints, the session's recent turns."
    )
    HEAD = strawberry.enum_value(
        "HEAD",
        description="The head of the session's branch (and ancestors) plus the turns "
        "written after it was saved.",
    )
    MOUNTED = strawberry.enum_value(
        "MOUNTED",
        description="A mounted checkpoint (and ancestors) plus the turns after the "
        "mount's base sequence.",
    )


@strawberry.enum(
    description="Why a reply ended. LENGTH, INTERRUPTED and LOST_CONNECTION leave it cut "
    "off (`interrupted: true`): continueReply continues such a reply."
)
class FinishReason(enum.Enum):
    STOP = strawberry.enum_value("STOP", description="The model finished its answer.")
    LENGTH = strawberry.enum_value(
        "LENGTH",
        description="The token limit for an answer cut it off (OpenAI `finish_reason: "
        '"length"`, Anthropic `stop_reason: "max_tokens"`, Ollama `done_reason: "length"`).',
    )
    CONTENT_FILTER = strawberry.enum_value(
        "CONTENT_FILTER", description="The provider's content filter stopped it."
    )
    TOOL_CALLS = strawberry.enum_value(
        "TOOL_CALLS", description="The model stopped to call a tool."
    )
    INTERRUPTED = strawberry.enum_value(
        "INTERRUPTED",
        description="Stopped before its end on Smriti's side: the stream was stopped, the "
        "client went away, or the server was shutting down.",
    )
    LOST_CONNECTION = strawberry.enum_value(
        "LOST_CONNECTION",
        description="The provider's stream broke off mid-answer (the connection was lost, "
        "or it failed or stalled).",
    )
    OTHER = strawberry.enum_value(
        "OTHER",
        description="A reason none of these names: `providerFinishReason` has the provider's "
        "own word (null when it gave none).",
    )


@strawberry.enum(description="Why a mutation could not do what was asked.")
class ErrorCode(enum.Enum):
    INVALID = strawberry.enum_value("INVALID", description="An argument is not valid.")
    EMPTY_CONTENT = strawberry.enum_value("EMPTY_CONTENT", description="The content is empty.")
    CONTENT_TOO_LARGE = strawberry.enum_value(
        "CONTENT_TOO_LARGE", description="The content is larger than the size limit."
    )
    NOT_FOUND = strawberry.enum_value(
        "NOT_FOUND", description="No such object, or it belongs to someone else."
    )
    UNKNOWN_MODEL = strawberry.enum_value(
        "UNKNOWN_MODEL", description="The model is not listed by `providers`."
    )
    WRONG_SPACE = strawberry.enum_value(
        "WRONG_SPACE", description="The checkpoint belongs to another space."
    )
    BRANCH_EXISTS = strawberry.enum_value(
        "BRANCH_EXISTS", description="A branch of that name already exists in the space."
    )
    BRANCH_RESERVED = strawberry.enum_value(
        "BRANCH_RESERVED", description='The branch name is reserved ("main").'
    )
    NO_SPACE = strawberry.enum_value(
        "NO_SPACE", description="The session must be attached to a space first."
    )
    AMBIGUOUS_HASH = strawberry.enum_value(
        "AMBIGUOUS_HASH", description="The hash prefix matches more than one checkpoint."
    )
    CONFLICT = strawberry.enum_value(
        "CONFLICT",
        description="A merge has an unresolved conflict, or the branch moved since it was "
        "previewed: preview again and resolve; or the user is already a member.",
    )
    LAST_OWNER = strawberry.enum_value(
        "LAST_OWNER",
        description="The space's last owner cannot be removed or made an editor or viewer: "
        "make another member an owner first.",
    )
    OUT_OF_RANGE = strawberry.enum_value(
        "OUT_OF_RANGE",
        description="A value is outside its bounds: a temperature above 2, a topP of 0, "
        "maxOutputTokens beyond the model's output limit, more than 4 stop strings, "
        "instructions too long.",
    )
    PROVIDER_AUTH = strawberry.enum_value(
        "PROVIDER_AUTH", description="The provider rejected the API key."
    )
    PROVIDER_RATE_LIMIT = strawberry.enum_value(
        "PROVIDER_RATE_LIMIT", description="The provider is rate limiting; retry later."
    )
    PROVIDER_TIMEOUT = strawberry.enum_value(
        "PROVIDER_TIMEOUT", description="The provider did not answer in time."
    )
    PROVIDER_UNREACHABLE = strawberry.enum_value(
        "PROVIDER_UNREACHABLE", description="The provider could not be reached."
    )
    CONTEXT_TOO_LONG = strawberry.enum_value(
        "CONTEXT_TOO_LONG", description="The prompt is longer than the model accepts."
    )
    PROVIDER_UNAVAILABLE = strawberry.enum_value(
        "PROVIDER_UNAVAILABLE", description="The provider is not configured (missing key)."
    )
    PROVIDER_ERROR = strawberry.enum_value(
        "PROVIDER_ERROR", description="The provider failed for another reason."
    )
    MALFORMED_OUTPUT = strawberry.enum_value(
        "MALFORMED_OUTPUT", description="The model's answer could not be parsed."
    )
    TAMPERED = strawberry.enum_value(
        "TAMPERED",
        description="An imported checkpoint's hash does not match its fields or parent.",
    )
    FORBIDDEN = strawberry.enum_value(
        "FORBIDDEN",
        description="Not allowed for you: a read-only API token changes nothing; your role "
        "in the space does not allow it; only a session's author writes to it; the model "
        "is for admins only; or only an admin may do it.",
    )
    UNAUTHENTICATED = strawberry.enum_value(
        "UNAUTHENTICATED",
        description="No valid credentials: sign in, or send `Authorization: Bearer smr_…`.",
    )
    RATE_LIMITED = strawberry.enum_value(
        "RATE_LIMITED", description="Too many failed sign-ins; wait before trying again."
    )


@strawberry.enum(description="A member's role in a space; each may do what the ones below it may.")
class SpaceRole(enum.Enum):
    OWNER = strawberry.enum_value(
        "OWNER", description="Everything: members and their roles, renaming, deleting."
    )
    EDITOR = strawberry.enum_value(
        "EDITOR",
        description="Sessions attached to the space, checkpoints saved from their own "
        "sessions, forks, mounts, merges.",
    )
    VIEWER = strawberry.enum_value(
        "VIEWER",
        description="Reads the lineage and its checkpoints, and mounts or forks them into "
        "their own sessions (outside the space).",
    )


@strawberry.enum(description="Who may read a session.")
class SessionVisibility(enum.Enum):
    PRIVATE = strawberry.enum_value("PRIVATE", description="Its author only.")
    SPACE = strawberry.enum_value(
        "SPACE", description="Its author and the members of the space it is attached to."
    )
