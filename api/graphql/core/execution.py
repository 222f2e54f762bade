"""GraphQL execution with a fast path for plain leaf fields.

graphql-core executes every field of every object the same way: it looks the
field up, builds a ``GraphQLResolveInfo`` (fifteen values), calls the resolver
(for a Strawberry field without one, two wrappers around ``getattr``), checks
for an awaitable, then completes the value through the type's wrappers. That
is 6-8 µs per field per object on this machine, which made reading a whole
lineage or a long session cost 0.2-0.5 ms per node.

Most fields the API returns in bulk are *plain*: a scalar or enum that
Strawberry itself resolves with nothing but ``getattr`` (no resolver, no
permission, no extension: `_get_basic_result`, which never looks at ``info``).
For those, this executor reads the attribute and serializes it directly, in
the same order and with the same result. Anything unusual (a null where the
schema says non-null, a value the scalar refuses) goes back through
graphql-core's own path, so errors are exactly what they were. Fields with a
resolver, objects, lists and every field when middleware is installed take
the ordinary path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLNonNull,
    GraphQLObjectType,
    Undefined,
    get_nullable_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import GroupedFieldSet
from graphql.pyutils import AwaitableOrValue, Path, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

# The resolver Strawberry installs on a field that only reads an attribute
# (strawberry/schema/schema_converter.py, ``from_resolver``). Recognised by
# name: if a Strawberry release renames it, the fast path is simply not taken
# (tests/api/test_plain_fields.py notices).
PLAIN_RESOLVER_NAME = "_get_basic_result"

# response key -> (resolver, serialize, non-null), or None for the ordinary path
Plan = list[tuple[str, tuple[Callable[..., Any], Callable[[Any], Any], bool] | None]]


def plain_leaf(field: GraphQLField) -> tuple[Callable[..., Any], Callable[[Any], Any], bool] | None:
    """How to read ``field`` without graphql-core's machinery, or None."""
    resolve = field.resolve
    if resolve is None or getattr(resolve, "__name__", "") != PLAIN_RESOLVER_NAME:
        return None
    nullable = get_nullable_type(field.type)
    if not is_leaf_type(nullable):
        return None
    return resolve, nullable.serialize, isinstance(field.type, GraphQLNonNull)


class PlainFieldsExecutor(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's executor, reading plain leaf fields directly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id(grouped field set) -> (that set, kept alive so the id stays its own; plan)
        self._plans: dict[int, tuple[GroupedFieldSet, Plan | None]] = {}
        middleware = self.middleware_manager
        self._plain_allowed = middleware is None or not middleware._middleware_resolvers

    def _plan(self, parent_type: GraphQLObjectType, fields: GroupedFieldSet) -> Plan | None:
        # graphql-core memoizes the grouped field set of a selection per
        # request, so every object of a list shares one: planned once.
        cached = self._plans.get(id(fields))
        if cached is not None:
            return cached[1]
        plan: Plan = []
        for response_name, details in fields.items():
            definition = self.schema.get_field(parent_type, details[0].node.name.value)
            plan.append((response_name, plain_leaf(definition) if definition else None))
        found = plan if any(step[1] for step in plan) else None
        self._plans[id(fields)] = (fields, found)
        return found

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        plan = self._plan(parent_type, grouped_field_set) if self._plain_allowed else None
        if plan is None:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        results: dict[str, Any] = {}
        awaitable_fields: list[str] = []
        is_awaitable = self.is_awaitable
        try:
            for response_name, plain in plan:
                if plain is not None:
                    resolve, serialize, non_null = plain
                    try:
                        value = resolve(source_value, None)
                        if value is not None:
                            results[response_name] = serialize(value)
                            continue
                        if not non_null:
                            results[response_name] = None
                            continue
                    except Exception:  # graphql-core reports it, below
                        pass
                    # A null for a non-null field, or a value the scalar refuses:
                    # graphql-core's own path raises the located error.
                details = grouped_field_set[response_name]
                result = self.execute_field(
                    parent_type,
                    source_value,
                    details,
                    Path(path, response_name, parent_type.name),
                    position_context,
                )
                if result is not Undefined:
                    results[response_name] = result
                    if is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return results

        async def get_results() -> dict[str, Any]:
            awaited = await gather_with_cancel(*(results[f] for f in awaitable_fields))
            results.update(zip(awaitable_fields, awaited, strict=True))
            return results

        return get_results()
