"""The executor's fast path for plain leaf fields answers exactly what graphql-core would."""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

import pytest
import strawberry
from graphql import GraphQLObjectType
from strawberry import relay

from api.graphql.core.execution import PlainFieldsExecutor, direct_resolvers, plain_leaf
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
    tags: list[str]  # holds a null below: a null item where none may be
    loose: list[str | None] | None
    colours: list[Colour]

    @strawberry.field
    def shout(self) -> str:
        return self.name.upper()


def _items() -> list[Item]:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    good = Item(
        name="a",
        note=None,
        count=1,
        colour=Colour.RED,
        at=at,
        broken="x",
        wrong=1,
        tags=["x", "y"],
        loose=None,
        colours=[Colour.BLUE, Colour.RED],
    )
    bad = Item(
        name="b",
        note="n",
        count=2,
        colour=Colour.BLUE,
        at=at,
        broken=None,  # type: ignore[arg-type]
        wrong="z",  # type: ignore[arg-type]
        tags=["z", None],  # type: ignore[list-item]
        loose=["a", None],
        colours=[],
    )
    return [good, bad]


@strawberry.type
class Pair:
    """An object holding objects in plain attributes, as an edge holds its node."""

    label: str
    item: Item  # None in the "broken" pair: a null for a non-null field
    maybe_item: Item | None


def _pairs() -> list[Pair]:
    good, bad = _items()
    return [Pair(label="1", item=good, maybe_item=None), Pair(label="2", item=bad, maybe_item=good)]


@strawberry.type
class Thing(relay.Node):
    key: relay.NodeID[int]
    label: str

    @strawberry.field
    def upper(self) -> str:
        return self.label.upper()

    @strawberry.field
    def suffixed(self, suffix: str = "!") -> str:
        return self.label + suffix

    @strawberry.field
    def named(self, info: strawberry.Info) -> str:
        return f"{info.field_name}:{self.label}"

    @strawberry.field
    def broken(self) -> str:
        raise ValueError("no")

    @strawberry.field
    async def later(self, info: strawberry.Info) -> str:
        return f"{info.path.key}:{self.label}"

    @strawberry.field
    def itself(self) -> Thing | None:
        return self if self.key == 1 else None


@strawberry.type
class Holder:
    thing: Thing

    @strawberry.field
    @staticmethod
    def echo(root: Holder, info: strawberry.Info) -> str:
        return f"{root.thing.label}@{info.field_name}"


class OddThing(Thing):
    """A subclass instance: not the type the fast path knows (the ordinary path)."""


@strawberry.type
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return _items()

    @strawberry.field
    def things(self) -> list[Thing]:
        return [Thing(key=1, label="a"), OddThing(key=22, label="b")]

    @strawberry.field
    def pairs(self) -> list[Pair]:
        return _pairs()

    @strawberry.field
    def broken_pairs(self) -> list[Pair]:
        return [*_pairs(), Pair(label="3", item=None, maybe_item=None)]  # type: ignore[arg-type]

    @strawberry.field
    def holder(self) -> Holder:
        return Holder(thing=Thing(key=3, label="h"))

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
        # relay ids, methods (only self; with an argument; with info), a raising method
        "{ things { id key: id upper suffixed named } }",
        '{ things { suffixed(suffix: "?") id } }',
        "{ things { id broken } }",
        # every field plain: the list in one loop (or, with an odd item, graphql-core's)
        "{ items { name note count colour at shout } }",
        "{ things { id label upper } }",
        "{ maybe { name count } }",
        "{ maybe { count wrong } }",
        # lists of scalars and enums
        "{ items { name loose colours } }",
        "{ maybe { name tags } }",
        "{ items { tags } }",
        # objects in plain attributes (an edge's node), all plain inside or not
        "{ pairs { label item { name count } maybeItem { colour } } }",
        "{ pairs { item { name broken } } }",
        "{ pairs { item { name __typename } } }",
        "{ brokenPairs { label item { name } } }",
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
        parent = schema.get_type(type_name)
        return plain_leaf(parent.fields[field], parent) is not None

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
            # the relay id of our nodes, a method taking only self
            ("Turn", "id"),
            ("Checkpoint", "id"),
            ("Space", "id"),
            ("Session", "id"),
            ("Checkpoint", "shortHash"),
            ("Checkpoint", "decisions"),  # a list of strings
        ]
    )
    # a resolver taking info or arguments, an object, a list: the ordinary path
    assert not any(
        plain(t, f)
        for t, f in [
            ("Turn", "contentHtml"),
            ("Turn", "usage"),
            ("Checkpoint", "parent"),
            ("Checkpoint", "decisionItems"),
            ("Space", "lineage"),
        ]
    )


def test_which_fields_of_a_node_are_read_directly() -> None:
    schema = _schema(PlainFieldsExecutor)._schema  # type: ignore[attr-defined]
    thing = schema.get_type("Thing")
    direct = {name for name, field in thing.fields.items() if plain_leaf(field, thing)}
    assert direct == {"id", "label", "upper", "broken"}
    item = schema.get_type("Item")
    assert plain_leaf(item.fields["tags"], item) is not None
    assert plain_leaf(item.fields["loose"], item) is not None
    # the relay id is read the way GlobalID spells it; a subclass instance is not
    read = plain_leaf(thing.fields["id"], thing)
    assert read is not None
    assert read[0](Thing(key=7, label="x")) == "VGhpbmc6Nw=="  # base64("Thing:7")
    with pytest.raises(TypeError):
        read[0](OddThing(key=7, label="x"))


async def test_a_list_of_plain_objects_is_completed_in_one_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = await _schema(None).execute("{ items { name note count colour at shout } }")
    completed_one_by_one: list[object] = []
    original = PlainFieldsExecutor.complete_list_item_value

    def counting(self: PlainFieldsExecutor, item: object, *args: Any) -> bool:
        completed_one_by_one.append(item)
        return original(self, item, *args)

    monkeypatch.setattr(PlainFieldsExecutor, "complete_list_item_value", counting)
    found = await _schema(PlainFieldsExecutor).execute(
        "{ items { name note count colour at shout } }"
    )
    assert found.errors is None
    assert repr(found.data) == repr(expected.data)
    assert completed_one_by_one == []
    pairs = "{ pairs { label item { name count } maybeItem { colour } } }"
    found = await _schema(PlainFieldsExecutor).execute(pairs)
    assert found.errors is None
    assert found.data == {
        "pairs": [
            {"label": "1", "item": {"name": "a", "count": 1}, "maybeItem": None},
            {"label": "2", "item": {"name": "b", "count": 2}, "maybeItem": {"colour": "RED"}},
        ]
    }
    assert completed_one_by_one == []
    # __typename is plain too
    await _schema(PlainFieldsExecutor).execute("{ items { name __typename } }")
    assert completed_one_by_one == []
    # an irregular item (a null for a non-null field) alone by graphql-core's path
    found = await _schema(PlainFieldsExecutor).execute("{ maybe { name broken } }")
    assert [item.name for item in completed_one_by_one] == ["b"]  # type: ignore[attr-defined]
    assert found.data == {"maybe": [{"name": "a", "broken": "x"}, None]}
    # a field that is not plain (a resolver taking info): item by item, as graphql-core does
    completed_one_by_one.clear()
    await _schema(PlainFieldsExecutor).execute("{ things { id named } }")
    assert len(completed_one_by_one) == 2


DIRECT = "{ things { later named itself { id later } } holder { echo thing { later } } }"


async def test_resolvers_called_directly_answer_as_strawberry_does() -> None:
    expected = await _schema(PlainFieldsExecutor).execute(DIRECT)
    schema = _schema(PlainFieldsExecutor)
    # methods with info, async ones, one returning an object, a root parameter
    assert direct_resolvers(schema) == 13
    direct = {
        f"{t.name}.{name}"
        for t in schema._schema.type_map.values()  # type: ignore[attr-defined]
        if isinstance(t, GraphQLObjectType) and not t.name.startswith("__")
        for name, field in t.fields.items()
        if getattr(field.resolve, "__name__", "").startswith("direct_")
    }
    assert direct == {
        "Query.items",
        "Query.things",
        "Query.holder",
        "Query.maybe",
        "Query.pairs",
        "Query.brokenPairs",
        "Item.shout",
        "Thing.upper",
        "Thing.named",
        "Thing.broken",
        "Thing.later",
        "Thing.itself",
        "Holder.echo",
    }
    assert schema._schema.get_type("Thing").fields["later"].resolve.__name__ == "direct_later"  # type: ignore[attr-defined,union-attr]
    # a resolver with an argument keeps Strawberry's chain
    suffixed = schema._schema.get_type("Thing").fields["suffixed"].resolve  # type: ignore[attr-defined,union-attr]
    assert not suffixed.__name__.startswith("direct_")
    found = await schema.execute(DIRECT)
    assert found.data == expected.data
    assert found.data is not None
    assert found.data["holder"] == {"echo": "h@echo", "thing": {"later": "later:h"}}
    assert [(e.message, e.path) for e in found.errors or []] == [
        (e.message, e.path) for e in expected.errors or []
    ]
