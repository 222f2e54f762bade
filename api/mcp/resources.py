"""Resources: the head of each space's main branch, and any checkpoint, as the
Markdown the exports write (api/domain/documents.py).

    smriti://spaces/{id}/head      the head of the space's main branch
    smriti://checkpoints/{id}      one checkpoint

Read through api/services with the actor first, as the tools are.
"""

from __future__ import annotations

import re

from ..domain.accounts import Actor
from ..domain.documents import checkpoint_markdown
from ..domain.pages import PageRequest
from ..domain.types import MAIN_BRANCH
from ..errors import InputError, NotFound
from ..services import checkpoints, reading

MARKDOWN = "text/markdown"
CHECKPOINT_TEMPLATE = "smriti://checkpoints/{id}"
_SPACE_HEAD = re.compile(r"smriti://spaces/([1-9][0-9]{0,17})/head")
_CHECKPOINT = re.compile(r"smriti://checkpoints/([1-9][0-9]{0,17})")
LISTED = 100


def head_uri(space_id: int) -> str:
    return f"smriti://spaces/{space_id}/head"


async def listed(actor: Actor) -> list[tuple[str, str]]:
    """(uri, name) of the head of each space the actor reads that has one."""
    page = await reading.spaces_page(actor, PageRequest(first=LISTED))
    heads = await reading.branches(actor, [space.id for space in page.items])
    return [
        (head_uri(space.id), f"{space.name}: head of {MAIN_BRANCH}")
        for space in page.items
        if MAIN_BRANCH in dict(heads.get(space.id, []))
    ]


async def read(actor: Actor, uri: str) -> str:
    """The Markdown of the resource ``uri`` names."""
    if found := _SPACE_HEAD.fullmatch(uri):
        space_id = int(found.group(1))
        if space_id not in await reading.spaces_by_id(actor, [space_id]):
            raise NotFound("No such space.", field="uri")
        head_id = dict((await reading.branches(actor, [space_id])).get(space_id, [])).get(
            MAIN_BRANCH
        )
        if head_id is None:
            raise NotFound("The space has no checkpoint yet.", field="uri")
        checkpoint_id = head_id
    elif found := _CHECKPOINT.fullmatch(uri):
        checkpoint_id = int(found.group(1))
    else:
        raise InputError("No such resource.", field="uri")
    checkpoint = await checkpoints.get_readable(actor, checkpoint_id, field="uri")
    parent = (
        (await reading.checkpoints_by_id(actor, [checkpoint.parent_id])).get(checkpoint.parent_id)
        if checkpoint.parent_id is not None
        else None
    )
    return checkpoint_markdown(checkpoint, parent_hash=parent.hash if parent else None)
