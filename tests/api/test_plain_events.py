"""Subscription events read directly answer exactly what graphql-core would."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Annotated, Any

import pytest
import strawberry
from strawberry.extensions import MaskErrors, SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.types.execution import StreamExecutionResult

from api.graphql.core.execution import PlainFieldsExecutor
from api.graphql.core.subscription_events import PlainEventsExecutor, PlainStreamResults


@strawberry.type
class Piece:
    text: str
    note: str | None
    count: int

    @strawberry.field
    def shout(self) -> str:
        return self.text.upper()

    @strawberry.field
    def suffixed(self, suffix: str = "!") -> str:
        return self.text + suffix


@strawberry.type
class Inner:
    label: str


@strawberry.type
class Done:
    inner: Inner
    total: int


@strawberry.type
class Other:
    text: str


class OddPiece(Piece):
    """A subclass instance: not the class the plan was made for."""


Event = Annotated[Piece | Done | Other, strawberry.union("Event")]


def _events() -> list[Any]:
    return [
        Piece(text="a", note=None, count=1),
        Piece(text="b", note="n", count=2),
        Piece(text=None, note=None, count=3),  # type: ignore[arg-type]  # a null for String!
        Piece(text="c", note=None, count="x"),  # type: ignore[arg-type]  # Int refuses it
        OddPiece(text="d", note=None, count=4),
        strawberry.cast(Other, Piece(text="e", note=None, count=5)),
        Done(inner=Inner(label="i"), total=6),
    ]


@strawberry.type
class Query:
    ok: bool = True


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def events(self, first: int = 0) -> AsyncGenerator[Event, None]:
        for event in _events()[first:]:
            yield event


def _schema(executor: Any) -> strawberry.Schema:
    return strawberry.Schema(
        query=Query, subscription=Subscription, execution_context_class=executor
    )


async def _answers(executor: Any, query: str, variables: dict[str, Any]) -> list[Any]:
    stream = await _schema(executor).subscribe(query, variable_values=variables)
    answers = []
    async for result in stream:  # type: ignore[union-attr]
        answers.append(
            (
                repr(result.data),  # key order too
                [(e.message, e.path, e.locations) for e in result.errors or []],
            )
        )
    return answers


QUERIES = [
    "subscription { events { __typename ... on Piece { text } } }",
    "subscription { events { ... on Piece { t: text text count note __typename n: __typename } "
    "... on Done { total } ... on Other { text } } }",
    "subscription { events { ...P } } fragment P on Piece { count text }",
    "subscription($s: Boolean!) { events { ... on Piece { text @skip(if: $s) "
    "count @include(if: $s) note } } }",
    "subscription { e: events(first: 1) { ... on Piece { shout text } } }",
    # not plain: a method with an argument, an object with a sub-selection
    'subscription { events { ... on Piece { text suffixed(suffix: "?") } } }',
    "subscription { events { ... on Done { inner { label } total } ... on Piece { text } } }",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("skip", [True, False])
async def test_the_same_events_and_errors_as_graphql_core(query: str, skip: bool) -> None:
    variables = {"s": skip} if "$s" in query else {}
    expected = await _answers(None, query, variables)
    assert len(expected) == len(_events()) - (1 if "first: 1" in query else 0)
    assert await _answers(PlainEventsExecutor, query, variables) == expected


async def test_plain_events_are_read_without_an_execution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    executed: list[Any] = []
    ordinary = PlainFieldsExecutor.execute_operation

    def counted(self: PlainFieldsExecutor, serially: bool | None = None) -> Any:
        executed.append(type(self.root_value).__name__)
        return ordinary(self, serially)

    monkeypatch.setattr(PlainFieldsExecutor, "execute_operation", counted)
    query = "subscription { events { __typename ... on Piece { text count } } }"
    answers = await _answers(PlainEventsExecutor, query, {})
    assert answers[:2] == [
        ("{'events': {'__typename': 'Piece', 'text': 'a', 'count': 1}}", []),
        ("{'events': {'__typename': 'Piece', 'text': 'b', 'count': 2}}", []),
    ]
    # Only the events that are not plain: the null and the refused value
    # (errors), the subclass and the cast. Done (only __typename selected) is
    # read directly too.
    assert executed == ["Piece", "Piece", "OddPiece", "Piece"]


async def test_plain_events_need_no_copy_of_the_executor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copied: list[str] = []
    ordinary = PlainFieldsExecutor.build_per_event_executor

    def counted(self: PlainFieldsExecutor, payload: Any) -> Any:
        copied.append(type(payload).__name__)
        return ordinary(self, payload)

    monkeypatch.setattr(PlainFieldsExecutor, "build_per_event_executor", counted)
    query = "subscription { events { __typename ... on Piece { text count } } }"
    answers = await _answers(PlainEventsExecutor, query, {})
    assert len(answers) == len(_events())
    # graphql-core's per-event executor (a copy of the subscription's) only for
    # the events that take its path, as above.
    assert copied == ["Piece", "Piece", "OddPiece", "Piece"]


# --- Strawberry's per-result work (StreamResultsRunner, PlainStreamResults) ---------------


class Numbered(SchemaExtension):
    """Results of its own, different for each result: asked for every one."""

    def __init__(self) -> None:
        self.asked = 0

    def get_results(self) -> dict[str, Any]:
        self.asked += 1
        return {"asked": self.asked}


class LateNumbered(Numbered):
    async def get_results(self) -> dict[str, Any]:  # type: ignore[override]
        return {"late": super().get_results()["asked"]}


class Stamped(SchemaExtension):
    """A stream-result hook of its own: every result must go through it."""

    def on_stream_result(self, result: StreamExecutionResult) -> Any:
        if result.data is not None:
            result.data = {**result.data, "stamped": True}
        yield


class Smriti(PlainStreamResults, strawberry.Schema):
    pass


def _stream_schema(fast: bool, extensions: list[Any]) -> strawberry.Schema:
    kind = Smriti if fast else strawberry.Schema
    return kind(
        query=Query,
        subscription=Subscription,
        execution_context_class=PlainEventsExecutor,
        extensions=extensions,
    )


async def _results(schema: strawberry.Schema, query: str, variables: dict[str, Any]) -> list[Any]:
    stream = await schema.subscribe(query, variable_values=variables)
    results = []
    async for result in stream:  # type: ignore[union-attr]
        results.append(
            (
                repr(result.data),
                [(e.message, e.path, e.extensions) for e in result.errors or []],
                result.extensions,
            )
        )
    return results


EXTENSION_SETS = [
    [MaskErrors],
    [MaskErrors, Numbered, LateNumbered],
    [MaskErrors, Stamped, Numbered],
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("extensions", EXTENSION_SETS)
async def test_stream_results_are_strawberrys(query: str, extensions: list[Any]) -> None:
    variables = {"s": False} if "$s" in query else {}
    expected = await _results(_stream_schema(False, extensions), query, variables)
    assert len(expected) == len(_events()) - (1 if "first: 1" in query else 0)
    assert await _results(_stream_schema(True, extensions), query, variables) == expected


async def test_stream_results_exactly() -> None:
    query = "subscription { events { __typename ... on Piece { text count } } }"
    schema = _stream_schema(True, [MaskErrors, Numbered])
    results = await _results(schema, query, {})
    assert results[:2] == [
        ("{'events': {'__typename': 'Piece', 'text': 'a', 'count': 1}}", [], {"asked": 1}),
        ("{'events': {'__typename': 'Piece', 'text': 'b', 'count': 2}}", [], {"asked": 2}),
    ]
    # the null for String! and the value Int refuses: masked as before
    assert results[2][1] == [("Unexpected error.", ["events", "text"], {})]
    assert results[3][1] == [("Unexpected error.", ["events", "count"], {})]
    assert [extensions for _, _, extensions in results] == [{"asked": n} for n in range(1, 8)]


@pytest.mark.parametrize(
    ("extensions", "hooked"),
    [
        # Only the answers of the ordinary path (as executed, above): the two
        # errors (events null), the subclass and the cast. The plain answers
        # (a, b, Done's __typename) enter no hooks.
        ([MaskErrors, Numbered], ["-", "-", "Piece", "Other"]),
        # A hook of its own: every result enters it.
        ([MaskErrors, Stamped], ["Piece", "Piece", "-", "-", "Piece", "Other", "Done"]),
    ],
)
async def test_plain_results_enter_no_inert_hooks(
    monkeypatch: pytest.MonkeyPatch, extensions: list[Any], hooked: list[str]
) -> None:
    entered: list[str] = []
    ordinary = SchemaExtensionsRunner.on_stream_result

    def counted(self: SchemaExtensionsRunner, result: StreamExecutionResult) -> Any:
        data = result.data or {}
        entered.append(data["events"]["__typename"] if data.get("events") else "-")
        return ordinary(self, result)

    monkeypatch.setattr(SchemaExtensionsRunner, "on_stream_result", counted)
    query = "subscription { events { __typename ... on Piece { text count } } }"
    await _results(_stream_schema(True, extensions), query, {})
    assert entered == hooked
