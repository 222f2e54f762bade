"""Tortoise models: fields, relations, indexes and constraints — no rules.

Turns and checkpoints are immutable; database triggers (see migrations) reject
UPDATE on them. That is why no foreign key *from* those tables uses
ON DELETE SET NULL (it would be an UPDATE): references that may outlive their
target (a checkpoint's source session, an assistant turn's question) are plain
columns, resolved leniently by the store.

Every model sets ``_no_comments``: otherwise Tortoise reads the model's source as
it defines the class (``inspect.getsource``, which parses this whole module again
for each model) to find ``#:`` field comments for its schema documentation. There
are none here, and Smriti writes its schema with its own migrations; the reading
cost about 0.1 s of every start (``tests/store/test_models_import.py``).
"""

from __future__ import annotations

from tortoise import fields
from tortoise.fields import OnDelete
from tortoise.models import Model


class User(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    name = fields.CharField(max_length=100, unique=True)
    # The name NFKC-normalised and case-folded: no two accounts share it
    # (api.domain.accounts.name_key). Null only for a local user made since.
    name_key = fields.CharField(max_length=100, null=True, unique=True)
    created_at = fields.DatetimeField()
    # An account is a user with a password (an Argon2id hash); the local user has none.
    password_hash = fields.CharField(max_length=200, null=True)
    is_admin = fields.BooleanField(default=False, db_default=False)
    disabled = fields.BooleanField(default=False, db_default=False)

    class Meta:
        table = "smriti_user"


class ApiToken(Model):
    """A bearer token: only its SHA-256 is kept, plus a short prefix to recognise it by."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="api_tokens", on_delete=OnDelete.CASCADE
    )
    name = fields.CharField(max_length=100)
    token_hash = fields.CharField(max_length=64, unique=True)
    prefix = fields.CharField(max_length=16)
    read_only = fields.BooleanField(default=False, db_default=False)
    created_at = fields.DatetimeField()
    last_used_at = fields.DatetimeField(null=True)
    expires_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "api_token"
        indexes = (("user_id", "id"),)


class WebSession(Model):
    """A signed-in browser: only the SHA-256 of its cookie is kept."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="web_sessions", on_delete=OnDelete.CASCADE
    )
    session_hash = fields.CharField(max_length=64, unique=True)
    created_at = fields.DatetimeField()
    last_seen_at = fields.DatetimeField()

    class Meta:
        table = "web_session"


class SignIn(Model):
    """Failed sign-ins of one name (its sign-in key) from one address, and when
    that name last signed in from there: the limits every worker counts."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    name = fields.CharField(max_length=100)
    address = fields.CharField(max_length=64)
    # Failures since the row's last quiet window; only counted while
    # last_failed_at is within the window.
    failures = fields.IntField(default=0, db_default=0)
    last_failed_at = fields.DatetimeField(null=True)
    signed_in_at = fields.DatetimeField(null=True)

    class Meta:
        table = "sign_in"
        unique_together = (("name", "address"),)
        indexes = (("address", "last_failed_at"), ("last_failed_at",))


class Space(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    name = fields.CharField(max_length=200)
    description = fields.TextField(default="")
    owner: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="spaces", on_delete=OnDelete.CASCADE
    )
    # The space id its checkpoint hashes are sealed with, when it came from
    # another server (an import); null: its own id.
    origin_space_id = fields.BigIntField(null=True)
    # Instructions and parameters for the space's sessions (0014; null: none).
    settings: fields.JSONField[dict[str, object] | None] = fields.JSONField(null=True)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "space"
        indexes = (("owner_id", "id"),)


class SpaceMember(Model):
    """A user's role in a space: OWNER, EDITOR or VIEWER. The creator's row is
    written with the space (and was backfilled for older spaces)."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    space: fields.ForeignKeyRelation[Space] = fields.ForeignKeyField(
        "models.Space", related_name="members", on_delete=OnDelete.CASCADE
    )
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="memberships", on_delete=OnDelete.CASCADE
    )
    role = fields.CharField(max_length=10)
    created_at = fields.DatetimeField()

    class Meta:
        table = "space_member"
        unique_together = (("space_id", "user_id"),)
        indexes = (("user_id", "space_id"),)


class ModelAccess(Model):
    """A model ("provider/model") an admin restricted to admins."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    model = fields.CharField(max_length=300, unique=True)
    admins_only = fields.BooleanField(default=False, db_default=False)
    updated_at = fields.DatetimeField()

    class Meta:
        table = "model_access"


class Preset(Model):
    """A user's named model and settings (instructions, parameters), chosen
    from the model picker: applying one sets a session's model and settings."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    owner: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="presets", on_delete=OnDelete.CASCADE
    )
    name = fields.CharField(max_length=100)
    model = fields.CharField(max_length=300)
    settings: fields.JSONField[dict[str, object] | None] = fields.JSONField(null=True)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "preset"
        unique_together = (("owner_id", "name"),)


class Session(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    title = fields.CharField(max_length=200, default="")
    space: fields.ForeignKeyNullableRelation[Space] = fields.ForeignKeyField(
        "models.Space", related_name="sessions", null=True, on_delete=OnDelete.CASCADE
    )
    branch_name = fields.CharField(max_length=100, default="main")
    active_provider = fields.CharField(max_length=100)
    active_model = fields.CharField(max_length=200)
    seeded_from: fields.ForeignKeyNullableRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name=False, null=True, on_delete=OnDelete.SET_NULL
    )
    forked_from: fields.ForeignKeyNullableRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name=False, null=True, on_delete=OnDelete.SET_NULL
    )
    memory_scope = fields.CharField(max_length=20, default="LATEST_1")
    mount_checkpoint: fields.ForeignKeyNullableRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name=False, null=True, on_delete=OnDelete.SET_NULL
    )
    mount_base_sequence = fields.IntField(null=True)
    last_sequence_number = fields.IntField(default=0)
    owner: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="sessions", on_delete=OnDelete.CASCADE
    )
    # PRIVATE: only its author reads it; SPACE: the members of its space too.
    visibility = fields.CharField(max_length=10, default="PRIVATE", db_default="PRIVATE")
    # The session's own instructions and parameters (0014; null: none).
    settings: fields.JSONField[dict[str, object] | None] = fields.JSONField(null=True)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()
    # When it was pinned (listed first) and archived (left out of listings
    # unless asked for); null: not pinned, not archived (0013).
    pinned_at = fields.DatetimeField(null=True)
    archived_at = fields.DatetimeField(null=True)
    # A conversation branch (0015): the session it was branched from (a plain
    # column: deleting the origin keeps its branches), the origin's last turn
    # it holds a copy of, and the first session of its family (null: itself).
    branched_from_id = fields.BigIntField(null=True)
    branched_after_sequence = fields.IntField(null=True)
    branch_root_id = fields.BigIntField(null=True)

    class Meta:
        table = "session"
        indexes = (("owner_id", "id"), ("space_id", "id"), ("branch_root_id",))


class SessionTag(Model):
    """A session's tag: as the user wrote it (``tag``) and its key
    (``api.domain.tags.tag_key``), which equality and the filter compare."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    session: fields.ForeignKeyRelation[Session] = fields.ForeignKeyField(
        "models.Session", related_name="tags", on_delete=OnDelete.CASCADE
    )
    tag = fields.CharField(max_length=40)
    tag_key = fields.CharField(max_length=160)

    class Meta:
        table = "session_tag"
        unique_together = (("session_id", "tag_key"),)
        indexes = (("tag_key", "session_id"),)


class Turn(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    session: fields.ForeignKeyRelation[Session] = fields.ForeignKeyField(
        "models.Session", related_name="turns", on_delete=OnDelete.CASCADE
    )
    sequence_number = fields.IntField()
    role = fields.CharField(max_length=10)
    content = fields.TextField()
    provider = fields.CharField(max_length=100, null=True)
    model = fields.CharField(max_length=200, null=True)
    token_count = fields.IntField(default=0)
    prompt_tokens = fields.IntField(null=True)
    completion_tokens = fields.IntField(null=True)
    cost = fields.FloatField(null=True)
    interrupted = fields.BooleanField(default=False)
    # The sequence number of the user turn an assistant turn answers.
    reply_to_sequence = fields.IntField(null=True)
    idempotency_key = fields.CharField(max_length=200, null=True)
    # Who wrote it (null: written before 0008, by the session's owner) and the
    # API token's name when it came with one.
    author_id = fields.BigIntField(null=True)
    author_token = fields.CharField(max_length=100, null=True)
    created_at = fields.DatetimeField()
    # Why a reply ended (api.domain.types.FinishReason; null: not a reply, or
    # saved before 0010) and, for OTHER, the provider's own word.
    finish_reason = fields.CharField(max_length=20, null=True)
    provider_finish_reason = fields.CharField(max_length=100, null=True)
    # A continuation: the sequence number of the cut-off reply it continues
    # (unique: a reply is continued once).
    continues_sequence = fields.IntField(null=True)
    # A reply's effective settings when it was asked (0014; null: none set).
    settings: fields.JSONField[dict[str, object] | None] = fields.JSONField(null=True)
    # In a conversation branch, the turn this one copies, itself never a copy
    # (0015, 0016: the first turn of the group the search index holds once);
    # null otherwise. Partial index turn_copied_from (0016, in SQL).
    copied_from_id = fields.BigIntField(null=True)

    class Meta:
        table = "turn"
        unique_together = (
            ("session_id", "sequence_number"),
            ("session_id", "idempotency_key"),
            ("session_id", "continues_sequence"),
        )
        # (session_id, sequence_number) is covered by the unique index; the
        # created_at index answers "how far had this session got when X was saved".
        indexes = (("session_id", "created_at"),)


class ReplyClaim(Model):
    """Which request is asking the provider for the reply to a user turn sent
    with an idempotency key: the same key sent again meanwhile, to this process
    or another, waits for that answer instead of asking again
    (api/services/answering.py). ``expires_at`` (milliseconds since the epoch)
    is pushed on while the holder works, so a claim whose process died lapses;
    a try that failed leaves its error for those who waited on it."""

    _no_comments = True  # see the module docstring

    id = fields.BigIntField(primary_key=True)
    turn: fields.OneToOneRelation[Turn] = fields.OneToOneField(
        "models.Turn", related_name=False, on_delete=OnDelete.CASCADE
    )
    holder = fields.CharField(max_length=32)
    expires_at = fields.BigIntField()
    failure_code = fields.CharField(max_length=40, null=True)
    failure_message = fields.TextField(null=True)
    failure_retry_after = fields.FloatField(null=True)

    class Meta:
        table = "reply_claim"


class Checkpoint(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    hash = fields.CharField(max_length=64)
    space: fields.ForeignKeyRelation[Space] = fields.ForeignKeyField(
        "models.Space", related_name="checkpoints", on_delete=OnDelete.CASCADE
    )
    parent: fields.ForeignKeyNullableRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name="children", null=True, on_delete=OnDelete.CASCADE
    )
    # The second parent of a merge: the checkpoint merged into this branch.
    merge_parent: fields.ForeignKeyNullableRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name=False, null=True, on_delete=OnDelete.CASCADE
    )
    branch_name = fields.CharField(max_length=100)
    title = fields.CharField(max_length=200)
    objective = fields.TextField(default="")
    summary = fields.TextField(default="")
    decisions: fields.JSONField[list[str]] = fields.JSONField(default=list)
    tasks: fields.JSONField[list[str]] = fields.JSONField(default=list)
    open_questions: fields.JSONField[list[str]] = fields.JSONField(default=list)
    entities: fields.JSONField[list[str]] = fields.JSONField(default=list)
    # Each list item's id, per list field by attribute name (0012); null for
    # checkpoints saved before items had ids (their ids are implicit).
    item_ids: fields.JSONField[dict[str, list[str]] | None] = fields.JSONField(null=True)
    author_agent = fields.CharField(max_length=200, default="user")
    source_session_id = fields.BigIntField(null=True)
    source_first = fields.IntField(null=True)
    source_last = fields.IntField(null=True)
    base_sequence = fields.IntField(default=0)
    # Who saved it (null: saved before 0008, by the space's creator) and the
    # API token's name when it came with one; not part of the hash.
    author_id = fields.BigIntField(null=True)
    author_token = fields.CharField(max_length=100, null=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "checkpoint"
        unique_together = (("space_id", "hash"),)
        indexes = (("parent_id",), ("space_id", "id"))


class Branch(Model):
    _no_comments = True  # see the module docstring
    id = fields.BigIntField(primary_key=True)
    space: fields.ForeignKeyRelation[Space] = fields.ForeignKeyField(
        "models.Space", related_name="branches", on_delete=OnDelete.CASCADE
    )
    name = fields.CharField(max_length=100)
    head: fields.ForeignKeyRelation[Checkpoint] = fields.ForeignKeyField(
        "models.Checkpoint", related_name=False, on_delete=OnDelete.CASCADE
    )
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "branch"
        unique_together = (("space_id", "name"),)
