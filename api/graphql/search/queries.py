"""The search query: full-text hits across turns, checkpoints, sessions and spaces.

Hits are ranked, so their cursors are positions in the ranking ("the 20th
hit"), not keys: a page after new writes may repeat or skip a hit, as any
ranked search does.
"""

from __future__ import annotations

import enum
import html
from typing import Annotated

import strawberry
from strawberry import relay

from ...domain import types as domain
from ...domain.search_query import Kind, Snippet
from ...services import search as search_service
from ..chat.turns import Turn
from ..checkpoints.types import Checkpoint
from ..context import Info
from ..core import ids
from ..core.pagination import PageCursor, PageSize, cursor, page_request
from ..sessions.types import Session
from ..spaces.types import Space

SEARCH = "search"


@strawberry.enum(description="What a search hit is.")
class SearchKind(enum.Enum):
    TURN = strawberry.enum_value("TURN", description="A message of a session (its content).")
    CHECKPOINT = strawberry.enum_value(
        "CHECKPOINT",
        description="A checkpoint (title, objective, summary and list items).",
    )
    SESSION = strawberry.enum_value("SESSION", description="A session (its title).")
    SPACE = strawberry.enum_value("SPACE", description="A space (its name and description).")


SearchResult = Annotated[
    Turn | Checkpoint | Session | Space,
    strawberry.union("SearchResult", description="The object a search hit found."),
]


@strawberry.type(description="One search hit.")
class SearchHitEdge:
    cursor: str = strawberry.field(description="Pass as `after` to read the hits after this one.")
    node: SearchResult = strawberry.field(description="The object found.")
    kind: SearchKind = strawberry.field(description="What the object is.")
    snippet: str = strawberry.field(
        description="Safe HTML: the matching part of the text, escaped, with the matching "
        "words in <mark>…</mark> (no other tags); … where the text was cut."
    )
    rank: float = strawberry.field(
        description="Relevance: higher is better. Comparable within one search only (the "
        "scale depends on the database engine)."
    )


@strawberry.type(description="A page of search hits, best first.")
class SearchHitConnection:
    edges: list[SearchHitEdge] = strawberry.field(description="The hits of this page.")
    page_info: relay.PageInfo = strawberry.field(description="Where this page is.")


def snippet_html(snippet: Snippet) -> str:
    """Escaped text with each match in <mark>, and … where the text was cut."""
    pieces = ["…" if snippet.cut_before else ""]
    position = 0
    for start, end in snippet.marks:
        pieces += [
            html.escape(snippet.text[position:start]),
            "<mark>",
            html.escape(snippet.text[start:end]),
            "</mark>",
        ]
        position = end
    pieces += [html.escape(snippet.text[position:]), "…" if snippet.cut_after else ""]
    return "".join(pieces)


def _node(found: domain.Turn | domain.Checkpoint | domain.Session | domain.Space) -> SearchResult:
    if isinstance(found, domain.Turn):
        return Turn.from_domain(found)
    if isinstance(found, domain.Checkpoint):
        return Checkpoint.from_domain(found)
    if isinstance(found, domain.Session):
        return Session.from_domain(found)
    return Space.from_domain(found)


async def search(
    info: Info,
    query: Annotated[
        str,
        strawberry.argument(
            description='Words in any order (all required), "a phrase" in quotes, word* for '
            "a prefix; other punctuation is ignored. At most 500 characters and 20 terms."
        ),
    ],
    space_id: Annotated[
        strawberry.ID | None,
        strawberry.argument(description="Only this space: its checkpoints, sessions and turns."),
    ] = None,
    kinds: Annotated[
        list[SearchKind] | None,
        strawberry.argument(description="Only these kinds of object (default: all)."),
    ] = None,
    first: PageSize = None,
    after: PageCursor = None,
) -> SearchHitConnection:
    cap = info.context.services.settings.max_page_size
    request = page_request(scope=SEARCH, first=first, after=after, cap=cap)
    size = request.first if request.first is not None else cap
    offset = request.after or 0
    # A malformed space id names no space, like an unknown one: no hits.
    space = None if space_id is None else (ids.key_or_none(space_id, "Space") or 0)
    found = await search_service.search(
        info.context.actor,
        query,
        space_id=space,
        kinds=None if kinds is None else [Kind[k.name] for k in kinds],
        first=size,
        offset=offset,
    )
    edges = [
        SearchHitEdge(
            cursor=cursor(SEARCH, offset + position),
            node=_node(hit.found),
            kind=SearchKind[hit.kind.name],
            snippet=snippet_html(hit.snippet),
            rank=hit.rank,
        )
        for position, hit in enumerate(found.hits, start=1)
    ]
    return SearchHitConnection(
        edges=edges,
        page_info=relay.PageInfo(
            has_next_page=found.has_next,
            has_previous_page=offset > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
    )


@strawberry.type
class SearchQuery:
    search = strawberry.field(
        resolver=search,
        description="Full-text search across your turns, checkpoints, sessions and spaces: "
        "the 1,000 newest matches, best first (add a word to reach older text).",
    )
