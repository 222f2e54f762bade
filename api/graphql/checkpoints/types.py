"""The Checkpoint node: an immutable, structured record of what was concluded."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry import relay
from strawberry.dataloader import DataLoader

from ...domain import types as domain
from ...domain.identity import item_ids
from ...errors import InputError
from ...services import reading
from ..chat.turns import Turn
from ..context import Info
from ..core.common import TurnRange
from ..core.execution import reads_context_only
from ..loaders import MISSING, held
from ..members.types import Author, author
from .fields import Made, last_list_attr, list_fields

if TYPE_CHECKING:
    from ..sessions.types import Session
    from ..spaces.types import Space

SessionRef = Annotated["Session", strawberry.lazy("..sessions.types")]
SpaceRef = Annotated["Space", strawberry.lazy("..spaces.types")]

MAX_ANCESTORS = 1000

_ID = (
    "The item's identity: an opaque string the server gives a new item, kept while the "
    "item is carried forward, edited, forked, merged, exported and imported."
)


@strawberry.type(description="One item of a checkpoint's list, with its identity.")
class CheckpointItem:
    id: str = strawberry.field(description=_ID)
    text: str = strawberry.field(description="The item.")


@strawberry.input(
    description="One item of a list to save: with the `id` of the item of the checkpoint it "
    "continues (kept even when the text is edited), or without one for a new item."
)
class CheckpointItemInput:
    id: str | None = strawberry.field(
        default=None,
        description="The id of an item of the checkpoint this one continues (the branch "
        "head: `carried` in draftCheckpoint); an id it does not have is refused (INVALID). "
        "Null: a new item, which gets a new id.",
    )
    text: str = strawberry.field(description="The item's text.")


def items_of(ids: domain.ItemIds, content: domain.CheckpointContent | object) -> dict[str, Any]:
    """Each list field's items with their ids, by items attribute."""
    return {
        f.item_attr: [
            CheckpointItem(id=i, text=t)
            for i, t in zip(getattr(ids, f.attr), getattr(content, f.attr), strict=True)
        ]
        for f in domain.CONTENT_LIST_FIELDS
    }


def _items_resolver(attr: str) -> Callable[[Checkpoint], list[CheckpointItem]]:
    def resolve(root: Checkpoint) -> list[CheckpointItem]:
        return root._items(attr)

    return resolve


def _value_field(f: domain.ContentField) -> Made:
    return f.attr, list[str], strawberry.field(description=f.about)


def _items_field(f: domain.ContentField) -> Made:
    # The items with their ids are made when asked (``_items``): a checkpoint
    # saved before ids existed derives them (a SHA-256 per item), which cost
    # more than the rest of the node in a lineage page that never shows them.
    return (
        f.item_attr,
        list[CheckpointItem],
        strawberry.field(
            resolver=_items_resolver(f.attr),
            description=f"`{f.name}` with each item's identity (the same order).",
        ),
    )


@strawberry.type(description="An immutable snapshot of what a conversation decided and understood.")
@list_fields(after=last_list_attr(), make=_items_field)
@list_fields(after="summary", make=_value_field)
class Checkpoint(relay.Node):
    id: relay.NodeID[int]
    hash: str = strawberry.field(
        description="SHA-256 over the content, space, parent's hash and creation time (and, "
        "for a merge, the merge parent's hash)."
    )
    branch_name: str = strawberry.field(description="The branch it was saved on.")
    title: str = strawberry.field(description="A one-line name (the seed's message).")
    objective: str = strawberry.field(description="What the conversation is trying to achieve.")
    summary: str = strawberry.field(description="What was understood so far.")
    # Here: each list field (``list_fields``), then each one's items with ids.
    author_agent: str = strawberry.field(description='Who saved it ("user" or an agent name).')
    source_turn_range: TurnRange | None = strawberry.field(
        description="The turns of the source session it was made from."
    )
    base_sequence: int = strawberry.field(
        description="The source session's last sequence number when it was saved: it sits "
        "after that turn in the session's notebook and exports (0: before any turn)."
    )
    created_at: datetime = strawberry.field(description="When it was saved (part of the hash).")
    domain_checkpoint: strawberry.Private[domain.Checkpoint]

    @classmethod
    def from_domain(cls, checkpoint: domain.Checkpoint) -> Checkpoint:
        content = checkpoint.content
        return cls(
            id=checkpoint.id,
            hash=checkpoint.hash,
            branch_name=checkpoint.branch_name,
            **content.columns(),
            author_agent=checkpoint.author_agent,
            source_turn_range=TurnRange.from_domain(checkpoint.source_turn_range),
            base_sequence=checkpoint.base_sequence,
            created_at=checkpoint.created_at,
            domain_checkpoint=checkpoint,
        )

    @classmethod
    async def resolve_nodes(
        cls, *, info: Info, node_ids: Iterable[str], required: bool = False
    ) -> list[Any]:
        found = await info.context.loaders.checkpoint_by_id.load_many([int(i) for i in node_ids])
        return [cls.from_domain(c) if c else None for c in found]

    def _items(self, attr: str) -> list[CheckpointItem]:
        checkpoint = self.domain_checkpoint
        texts = getattr(checkpoint.content, attr)
        ids = getattr(item_ids(checkpoint), attr)
        return [CheckpointItem(id=i, text=t) for i, t in zip(ids, texts, strict=True)]

    @strawberry.field(
        description="Who saved it, and the API token's name when it came with one (not part "
        "of the hash)."
    )
    async def author(self, info: Info) -> Author | None:
        checkpoint = self.domain_checkpoint
        user_id = checkpoint.author_id
        if user_id is None:  # saved before authorship was recorded: the space's creator
            space = await info.context.loaders.space_by_id.load(checkpoint.space_id)
            if space is None:
                return None
            user_id = space.owner_id
        return await author(info, user_id, checkpoint.author_token)

    @strawberry.field(description="The first 7 characters of the hash.")
    def short_hash(self) -> str:
        return self.hash[:7]

    @strawberry.field(description="The space it belongs to.")
    async def space(self, info: Info) -> SpaceRef:
        from ..spaces.types import Space

        found = await info.context.loaders.space_by_id.load(self.domain_checkpoint.space_id)
        assert found is not None  # checkpoints are only loaded through owned spaces
        return Space.from_domain(found)

    # Sync resolvers: a parent the request has already read (a lineage page
    # primes the loader with its checkpoints) is answered at once; another is
    # an awaitable, which graphql-core awaits as it would an async resolver's.
    @strawberry.field(description="The checkpoint this one continues (none for a root).")
    @reads_context_only
    def parent(self, info: Info) -> Checkpoint | None:
        return by_id(info, self.domain_checkpoint.parent_id)

    @strawberry.field(
        description="For a merge checkpoint, the checkpoint that was merged in (its second "
        "parent; `parent` is the head of the branch it was merged into). Null otherwise."
    )
    @reads_context_only
    def merge_parent(self, info: Info) -> Checkpoint | None:
        return by_id(info, self.domain_checkpoint.merge_parent_id)

    @strawberry.field(description="Checkpoints whose parent is this one, oldest first.")
    async def children(self, info: Info) -> list[Checkpoint]:
        found = await info.context.loaders.children_by_parent_id.load(self.id)
        prime(info, found)
        return [Checkpoint.from_domain(c) for c in found]

    @strawberry.field(
        description="Parent, grandparent, … nearest first (one recursive query). It follows "
        "`parent` only: through a merge it stays on the line the merge checkpoint continues "
        "(the branch merged into) and does not list the merged-in line (`mergeParent`), "
        "exactly as the context rules (HEAD, MOUNTED) walk it."
    )
    async def ancestors(
        self,
        info: Info,
        first: Annotated[
            int, strawberry.argument(description=f"How many (at most {MAX_ANCESTORS}).")
        ] = 10,
    ) -> list[Checkpoint]:
        if not 0 <= first <= MAX_ANCESTORS:
            raise InputError(f"first must be between 0 and {MAX_ANCESTORS}.", field="first")
        found = await reading.ancestors(info.context.actor, self.domain_checkpoint, first)
        prime(info, found)
        return [Checkpoint.from_domain(c) for c in found]

    @strawberry.field(
        description="The session it was saved from: null if since deleted, or if you may not "
        "read it (it is private to its author, or not shared with the space)."
    )
    async def source_session(self, info: Info) -> SessionRef | None:
        from ..sessions.types import Session

        session_id = self.domain_checkpoint.source_session_id
        if session_id is None:
            return None
        found = await info.context.loaders.session_by_id.load(session_id)
        return Session.from_domain(found) if found else None

    @strawberry.field(description="The turns of `sourceTurnRange`, in order (at most 100).")
    async def source_turns(self, info: Info) -> list[Turn]:
        checkpoint = self.domain_checkpoint
        span = checkpoint.source_turn_range
        if span is None or checkpoint.source_session_id is None:
            return []
        readable = await info.context.loaders.session_by_id.load(checkpoint.source_session_id)
        if readable is None:
            return []
        found = await reading.source_turns(info.context.actor, checkpoint, readable, most=100)
        return [Turn.from_domain(t) for t in found]


def prime(info: Info, found: Iterable[domain.Checkpoint]) -> None:
    """Checkpoints the request has read (the actor may read them), kept by id:
    their children's ``parent`` then needs no statement and no await."""
    info.context.loaders.checkpoints_read.update({c.id: c for c in found})


def node_of(info: Info, found: domain.Checkpoint) -> Checkpoint:
    """``Checkpoint.from_domain(found)``, made once per request and checkpoint
    (a lineage page's node is the next node's ``parent``)."""
    nodes = info.context.loaders.checkpoint_nodes
    node = nodes.get(found.id)
    if node is None or node.domain_checkpoint is not found:
        node = nodes[found.id] = Checkpoint.from_domain(found)
    return cast(Checkpoint, node)


def by_id(info: Info, checkpoint_id: int | None) -> Checkpoint | None:
    """A readable checkpoint by id, at once when the request holds it, else
    (typed as the value: graphql-core awaits it) an awaitable."""
    if checkpoint_id is None:
        return None
    loaders = info.context.loaders
    node = loaders.checkpoint_nodes.get(checkpoint_id)
    if node is not None:  # made by node_of from what the loader holds for this id
        return cast(Checkpoint, node)
    loader = loaders.checkpoint_by_id
    found = loaders.checkpoints_read.get(checkpoint_id, MISSING)
    if found is MISSING:
        found = held(loader, checkpoint_id)
    if found is MISSING:
        return cast("Checkpoint | None", _load(loader, checkpoint_id))
    return node_of(info, found) if found else None


async def _load(
    loader: DataLoader[int, domain.Checkpoint | None], checkpoint_id: int
) -> Checkpoint | None:
    found = await loader.load(checkpoint_id)
    return Checkpoint.from_domain(found) if found else None
