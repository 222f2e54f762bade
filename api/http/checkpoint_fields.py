"""``/checkpoint-fields.js``: the checkpoint's fields, as the web UI learns them.

The web UI is plain files with no build step, so the one list of fields
(``CONTENT_FIELDS``) reaches it as a small ES module this server writes from
the registry. Every component that shows, edits, compares or merges a
checkpoint imports it, and so do the GraphQL documents of ``webui/api.js``: a
list field added to the registry appears in the web UI with nothing else
changed.
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response

from ..domain.types import CONTENT_LIST_FIELDS

URL = "/checkpoint-fields.js"


def module_text() -> str:
    """The module: ``LIST_FIELDS``, in display order (the text fields, title,
    objective and summary, each have a place of their own in the UI)."""
    lists = [
        {
            "name": f.name,  # the GraphQL field
            "label": f.label,
            "items": f.item_name,  # the field of its items with ids
            "member": f.member,  # its CheckpointListField value
            "done": f.done,  # the word for ticking an item off, or null
        }
        for f in CONTENT_LIST_FIELDS
    ]
    return (
        "// The checkpoint's fields, written by the server from its registry\n"
        "// (CONTENT_FIELDS in api/domain/types.py): the web UI's one list of them.\n"
        f"export const LIST_FIELDS = {json.dumps(lists, indent=1)};\n"
    )


async def checkpoint_fields(_request: Request) -> Response:
    return Response(module_text(), media_type="text/javascript; charset=utf-8")
