"""Why each reply ended, and continuations (issue 17, section 2).

- ``turn.finish_reason``: STOP, LENGTH, CONTENT_FILTER, TOOL_CALLS,
  INTERRUPTED, LOST_CONNECTION or OTHER (``api.domain.types.FinishReason``);
  null for user turns and for every reply saved before this migration, whose
  reason was not recorded (``interrupted`` still says whether one was cut off).
- ``turn.provider_finish_reason``: with OTHER, the provider's own word.
- ``turn.continues_sequence``: for a continuation (continueReply), the
  sequence number of the cut-off reply it continues; unique per session, so a
  reply is continued once.

Turns are immutable (0002 rejects UPDATE): existing rows are not rewritten.
The columns are added with ALTER TABLE ADD COLUMN and the unique constraint
as an index, which keeps the triggers. No checkpoint hash covers turns.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops
from tortoise.migrations.constraints import UniqueConstraint


class Migration(migrations.Migration):
    dependencies = [("models", "0009_sign_in")]

    operations = [
        ops.AddField(
            model_name="Turn",
            name="continues_sequence",
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name="Turn",
            name="finish_reason",
            field=fields.CharField(null=True, max_length=20),
        ),
        ops.AddField(
            model_name="Turn",
            name="provider_finish_reason",
            field=fields.CharField(null=True, max_length=100),
        ),
        ops.AddConstraint(
            model_name="Turn",
            constraint=UniqueConstraint(fields=("session_id", "continues_sequence"), name=None),
        ),
    ]
