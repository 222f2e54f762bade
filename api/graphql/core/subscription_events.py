"""Subscription events answered without a GraphQL execution each.

graphql-core executes a subscription's selection once per event: a copy of
the executor, the root fields collected again, the root field resolved
(Strawberry's ``lambda event: event``), the union's type resolved (Strawberry
looks for a cast, then walks the union's types), the event's fields executed,
the response built. For a streamed reply that is one execution per piece of
the answer, and it cost as much as everything else Smriti does per piece.

Most events of a stream are the same small object (``StreamDelta``) with the
same plain selection (``delta``, ``__typename``). For those, this executor
works out once per subscription and event class how the answer is read — the
selection collected with the subscription's variables (fragments, aliases,
``@include``/``@skip`` as graphql-core applies them), each field a plain leaf
(``execution.plain_leaf``) or ``__typename`` — and then reads each event into
the same dictionary, in the same order, when graphql-core asks for the event's
executor: no copy of the executor is made for it, and no response built (a
plain event has no errors and no deferred work to collect). Anything else
takes graphql-core's path, which answers (or reports) it exactly as before: a
field with a resolver or a sub-selection, an event cast with
``strawberry.cast`` or of a class the union does not name directly, a type
with ``is_type_of``, a null where the schema says non-null, a value the scalar
refuses, an execution with middleware or an abort signal.

Strawberry then handles each result of a subscription (``Schema._stream``):
it asks every extension for its results, and enters every extension's
``on_stream_result`` hook around it (a context manager per result, whose hooks
are looked up anew each time). ``StreamResultsRunner`` asks only the
extensions that override ``get_results`` (the base one returns a new ``{}``),
for every result. For a plain event's answer (``PlainEventResult``: data, no
errors; converted by ``PlainStreamResults``, the schema's side) it enters no
hooks when each is either not overridden or MaskErrors' (which masks errors;
a plain answer has none). Every other result, and every result once an
extension with a hook of its own is added, takes Strawberry's path unchanged.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from graphql import (
    ExecutionResult,
    GraphQLObjectType,
    GraphQLUnionType,
    OperationType,
    get_nullable_type,
)
from graphql.execution.collect_fields import collect_fields
from strawberry.extensions import MaskErrors, SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.types import ExecutionContext
from strawberry.types import ExecutionResult as StrawberryResult
from strawberry.types.cast import get_strawberry_type_cast
from strawberry.types.execution import StreamExecutionResult
from strawberry.types.field import StrawberryField

from .execution import DEFINITION, PlainFieldsExecutor, Read, plain_leaf

TYPENAME = "__typename"

# response key of the subscription field, then each selected field's
# (response key, read, serialize, non-null)
EventPlan = tuple[str, list[tuple[str, Read, Callable[[Any], Any], bool]]]


class PlainEventsExecutor(PlainFieldsExecutor):
    """``PlainFieldsExecutor``, answering plain subscription events directly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Per subscription: event class -> its plan, or None (the ordinary path).
        self._event_plans: dict[type, EventPlan | None] = {}
        hooks = self.hooks
        self._plain_events = (
            self._plain_allowed
            and self.abort_signal is None
            and (hooks is None or hooks.async_work_finished is None)
        )

    def build_per_event_executor(self, payload: Any) -> Any:
        """For a plain event, its answer already (``AnsweredEvent``): no copy
        of this executor, no response to build; else graphql-core's executor."""
        if self._plain_events:
            data = self._plain_event(payload)
            if data is not None:
                return AnsweredEvent(PlainEventResult(data, None))
        return super().build_per_event_executor(payload)

    def _plain_event(self, event: Any) -> dict[str, Any] | None:
        """The event's data read by its plan, or None for the ordinary path."""
        kind = type(event)
        try:
            plan = self._event_plans[kind]
        except KeyError:
            plan = self._event_plans[kind] = self._plan_event(kind)
        if plan is None or get_strawberry_type_cast(event) is not None:
            return None
        key, steps = plan
        row: dict[str, Any] = {}
        try:
            for name, read, serialize, non_null in steps:
                value = read(event)
                if value is not None:
                    row[name] = serialize(value)
                elif non_null:
                    return None  # graphql-core's path reports the null
                else:
                    row[name] = None
        except Exception:  # graphql-core's path answers (or reports) it
            return None
        return {key: row}

    def _plan_event(self, kind: type) -> EventPlan | None:
        operation = self.operation
        root_type = self.schema.subscription_type
        if operation.operation is not OperationType.SUBSCRIPTION or root_type is None:
            return None
        grouped, defer_usages, _ = collect_fields(
            self.schema,
            self.fragments,
            self.variable_values,
            root_type,
            operation,
            self.hide_suggestions,
        )
        if defer_usages or len(grouped) != 1:
            return None
        ((key, details),) = grouped.items()
        field = self.schema.get_field(root_type, details[0].node.name.value)
        definition = (field.extensions or {}).get(DEFINITION) if field else None
        if field is None or not (
            isinstance(definition, StrawberryField) and definition.is_subscription
        ):
            return None
        object_type = _event_type(get_nullable_type(field.type), kind)
        if object_type is None or object_type.is_type_of is not None:
            return None
        fields, defer_usages, _ = self.collect_subfields(object_type, details)
        if defer_usages:
            return None
        steps: list[tuple[str, Read, Callable[[Any], Any], bool]] = []
        for name, selected in fields.items():
            field_name = selected[0].node.name.value
            if field_name == TYPENAME:
                steps.append((name, _constant(object_type.name), str, True))
                continue
            leaf = self.schema.get_field(object_type, field_name)
            plain = plain_leaf(leaf, object_type) if leaf is not None else None
            if plain is None:
                return None
            steps.append((name, *plain))
        return key, steps


def _constant(value: str) -> Read:
    return lambda _event: value


def _event_type(field_type: Any, kind: type) -> GraphQLObjectType | None:
    """The object type of the union (or the object type) whose class is ``kind``."""
    candidates = field_type.types if isinstance(field_type, GraphQLUnionType) else [field_type]
    for candidate in candidates:
        if not isinstance(candidate, GraphQLObjectType):
            continue
        origin = getattr((candidate.extensions or {}).get(DEFINITION), "origin", None)
        if origin is kind:
            return candidate
    return None


class PlainEventResult(ExecutionResult):
    """graphql-core's result of a plain event, read by its plan: data, no errors."""

    __slots__ = ()


class AnsweredEvent:
    """What graphql-core asks a per-event executor for (``execute_operation``,
    through ``execute_subscription_event``), for an event answered by its plan."""

    __slots__ = ("result",)

    def __init__(self, result: PlainEventResult) -> None:
        self.result = result

    def execute_operation(self, serially: bool | None = None) -> PlainEventResult:
        return self.result


class PlainStreamResult(StrawberryResult):
    """Strawberry's result of a plain event (``SmritiSchema._handle_execution_result``)."""


# The extensions whose on_stream_result leaves a result without errors as it
# is: MaskErrors replaces errors (of the result, its incremental and
# completed parts), and a plain event's result has none of them.
_ERRORS_ONLY_HOOKS = frozenset({SchemaExtension.on_stream_result, MaskErrors.on_stream_result})
_NO_HOOK: contextlib.nullcontext[None] = contextlib.nullcontext()


class StreamResultsRunner(SchemaExtensionsRunner):
    """Strawberry's runner, with the per-result work of plain events cut
    (see the module docstring). Built per operation, like the extensions."""

    def __init__(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension] | None = None
    ) -> None:
        super().__init__(execution_context, extensions)
        # SchemaExtension.get_results returns a new {}: asking only the others
        # gives the same results.
        self.with_results = [
            extension
            for extension in self.extensions
            if type(extension).get_results is not SchemaExtension.get_results
        ]
        self.inert_on_plain = all(
            type(extension).on_stream_result in _ERRORS_ONLY_HOOKS for extension in self.extensions
        )

    async def get_extensions_results(self, ctx: ExecutionContext) -> dict[str, Any]:
        """Strawberry's ``get_extensions_results``, asking only the extensions that have any."""
        data: dict[str, Any] = {}
        for extension in self.with_results:
            results = extension.get_results()
            if inspect.isawaitable(results):
                results = await results
            data.update(results)
        data.update(ctx.extensions_results)
        return data

    async def plain_result(
        self, ctx: ExecutionContext, result: PlainEventResult
    ) -> PlainStreamResult:
        """What ``Schema._handle_execution_result`` makes of ``result`` (no errors)."""
        converted = PlainStreamResult(data=result.data, errors=None)
        converted.extensions = await self.get_extensions_results(ctx)
        ctx.result = converted
        return converted

    def on_stream_result(self, result: StreamExecutionResult) -> Any:
        if self.inert_on_plain and type(result) is PlainStreamResult and result.errors is None:
            return _NO_HOOK
        return super().on_stream_result(result)


class PlainStreamResults:
    """A ``strawberry.Schema`` mix-in: its operations run with ``StreamResultsRunner``,
    and a plain event's answer (data, no errors) is converted as Strawberry
    converts it, without asking extensions that have nothing to add."""

    def create_extensions_runner(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension]
    ) -> SchemaExtensionsRunner:
        return StreamResultsRunner(execution_context, extensions)

    async def _handle_execution_result(
        self,
        context: ExecutionContext,
        result: Any,
        extensions_runner: SchemaExtensionsRunner,
        *,
        skip_process_errors: bool = False,
    ) -> Any:
        if type(result) is PlainEventResult and isinstance(extensions_runner, StreamResultsRunner):
            return await extensions_runner.plain_result(context, result)
        return await super()._handle_execution_result(  # type: ignore[misc]
            context, result, extensions_runner, skip_process_errors=skip_process_errors
        )
