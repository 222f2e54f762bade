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

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from inspect import Parameter, iscoroutine, signature
from operator import attrgetter
from typing import Any, TypeVar

from graphql import (
    DirectiveNode,
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLSchema,
    OperationDefinitionNode,
    Undefined,
    VariableNode,
    Visitor,
    get_nullable_type,
    is_leaf_type,
    visit,
)
from graphql.execution.collect_fields import FragmentDetails, GroupedFieldSet
from graphql.execution.values import VariableValues
from graphql.pyutils import AwaitableOrValue, Path, gather_with_cancel
from graphql.type.scalars import serialize_id, serialize_string
from strawberry import relay
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.cast import TYPE_CAST_ATTRIBUTE
from strawberry.types.field import StrawberryField

from . import ids

# The resolver Strawberry installs on a field that only reads an attribute
# (strawberry/schema/schema_converter.py, ``from_resolver``). Recognised by
# name: if a Strawberry release renames it, the fast path is simply not taken
# (tests/api/test_plain_fields.py notices).
PLAIN_RESOLVER_NAME = "_get_basic_result"
# Where Strawberry keeps a GraphQL field's StrawberryField (and a type's definition).
DEFINITION = "strawberry-definition"

# The ``is_type_of`` Strawberry gives a type with interfaces (an instance of
# the type or of one of its interfaces, or a cast to one of them). Recognised
# by name: if a release renames it, such objects take the ordinary path.
STRAWBERRY_IS_TYPE_OF = (
    "GraphQLCoreConverter.from_object.<locals>._get_is_type_of.<locals>.is_type_of"
)
# The mark of a ``reads_context_only`` resolver.
CONTEXT_ONLY = "__smriti_reads_context_only__"

Read = Callable[[Any], Any]
F = TypeVar("F", bound=Callable[..., Any])


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


# Serializers that return a ``str`` unchanged (String's, ID's): a plan step
# takes a str value as it is, and calls them for anything else.
TEXT_SERIALIZERS = (serialize_string, serialize_id)


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
    text = item in TEXT_SERIALIZERS

    def serialize_list(value: Any) -> list[Any]:
        # Anything unusual (not a list, a null item where none may be) raises:
        # graphql-core's path then answers it (its own errors, its own iterables).
        if not isinstance(value, list | tuple):
            raise TypeError(value)
        if items_non_null:
            if None in value:
                raise TypeError(value)
            if text:  # a str is its own serialization: no call per item
                return [v if type(v) is str else item(v) for v in value]
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
    attr, encode = origin.resolve_id_attr(), ids.prefixed(f"{parent_type.name}:")

    def read(source: Any) -> str:
        if type(source) is not origin:  # a subclass or a stand-in: the ordinary path
            raise TypeError(source)
        return encode(str(getattr(source, attr)))

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


def reads_context_only(func: F) -> F:
    """Marks a sync resolver that uses nothing of its ``info`` but
    ``info.context`` and has no side effect (``Checkpoint.parent``): a plain
    subtree may then call it with a stand-in (``ContextInfo``) instead of a
    ``GraphQLResolveInfo`` and a Strawberry ``Info`` per object. Anything
    else read from the stand-in raises, and an awaitable answer is not
    awaited: the object then takes the ordinary path, which calls the
    resolver again with a real ``Info``."""
    setattr(func, CONTEXT_ONLY, True)
    return func


class ContextInfo:
    """What a ``reads_context_only`` resolver gets in a plain subtree."""

    __slots__ = ("context",)

    def __init__(self, context: Any) -> None:
        self.context = context


class _NotPlain(Exception):
    """An object the plain path leaves to graphql-core."""


# How a plain subtree's step answers its field (TEXT: a leaf whose serializer
# returns a str unchanged, see TEXT_SERIALIZERS).
LEAF, CONSTANT, OBJECT, LIST, TEXT = 0, 1, 2, 3, 4
# (response key, kind, read, read takes the ContextInfo, serialize (LEAF) or
# the value (CONSTANT) or the ObjectPlan (OBJECT, LIST), non-null, list items non-null)
Step = tuple[str, int, Callable[..., Any], bool, Any, bool, bool]
# (the type check, or None when graphql-core makes none; the steps)
ObjectPlan = tuple[Callable[[Any], bool] | None, list[Step]]
TYPENAME = "__typename"


def _complete(source: Any, plan: ObjectPlan, info: ContextInfo) -> dict[str, Any]:
    """One object's answer by its plan: what graphql-core answers for it when
    nothing is irregular. Raises on anything irregular (a null where the schema
    says non-null, a value of another type or class, a value the scalar
    refuses, an awaitable, a read that raises): the caller then completes the
    object by the ordinary path, which answers or reports it as before."""
    check, steps = plan
    if check is not None and not check(source):
        raise _NotPlain
    row: dict[str, Any] = {}
    for key, kind, read, with_info, arg, non_null, items_non_null in steps:
        if kind == CONSTANT:
            row[key] = arg
            continue
        value = read(source, info) if with_info else read(source)
        if value is None:
            if non_null:
                raise _NotPlain
            row[key] = None
        elif kind == TEXT:
            row[key] = value if type(value) is str else arg(value)
        elif kind == LEAF:
            row[key] = arg(value)
        elif kind == OBJECT:
            row[key] = _complete(value, arg, info)
        else:
            row[key] = _complete_items(value, arg, info, items_non_null)
    return row


def _complete_items(values: Any, plan: ObjectPlan, info: ContextInfo, non_null: bool) -> list[Any]:
    if not isinstance(values, list | tuple):
        raise _NotPlain  # graphql-core's own iterables and errors
    completed: list[Any] = []
    for value in values:
        if value is not None:
            completed.append(_complete(value, plan, info))
        elif non_null:
            raise _NotPlain
        else:
            completed.append(None)
    return completed


def _type_check(object_type: GraphQLObjectType) -> Callable[[Any], bool] | bool | None:
    """How a plain subtree checks a value is of ``object_type``: None when
    graphql-core checks nothing (no ``is_type_of``); for Strawberry's own
    ``is_type_of`` (a type with interfaces), the value's class is exactly the
    type's and it carries no ``strawberry.cast`` (anything else, a subclass
    for one, takes the ordinary path); False for any other ``is_type_of``."""
    if object_type.is_type_of is None:
        return None
    origin = getattr((object_type.extensions or {}).get(DEFINITION), "origin", None)
    qualified = getattr(object_type.is_type_of, "__qualname__", "")
    if not isinstance(origin, type) or qualified != STRAWBERRY_IS_TYPE_OF:
        return False

    def check(value: Any) -> bool:  # get_strawberry_type_cast, without its call
        return type(value) is origin and getattr(value, TYPE_CAST_ATTRIBUTE, None) is None

    return check


def _value_reader(field: GraphQLField) -> tuple[Callable[..., Any], bool] | None:
    """How an object field's value is read without its ordinary resolver call:
    an attribute, a sync method taking only ``self``, or a ``reads_context_only``
    method (then with the ContextInfo, the bool); None otherwise."""
    definition = (field.extensions or {}).get(DEFINITION)
    if not isinstance(definition, StrawberryField) or definition.extensions or field.args:
        return None
    if getattr(field.resolve, "__name__", "") == PLAIN_RESOLVER_NAME:
        if definition.default_resolver is getattr:
            return attrgetter(definition.python_name), False
        return None
    resolver = definition.base_resolver
    if (
        resolver is None
        or resolver.is_async
        or resolver.arguments
        or resolver.self_parameter is None
        or resolver.root_parameter is not None
        or resolver.parent_parameter is not None
        or not callable(resolver.wrapped_func)
    ):
        return None
    func = resolver.wrapped_func
    if resolver.info_parameter is None:
        return _not_awaitable(func), False
    if not getattr(func, CONTEXT_ONLY, False):
        return None
    info_name = resolver.info_parameter.name
    parameters = list(signature(func).parameters.values())
    positional = (
        len(parameters) == 2
        and parameters[1].name == info_name
        and parameters[1].kind is Parameter.POSITIONAL_OR_KEYWORD
    )

    def read(source: Any, info: ContextInfo) -> Any:
        value = func(source, info) if positional else func(source, **{info_name: info})
        if is_awaitable(value):
            if iscoroutine(value):
                value.close()  # the ordinary path calls it again and awaits that
            raise _NotPlain
        return value

    return read, True


def _not_awaitable(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def read(source: Any) -> Any:
        value = func(source)
        if is_awaitable(value):
            if iscoroutine(value):
                value.close()
            raise _NotPlain
        return value

    return read


# Plans kept across requests: per schema, per operation as parsed (Strawberry's
# ParserCache hands every request of the same text the same nodes), at most
# KEPT_OPERATIONS of them, most recently used; per operation, per values of the
# variables its directives read (@include, @skip, @defer…), at most KEPT_VARIANTS.
KEPT_OPERATIONS = 256
KEPT_VARIANTS = 16
# A key's part for a variable not given.
_ABSENT = object()


class KeptPlans:
    """The plans of one parsed operation, kept across its requests.

    Plans are keyed by the ids of the field nodes they were collected from (a
    field set, a field's merged nodes): within one operation and one set of
    values of the variables its directives read, graphql-core's field
    collection gives the same fields for the same nodes. The entry holds the
    operation and its fragments, so no id of theirs can be reused by another
    object while it is kept; the schema holds the entries.
    """

    __slots__ = ("_held", "names", "variants")

    def __init__(
        self, operation: OperationDefinitionNode, fragments: Mapping[str, FragmentDetails]
    ) -> None:
        self._held = (operation, tuple(fragments.values()))
        self.names = _directive_variables(operation, fragments)
        # variable values -> (field set plans, object plans)
        self.variants: dict[tuple[Any, ...], tuple[dict[Any, Any], dict[Any, Any]]] = {}

    def plans(self, variables: VariableValues) -> tuple[dict[Any, Any], dict[Any, Any]] | None:
        """The plans kept for these variable values (made empty if new), or
        None when none may be kept (fragment variables, unhashable values, too
        many variants)."""
        if self.names is None:
            return None
        coerced = variables.coerced
        key = tuple(coerced.get(name, _ABSENT) for name in self.names)
        try:
            found = self.variants.get(key)
        except TypeError:  # an input object or a list: not kept
            return None
        if found is None:
            if len(self.variants) >= KEPT_VARIANTS:
                return None
            found = self.variants[key] = ({}, {})
        return found


# Where a schema keeps its operations' plans: on the schema itself, so that
# they go with it (a test builds many).
KEPT_ON_SCHEMA = "_smriti_kept_plans"


def kept_plans(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDetails],
    variables: VariableValues,
) -> tuple[dict[Any, Any], dict[Any, Any]] | None:
    """The plans kept for this operation and these variable values."""
    kept: OrderedDict[int, KeptPlans] | None = getattr(schema, KEPT_ON_SCHEMA, None)
    if kept is None:
        kept = OrderedDict()
        setattr(schema, KEPT_ON_SCHEMA, kept)
    key = id(operation)
    entry = kept.get(key)
    if entry is None:
        entry = kept[key] = KeptPlans(operation, fragments)
        if len(kept) > KEPT_OPERATIONS:
            kept.popitem(last=False)
    else:
        kept.move_to_end(key)
    return entry.plans(variables)


class _DirectiveVariables(Visitor):
    """The names of the variables read by directives' arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = 0
        self.names: set[str] = set()

    def enter_directive(self, node: DirectiveNode, *_: Any) -> None:
        self.inside += 1

    def leave_directive(self, node: DirectiveNode, *_: Any) -> None:
        self.inside -= 1

    def enter_variable(self, node: VariableNode, *_: Any) -> None:
        if self.inside:
            self.names.add(node.name.value)


def _directive_variables(
    operation: OperationDefinitionNode, fragments: Mapping[str, FragmentDetails]
) -> tuple[str, ...] | None:
    """The variables whose values can change which fields are collected, in a
    fixed order; None when fragments have variables of their own (their
    values come with each spread: plans are then not kept)."""
    if any(fragment.variable_signatures for fragment in fragments.values()):
        return None
    finder = _DirectiveVariables()
    visit(operation, finder)
    for fragment in fragments.values():
        visit(fragment.definition, finder)
    return tuple(sorted(finder.names))


# Strawberry's resolver of Node.id (a classmethod, bound to each Node class).
_NODE_ID = relay.Node._id.__func__


class PlainFieldsExecutor(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's executor, completing plain fields and plain subtrees directly.

    A *plain subtree* is an object (an edge, its node, the node's parent…)
    whose selected fields are all plain leaves, ``__typename``, or objects and
    lists of objects read without the ordinary resolver call (an attribute, a
    method taking only ``self``, a ``reads_context_only`` resolver) whose
    selections are plain subtrees in turn, recursively. Each is completed by a
    plan compiled once for each (selection, type) — fragments, aliases and
    ``@include``/``@skip`` applied by graphql-core's own field collection —
    into the same dictionary graphql-core builds, in the same key order. Plans
    are kept across requests of the same parsed operation (``KeptPlans``).
    An object with anything irregular in it is completed again by the
    ordinary path (a list's item alone, an object field alone), which answers
    or reports it exactly as before: reading plain fields has no side effect.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id(grouped field set) -> (that set, kept alive so the id stays its own; steps)
        self._plans: dict[int, tuple[GroupedFieldSet, list[tuple[str, Step | None]] | None]] = {}
        # (type, id(field details list)) -> (that list, kept alive; its plan or None)
        self._object_plans: dict[tuple[GraphQLObjectType, int], tuple[Any, ObjectPlan | None]] = {}
        middleware = self.middleware_manager
        self._plain_allowed = middleware is None or not middleware._middleware_resolvers
        self._context_info = ContextInfo(self.context_value)
        kept = (
            kept_plans(self.schema, self.operation, self.fragments, self.variable_values)
            if self._plain_allowed
            else None
        )
        # Across requests: (type, ids of a field set's nodes) -> steps, and
        # (type, ids of a field's merged nodes) -> object plan.
        self._kept_plans: dict[Any, Any] | None = None
        self._kept_object_plans: dict[Any, Any] | None = None
        if kept is not None:
            self._kept_plans, self._kept_object_plans = kept

    def _plan(
        self, parent_type: GraphQLObjectType, fields: GroupedFieldSet
    ) -> list[tuple[str, Step | None]] | None:
        """Each field's step (None: the ordinary path), or None if no field
        has one. graphql-core memoizes the grouped field set of a selection
        per request, so every object of a list shares one: planned once."""
        cached = self._plans.get(id(fields))
        if cached is not None:
            return cached[1]
        kept = self._kept_plans
        if kept is not None:
            key = (parent_type, *(id(d.node) for details in fields.values() for d in details))
            if key in kept:
                found = kept[key]
                self._plans[id(fields)] = (fields, found)
                return found
        plan: list[tuple[str, Step | None]] = []
        for response_name, details in fields.items():
            step = self._step(parent_type, response_name, details)
            # A list goes through graphql-core's resolution (once per list)
            # and then complete_iterable_value, which completes each item alone.
            plan.append((response_name, None if step is None or step[1] == LIST else step))
        found = plan if any(step for _, step in plan) else None
        self._plans[id(fields)] = (fields, found)
        if kept is not None:
            kept[key] = found
        return found

    def _object_plan(self, object_type: GraphQLObjectType, details: Any) -> ObjectPlan | None:
        key = (object_type, id(details))
        cached = self._object_plans.get(key)
        if cached is not None:
            return cached[1]
        kept = self._kept_object_plans
        if kept is not None:
            kept_key = (object_type, *(id(d.node) for d in details))
            if kept_key in kept:
                found: ObjectPlan | None = kept[kept_key]
                self._object_plans[key] = (details, found)
                return found
        plan: ObjectPlan | None = None
        check = _type_check(object_type)
        if check is not False:
            grouped, defer_usages, _ = self.collect_subfields(object_type, details)
            steps: list[Step] | None = [] if not defer_usages else None
            for response_name, field_details in grouped.items():
                step = self._step(object_type, response_name, field_details)
                if steps is None or step is None:
                    steps = None
                    break
                steps.append(step)
            if steps is not None:
                plan = (check if callable(check) else None, steps)
        self._object_plans[key] = (details, plan)
        if kept is not None:
            kept[kept_key] = plan
        return plan

    def _step(self, parent_type: GraphQLObjectType, key: str, details: Any) -> Step | None:
        node = details[0].node
        name = node.name.value
        if name == TYPENAME:
            return (key, CONSTANT, _no_read, False, parent_type.name, True, False)
        field = self.schema.get_field(parent_type, name)
        if field is None or name.startswith("__"):
            return None
        leaf = plain_leaf(field, parent_type)
        if leaf is not None:
            read, serialize, non_null = leaf
            kind = TEXT if serialize in TEXT_SERIALIZERS else LEAF
            return (key, kind, read, False, serialize, non_null, False)
        reader = _value_reader(field)
        if reader is None:
            return None
        read, with_info = reader
        non_null = isinstance(field.type, GraphQLNonNull)
        nullable = get_nullable_type(field.type)
        if isinstance(nullable, GraphQLObjectType):
            plan = self._object_plan(nullable, details)
            return None if plan is None else (key, OBJECT, read, with_info, plan, non_null, False)
        if isinstance(nullable, GraphQLList) and not any(
            directive.name.value == "stream" for directive in node.directives or ()
        ):
            item_type = get_nullable_type(nullable.of_type)
            if isinstance(item_type, GraphQLObjectType):
                plan = self._object_plan(item_type, details)
                items_non_null = isinstance(nullable.of_type, GraphQLNonNull)
                if plan is not None:
                    return (key, LIST, read, with_info, plan, non_null, items_non_null)
        return None

    def complete_iterable_value(
        self,
        item_type: GraphQLOutputType,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        path: Path,
        items: Iterable[Any],
        position_context: Any,
    ) -> AwaitableOrValue[list[Any]]:
        """A list of plain subtrees (a page of turns or of edges, `lineageGraph`'s
        nodes) is completed in one loop: graphql-core's per-item completion (a
        path, five nested calls, the field set looked up again, a
        ``GraphQLResolveInfo`` per field below) cost more than the values.
        An item with anything irregular (null, awaitable, of another type, a
        null for a non-null field, a value the scalar refuses, a parent not
        read yet) is completed alone by graphql-core's path, at its own path,
        exactly as graphql-core completes every item."""
        object_type = get_nullable_type(item_type)
        plan = (
            self._object_plan(object_type, field_details_list)
            if self._plain_allowed
            and isinstance(items, list | tuple)
            and isinstance(object_type, GraphQLObjectType)
            and self.get_stream_usage(field_details_list, path) is None
            else None
        )
        if plan is None:
            return super().complete_iterable_value(
                item_type, field_details_list, info, path, items, position_context
            )
        context_info = self._context_info
        is_awaitable = self.is_awaitable
        completed: list[Any] = []
        awaitable_indices: list[int] = []
        try:
            for index, item in enumerate(items):
                if item is not None and not is_awaitable(item):
                    try:
                        completed.append(_complete(item, plan, context_info))
                        continue
                    except Exception:  # this item by the ordinary path, below
                        pass
                item_path = path.add_key(index, None)
                if is_awaitable(item):
                    completed.append(
                        self.complete_awaitable_list_item_value(
                            item, item_type, field_details_list, info, item_path, position_context
                        )
                    )
                    awaitable_indices.append(index)
                elif self.complete_list_item_value(
                    item,
                    completed,
                    item_type,
                    field_details_list,
                    info,
                    item_path,
                    position_context,
                ):
                    awaitable_indices.append(index)
        except Exception:
            if awaitable_indices:
                self.settle_in_background([completed[i] for i in awaitable_indices])
            raise
        if not awaitable_indices:
            return completed

        async def get_completed() -> list[Any]:
            awaited = await gather_with_cancel(*(completed[i] for i in awaitable_indices))
            for index, value in zip(awaitable_indices, awaited, strict=True):
                completed[index] = value
            return completed

        return get_completed()

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
        context_info = self._context_info
        try:
            for response_name, step in plan:
                if step is not None:
                    _, kind, read, with_info, arg, non_null, _ = step
                    try:
                        if kind == CONSTANT:
                            results[response_name] = arg
                            continue
                        value = (
                            read(source_value, context_info) if with_info else read(source_value)
                        )
                        if value is not None:
                            results[response_name] = (
                                arg(value)
                                if kind in (LEAF, TEXT)
                                else _complete(value, arg, context_info)
                            )
                            continue
                        if not non_null:
                            results[response_name] = None
                            continue
                    except Exception:  # graphql-core answers or reports it, below
                        pass
                    # A null for a non-null field, a value the scalar refuses,
                    # anything irregular in an object: graphql-core's own path.
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


def _no_read(source: Any) -> None:
    return None
