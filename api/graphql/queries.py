"""Every query of DESIGN §8.

What cannot be found (an unknown id, a malformed one, another owner's) is
null on every field, never a top-level error (``mutations.base.MissingIsNull``
answers a use case's NotFound with null); the one documented exception is
`checkpointByHash`'s AMBIGUOUS_HASH, which is a question for the caller.
"""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry import relay

from api.graphql import ids
from api.graphql.context import Info
from api.graphql.mutations.chat import context_override
from api.graphql.pagination import SESSIONS, SPACES, connection, page_request
from api.graphql.search import search as search_resolver
from api.graphql.types.checkpoint import Checkpoint
from api.graphql.types.compare import Comparison
from api.graphql.types.context_plan import ContextInput, ContextPlan
from api.graphql.types.providers import Provider, Providers
from api.graphql.types.session import Session
from api.graphql.types.space import Space
from api.graphql.types.turn import Turn
from api.services import chat, model_access, reading
from api.services import checkpoints as checkpoint_service

NODE_TYPES: dict[str, type[Space | Session | Checkpoint | Turn]] = {
    "Space": Space,
    "Session": Session,
    "Checkpoint": Checkpoint,
    "Turn": Turn,
}


@strawberry.input(description="What contextPreview should preview.")
class ContextPreviewInput:
    session_id: strawberry.ID = strawberry.field(description="The session.")
    content: str = strawberry.field(
        description="The message that would be sent (may be empty; at most 1 MiB by default)."
    )
    model: str | None = strawberry.field(
        default=None, description='"provider/model" (default: the session\'s model).'
    )
    context: ContextInput | None = strawberry.field(
        default=None, description="An explicit context, as sendMessage takes it."
    )


@strawberry.type(description="Everything you can read.")
class Query:
    search = strawberry.field(
        resolver=search_resolver,
        description="Full-text search across your turns, checkpoints, sessions and spaces: "
        "the 1,000 newest matches, best first (add a word to reach older text).",
    )

    @strawberry.field(description="Any object by its global id.")
    async def node(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="A global id.")],
    ) -> relay.Node | None:
        parsed = ids.parse_id(id)
        node_type = NODE_TYPES.get(parsed[0]) if parsed else None
        if parsed is None or node_type is None:
            return None
        found = await node_type.resolve_nodes(info=info, node_ids=[str(parsed[1])], required=False)
        node: relay.Node | None = found[0]
        return node

    @strawberry.field(description="The spaces you are a member of, oldest first.")
    async def spaces(
        self,
        info: Info,
        first: Annotated[
            int | None, strawberry.argument(description="How many (at most 100).")
        ] = None,
        after: Annotated[
            str | None, strawberry.argument(description="A cursor from a previous page.")
        ] = None,
    ) -> relay.Connection[Space]:
        cap = info.context.services.settings.max_page_size
        page = await reading.spaces_page(
            info.context.actor, page_request(scope=SPACES, first=first, after=after, cap=cap)
        )
        return connection(page, Space.from_domain, lambda s: s.id, scope=SPACES)

    @strawberry.field(
        description="Your sessions, oldest first: all, or those in no space; with `spaceId`, "
        "that space's sessions you may read (yours and those shared with it)."
    )
    async def sessions(
        self,
        info: Info,
        first: Annotated[
            int | None, strawberry.argument(description="How many (at most 100).")
        ] = None,
        after: Annotated[
            str | None, strawberry.argument(description="A cursor from a previous page.")
        ] = None,
        space_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only this space's sessions.")
        ] = None,
        unattached: Annotated[
            bool, strawberry.argument(description="Only sessions in no space.")
        ] = False,
    ) -> relay.Connection[Session]:
        cap = info.context.services.settings.max_page_size
        request = page_request(scope=SESSIONS, first=first, after=after, cap=cap)
        # A malformed space id names no space, like an unknown one: no sessions
        # (key 0 is never a row's id).
        space = None if space_id is None else (ids.key_or_none(space_id, "Space") or 0)
        page = await reading.sessions_page(
            info.context.actor, space, request, only_unattached=unattached
        )
        return connection(page, Session.from_domain, lambda s: s.id, scope=SESSIONS)

    @strawberry.field(description="A space by id.")
    async def space(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The space's id.")],
    ) -> Space | None:
        key = ids.key_or_none(id, "Space")
        found = await info.context.loaders.space_by_id.load(key) if key is not None else None
        return Space.from_domain(found) if found else None

    @strawberry.field(description="A session by id.")
    async def session(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The session's id.")],
    ) -> Session | None:
        key = ids.key_or_none(id, "Session")
        found = await info.context.loaders.session_by_id.load(key) if key is not None else None
        return Session.from_domain(found) if found else None

    @strawberry.field(description="A checkpoint by id.")
    async def checkpoint(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The checkpoint's id.")],
    ) -> Checkpoint | None:
        key = ids.key_or_none(id, "Checkpoint")
        found = await info.context.loaders.checkpoint_by_id.load(key) if key is not None else None
        return Checkpoint.from_domain(found) if found else None

    @strawberry.field(
        description="A checkpoint of a space by its hash or any unique prefix of 4+ hex "
        "characters; null when there is none. A prefix that matches several is an error "
        "coded AMBIGUOUS_HASH."
    )
    async def checkpoint_by_hash(
        self,
        info: Info,
        space_id: Annotated[strawberry.ID, strawberry.argument(description="The space.")],
        hash: Annotated[str, strawberry.argument(description="The hash or a prefix (4+).")],
    ) -> Checkpoint | None:
        space = ids.key_or_none(space_id, "Space")
        if space is None:
            return None
        found = await checkpoint_service.by_hash(info.context.actor, space, hash)
        return Checkpoint.from_domain(found) if found else None

    @strawberry.field(
        description="The configured providers, the models you may use and the defaults."
    )
    async def providers(self, info: Info) -> Providers:
        view = await model_access.providers(info.context.actor, info.context.services.registry)
        return Providers(
            providers=[
                Provider(
                    name=p.name,
                    available=p.available,
                    reason=p.reason,
                    models=[f"{p.name}/{m}" for m in p.models],
                )
                for p in view.providers
            ],
            chat_default=view.chat_default,
            background=view.background,
            admins_only=view.admins_only,
        )

    @strawberry.field(
        description="Exactly what the model would receive if this message were sent now; "
        "null when the session (or a checkpoint or space the context names) is not found."
    )
    async def context_preview(
        self,
        info: Info,
        input: Annotated[
            ContextPreviewInput, strawberry.argument(description="The contextPreview arguments.")
        ],
    ) -> ContextPlan | None:
        preview = await chat.preview(
            info.context.services,
            info.context.actor,
            ids.decode(input.session_id, "Session", field="sessionId"),
            content=input.content,
            model=input.model,
            override=context_override(input.context),
        )
        return ContextPlan.build(preview.plan, preview.messages, preview.model.name)

    @strawberry.field(
        description="Compare the list fields of two checkpoints; null when either is not found."
    )
    async def compare_checkpoints(
        self,
        info: Info,
        a: Annotated[strawberry.ID, strawberry.argument(description="The first checkpoint.")],
        b: Annotated[strawberry.ID, strawberry.argument(description="The second checkpoint.")],
    ) -> Comparison | None:
        comparison = await checkpoint_service.compare(
            info.context.actor,
            ids.decode(a, "Checkpoint", field="a"),
            ids.decode(b, "Checkpoint", field="b"),
        )
        return Comparison.from_domain(comparison)
