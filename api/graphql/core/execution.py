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

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    Undefined,
    get_nullable_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import GroupedFieldSet
from graphql.pyutils import AwaitableOrValue, Path, gather_with_cancel
from strawberry import relay
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.field import StrawberryField

# The resolver Strawberry installs on a field that only reads an attribute
# (strawberry/schema/schema_converter.py, ``from_resolver``). Recognised by
# name: if a Strawberry release renames it, the fast path is simply not taken
# (tests/api/test_plain_fields.py notices).
PLAIN_RESOLVER_NAME = "_get_basic_result"
# Where Strawberry keeps a GraphQL field's StrawberryField (and a type's definition).
DEFINITION = "strawberry-definition"

Read = Callable[[Any], Any]
# response key -> (read, serialize, non-null), or None for the ordinary path
Plan = list[tuple[str, tuple[Read, Callable[[Any], Any], bool] | None]]


def plain_leaf(
    field: GraphQLField, parent_type: GraphQLObjectType | None = None
) -> tuple[Read, Callable[[Any], Any], bool] | None:
    """How to read ``field`` of ``parent_type`` without graphql-core's
    machinery, or None. Three kinds of leaf fields (a scalar or an enum, or a
    list of them) qualify:

    - an attribute read (no resolver, no extension);
    - a method that takes only ``self`` (sync, no arguments, no ``info``, no
      extension or permission), e.g. ``shortHash``;
    - the relay ``id`` of a Node class that keeps Strawberry's own
      ``resolve_id`` and ``resolve_typename`` (the type's name and the
      ``NodeID`` attribute, base64-encoded as ``GlobalID`` does).

    ``read(source)`` may raise: the field then takes the ordinary path, which
    answers (or reports the error) exactly as before.
    """
    resolve = field.resolve
    serialize = _serializer(get_nullable_type(field.type))
    if resolve is None or serialize is None:
        return None
    non_null = isinstance(field.type, GraphQLNonNull)
    definition = (field.extensions or {}).get(DEFINITION)
    if getattr(resolve, "__name__", "") == PLAIN_RESOLVER_NAME:
        if isinstance(definition, StrawberryField) and definition.default_resolver is getattr:
            return attrgetter(definition.python_name), serialize, non_null
        return lambda source: resolve(source, None), serialize, non_null
    resolver = getattr(definition, "base_resolver", None)
    if not isinstance(definition, StrawberryField) or resolver is None or definition.extensions:
        return None
    node_id = _node_id_reader(parent_type, resolver)
    if node_id is not None:
        return node_id, serialize, non_null
    if (
        resolver.is_async
        or resolver.arguments
        or resolver.self_parameter is None
        or resolver.info_parameter is not None
        or resolver.root_parameter is not None
        or resolver.parent_parameter is not None
        or not callable(resolver.wrapped_func)
    ):
        return None
    return resolver.wrapped_func, serialize, non_null


def _serializer(nullable: Any) -> Callable[[Any], Any] | None:
    """How a scalar or enum, or a list of them (``[String!]!``), is serialized."""
    if is_leaf_type(nullable):
        serialize: Callable[[Any], Any] = nullable.serialize
        return serialize
    if not isinstance(nullable, GraphQLList):
        return None
    inner = nullable.of_type
    leaf = get_nullable_type(inner)
    if not is_leaf_type(leaf):
        return None
    item, items_non_null = leaf.serialize, isinstance(inner, GraphQLNonNull)

    def serialize_list(value: Any) -> list[Any]:
        # Anything unusual (not a list, a null item where none may be) raises:
        # graphql-core's path then answers it (its own errors, its own iterables).
        if not isinstance(value, list | tuple):
            raise TypeError(value)
        if items_non_null:
            if None in value:
                raise TypeError(value)
            return [item(v) for v in value]
        return [None if v is None else item(v) for v in value]

    return serialize_list


def _node_id_reader(parent_type: GraphQLObjectType | None, resolver: Any) -> Read | None:
    """``id`` of a relay Node resolved the default way, read directly."""
    if parent_type is None or getattr(resolver.wrapped_func, "__func__", None) is not _NODE_ID:
        return None
    definition = (parent_type.extensions or {}).get(DEFINITION)
    origin = getattr(definition, "origin", None)
    if not (isinstance(origin, type) and issubclass(origin, relay.Node)):
        return None
    if (
        origin.resolve_id.__func__ is not relay.Node.resolve_id.__func__  # type: ignore[attr-defined]
        or origin.resolve_typename.__func__ is not relay.Node.resolve_typename.__func__  # type: ignore[attr-defined]
    ):
        return None
    attr, type_name = origin.resolve_id_attr(), parent_type.name

    def read(source: Any) -> str:
        if type(source) is not origin:  # a subclass or a stand-in: the ordinary path
            raise TypeError(source)
        return relay.to_base64(type_name, str(getattr(source, attr)))

    return read


def direct_resolvers(schema: Any) -> int:
    """Call each resolver that takes no GraphQL argument and has no field
    extension (``parent``, ``space``, ``children``, ``contentHtml``…) directly
    from graphql-core, with its Strawberry ``Info``, instead of through
    Strawberry's generic chain (argument conversion, the extension chain built
    per call, three wrappers), which cost more than most such resolvers.

    Exactly what that chain does for such a field: ``self`` (or ``root`` /
    ``parent``) is the source and ``info`` the Strawberry Info; an async
    resolver's coroutine is awaited by graphql-core. A schema with exception
    handlers, and subscription fields, keep Strawberry's chain. Returns how
    many fields were changed."""
    converter = schema.schema_converter
    if converter._exception_handler_specs:
        return 0
    info_class = converter.config.info_class
    changed = 0
    for graphql_type in schema._schema.type_map.values():
        if not isinstance(graphql_type, GraphQLObjectType):
            continue
        for field in graphql_type.fields.values():
            definition = (field.extensions or {}).get(DEFINITION)
            resolver = getattr(definition, "base_resolver", None)
            if (
                not isinstance(definition, StrawberryField)
                or resolver is None
                or definition.extensions
                or definition.is_subscription
                or definition.arguments
                or field.args
                or not callable(resolver.wrapped_func)
                or (getattr(resolver.wrapped_func, "__func__", None) is _NODE_ID)
            ):
                continue
            field.resolve = _direct(definition, resolver, info_class)
            changed += 1
    return changed


def _direct(definition: StrawberryField, resolver: Any, info_class: Any) -> Callable[..., Any]:
    func = resolver.wrapped_func
    takes_self = resolver.self_parameter is not None
    source_names = [
        parameter.name
        for parameter in (resolver.root_parameter, resolver.parent_parameter)
        if parameter is not None
    ]
    info_name = resolver.info_parameter.name if resolver.info_parameter is not None else None

    def resolve(source: Any, info: GraphQLResolveInfo[Any]) -> Any:
        kwargs = dict.fromkeys(source_names, source)
        if info_name is not None:
            kwargs[info_name] = info_class(_raw_info=info, _field=definition)
        return func(source, **kwargs) if takes_self else func(**kwargs)

    resolve.__name__ = f"direct_{definition.python_name}"
    return resolve


class _NotPlain(Exception):
    """An item the list fast path leaves to graphql-core."""


def _row(source: Any, steps: list[tuple[str, Read, Callable[[Any], Any], bool]]) -> dict[str, Any]:
    """One object's answer by its plain steps; raises on anything unusual."""
    row: dict[str, Any] = {}
    for name, read, serialize, non_null in steps:
        value = read(source)
        if value is not None:
            row[name] = serialize(value)
        elif non_null:
            raise _NotPlain
        else:
            row[name] = None
    return row


# Strawberry's resolver of Node.id (a classmethod, bound to each Node class).
_NODE_ID = relay.Node._id.__func__


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
            plan.append(
                (response_name, plain_leaf(definition, parent_type) if definition else None)
            )
        found = plan if any(step[1] for step in plan) else None
        self._plans[id(fields)] = (fields, found)
        return found

    def _all_plain(
        self, item_type: GraphQLOutputType, field_details_list: Any, path: Path, info: Any
    ) -> tuple[GraphQLObjectType, list[tuple[str, Read, Callable[[Any], Any], bool]]] | None:
        """The object type and steps of a list whose items' selected fields are
        all plain, or None (the ordinary path)."""
        object_type = get_nullable_type(item_type)
        if (
            not self._plain_allowed
            or not isinstance(object_type, GraphQLObjectType)
            or self.get_stream_usage(field_details_list, path) is not None
        ):
            return None
        steps = self._plain_steps(object_type, field_details_list, info)
        return None if steps is None else (object_type, steps)

    def _plain_steps(
        self, object_type: GraphQLObjectType, field_details_list: Any, info: Any
    ) -> list[tuple[str, Read, Callable[[Any], Any], bool]] | None:
        """How to read every selected field of ``object_type`` directly: plain
        leaves, and attribute fields holding an object whose selected fields are
        themselves all plain (an edge's ``node``); None if any field is not."""
        grouped, defer_usages, _ = self.collect_subfields(object_type, field_details_list)
        if defer_usages:
            return None
        plan = self._plan(object_type, grouped) or [(name, None) for name in grouped]
        steps: list[tuple[str, Read, Callable[[Any], Any], bool]] = []
        for name, plain in plan:
            if plain is None:
                plain = self._plain_object(object_type, name, grouped[name], info)
                if plain is None:
                    return None
            steps.append((name, *plain))
        return steps

    def _plain_object(
        self, parent_type: GraphQLObjectType, name: str, details: Any, info: Any
    ) -> tuple[Read, Callable[[Any], Any], bool] | None:
        field = self.schema.get_field(parent_type, details[0].node.name.value)
        definition = (field.extensions or {}).get(DEFINITION) if field else None
        if (
            field is None
            or getattr(field.resolve, "__name__", "") != PLAIN_RESOLVER_NAME
            or not isinstance(definition, StrawberryField)
            or definition.default_resolver is not getattr
        ):
            return None
        object_type = get_nullable_type(field.type)
        if not isinstance(object_type, GraphQLObjectType):
            return None
        steps = self._plain_steps(object_type, details, info)
        if steps is None:
            return None
        is_type_of = object_type.is_type_of

        def serialize(value: Any) -> dict[str, Any]:
            if is_type_of is not None and is_type_of(value, info) is not True:
                raise _NotPlain
            return _row(value, steps)

        return attrgetter(definition.python_name), serialize, isinstance(field.type, GraphQLNonNull)

    def complete_iterable_value(
        self,
        item_type: GraphQLOutputType,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        path: Path,
        items: Iterable[Any],
        position_context: Any,
    ) -> AwaitableOrValue[list[Any]]:
        """A list of objects whose selected fields are all plain (a page of
        turns, `lineageGraph`'s nodes) is completed in one loop: graphql-core's
        per-item completion (a path, five nested calls, the field set looked
        up again) cost as much as the fields themselves. Any item that is not
        simply an object with readable values (null, awaitable, not of the
        type, a value the scalar refuses, a null for a non-null field) sends
        the whole list back to graphql-core's path, which answers it as before
        (reading plain fields has no side effects)."""
        plain = (
            self._all_plain(item_type, field_details_list, path, info)
            if isinstance(items, list | tuple)
            else None
        )
        if plain is None:
            return super().complete_iterable_value(
                item_type, field_details_list, info, path, items, position_context
            )
        object_type, steps = plain
        is_type_of = object_type.is_type_of
        completed: list[Any] = []
        try:
            for item in items:
                if item is None or (is_type_of is not None and is_type_of(item, info) is not True):
                    raise _NotPlain
                completed.append(_row(item, steps))
        except Exception:  # graphql-core answers (or reports) it, below
            return super().complete_iterable_value(
                item_type, field_details_list, info, path, items, position_context
            )
        return completed

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
                    read, serialize, non_null = plain
                    try:
                        value = read(source_value)
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
