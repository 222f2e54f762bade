"""The executor's fast path for plain leaf fields answers exactly what graphql-core would."""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

import pytest
import strawberry

from api.graphql.core.execution import PlainFieldsExecutor, plain_leaf
from api.graphql.schema import build_schema


@strawberry.enum
class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@strawberry.type
class Item:
    name: str
    note: str | None
    count: int
    colour: Colour
    at: datetime
    broken: str  # set to None below: a null for a non-null field
    wrong: int  # set to a string below: a value the scalar refuses

    @strawberry.field
    def shout(self) -> str:
        return self.name.upper()


def _items() -> list[Item]:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    good = Item(name="a", note=None, count=1, colour=Colour.RED, at=at, broken="x", wrong=1)
    bad = Item(name="b", note="n", count=2, colour=Colour.BLUE, at=at, broken=None, wrong="z")  # type: ignore[arg-type]
    return [good, bad]


@strawberry.type
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return _items()

    @strawberry.field
    def maybe(self) -> list[Item | None]:
        return list(_items())


def _schema(executor: Any) -> strawberry.Schema:
    return strawberry.Schema(query=Query, execution_context_class=executor)


@pytest.mark.parametrize(
    "query",
    [
        "{ items { name note count colour at shout __typename } }",
        "{ items { n: name name ...F } } fragment F on Item { count at }",
        "{ maybe { name broken count } }",  # the non-null error nulls the item
        "{ maybe { name wrong } }",  # the scalar's refusal, located
        "{ items { name broken } }",  # propagates to the non-null list
        "{ items { name @skip(if: true) count @include(if: false) colour } }",
    ],
)
async def test_the_same_answer_and_errors_as_graphql_core(query: str) -> None:
    expected = await _schema(None).execute(query)
    found = await _schema(PlainFieldsExecutor).execute(query)
    assert found.data == expected.data
    assert [(e.message, e.path, e.locations) for e in found.errors or []] == [
        (e.message, e.path, e.locations) for e in expected.errors or []
    ]
    # key order is the selection's order, as graphql-core answers
    assert repr(found.data) == repr(expected.data)


def test_the_fields_read_in_bulk_take_the_fast_path() -> None:
    # If a Strawberry release changes how it resolves a plain field, the fast
    # path silently stops applying: this notices.
    schema = build_schema()._schema  # type: ignore[attr-defined]

    def plain(type_name: str, field: str) -> bool:
        return plain_leaf(schema.get_type(type_name).fields[field]) is not None

    assert all(
        plain(t, f)
        for t, f in [
            ("Turn", "content"),
            ("Turn", "role"),
            ("Turn", "sequenceNumber"),
            ("Turn", "createdAt"),
            ("Checkpoint", "title"),
            ("LineageNode", "id"),
            ("LineageNode", "parentId"),
            ("LineageNode", "createdAt"),
        ]
    )
    # a resolver, an object, the relay id: the ordinary path
    assert not any(
        plain(t, f)
        for t, f in [
            ("Turn", "contentHtml"),
            ("Turn", "usage"),
            ("Turn", "id"),
            ("Checkpoint", "parent"),
            ("Checkpoint", "shortHash"),
        ]
    )
