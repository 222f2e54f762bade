"""An imported space remembers the space id its checkpoint hashes were sealed with.

A checkpoint's hash covers its space id (docs/architecture.md#hashes). A space imported from
another server gets a new id here, yet its hashes must stay identical to
the exported ones; ``origin_space_id`` is the id they were computed with
(null: the space's own id), so verification and new checkpoints on the
imported lines keep hashing with it. It also identifies the import: the
same origin id and creation time is the same space (no duplicate).
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0004_search")]

    operations = [
        ops.AddField(
            model_name="Space",
            name="origin_space_id",
            field=fields.BigIntField(null=True),
        ),
    ]
