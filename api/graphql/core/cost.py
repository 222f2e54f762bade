"""A query's worst-case size, counted before it runs, and refused above a limit.

Depth, alias and token limits do not bound the work: list arguments multiply.
`ancestors(first: 1000)` three deep is 10^9 checkpoints in 40 tokens. So, as
GitHub's API does, every list is counted at its largest page (its `first` or
`last`, the field's cap when neither is given, `UNPAGED_LIST` for a list
without arguments) times the pages around it, and the query is refused when
the sum passes the limit. Rules:

- every object a query can return is one node: a singular field counts one per
  enclosing item, a list `size` per enclosing item;
- a connection counts its page once, at the connection field; its `edges`,
  their `node` and `pageInfo` are wrappers of those same items, counted free;
- scalars, `__typename` and introspection (a fixed, small schema) are free,
  and so are `VALUE_TYPES`: objects of scalars read with the row holding them;
- fragments count where they are spread; every branch of a union or interface
  counts (the worst case is not known before running).

The count, and the limit applied, are in the response's `extensions.cost`;
for a subscription, in its first answer only (its first event, or its
refusal): the count is the operation's, the same for every event, and a
streamed reply is hundreds of events.

An export is the exception to counting nodes: `exportSpace` returns one string
as large as the whole space. So an operation may hold one export
(`EXPORT_FIELDS`, however aliased or spread through fragments); ten aliases of
one 5 MB export took 26 s and 75 MB and stalled every other request. Counted
before anything runs, like the nodes, so a refused operation costs nothing;
a bound on size instead would have to build the export to learn it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    NamedTypeNode,
    OperationType,
    SelectionSetNode,
    get_argument_values,
    get_named_type,
    get_nullable_type,
    get_operation_ast,
    get_variable_values,
    is_composite_type,
    is_list_type,
)
from graphql.execution import VariableValues
from strawberry.extensions import SchemaExtension

from ..checkpoints.lineage_graph import MAX_LINEAGE_GRAPH_NODES

# A list field without `first`/`last` (Checkpoint.children, Space.branches,
# Checkpoint.sourceTurns, ContextPlan.turns …) is counted at this size.
UNPAGED_LIST = 100
# Lists counted at another size than the default: the lineage connection's cap
# (api/graphql/spaces/types.py), the lineage graph's nodes (at its cap: the
# `first` that bounds them is on `Space.lineageGraph`, not on the list), and a
# checkpoint's children: they are forks, and
# across a lineage page there are at most as many children as checkpoints, so
# 10 per checkpoint already over-counts any lineage with fewer forks than that.
PAGE_CAPS: Mapping[tuple[str, str], int] = {
    ("Space", "lineage"): 1000,
    ("LineageGraph", "nodes"): MAX_LINEAGE_GRAPH_NODES,
    ("Checkpoint", "children"): 10,
}
# Objects of scalars only, read with the row that holds them (a checkpoint's
# items with their ids): free, like the scalar lists they stand beside.
VALUE_TYPES = frozenset({"CheckpointItem"})
TOO_COSTLY = "QUERY_TOO_COSTLY"
# Query fields that return a whole document; at most EXPORTS_PER_OPERATION of
# them in one operation (tests/api/test_query_cost.py: every export* field is here).
EXPORT_FIELDS = frozenset({"exportSpace", "exportSession"})
EXPORTS_PER_OPERATION = 1
TOO_MANY_EXPORTS = "TOO_MANY_EXPORTS"


@dataclass(frozen=True)
class Budget:
    """How many nodes a query may cost."""

    nodes: int
    page_size: int = UNPAGED_LIST


# Walks kept across requests (the ParserCache hands every request of the same
# text the same document): at most KEPT_WALKS documents, most recently used,
# and per document at most KEPT_COUNTS counts, one per list sizes met.
KEPT_WALKS = 256
KEPT_COUNTS = 64


@dataclass
class _Walk:
    """What counting one operation of a document visits, and its counts so far.

    The fields the walk sizes (every list and connection, from its arguments)
    are the same whatever the variables: only their sizes change the count.
    So a count is kept per tuple of sizes, and a request whose lists have the
    sizes of an earlier one (every page of a paged read) takes that count
    after reading only its lists' arguments. Holds the document, so its id
    (the key) is not reused while it is kept; the schema holds the walks."""

    document: DocumentNode
    sized: list[tuple[FieldNode, GraphQLNamedType, str, Any]]
    counts: dict[tuple[int, ...], int]


# Where a schema keeps its walks: on the schema itself, so that they go with
# it (a test builds many).
WALKS_ON_SCHEMA = "_smriti_cost_walks"


def query_nodes(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
    *,
    page_size: int = UNPAGED_LIST,
) -> int | None:
    """The worst-case number of objects the operation returns; None when the
    operation or its variables are invalid (it will not run at all)."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return None
    root = schema.get_root_type(operation.operation)
    coerced = get_variable_values(
        schema, operation.variable_definitions or (), dict(variables or {})
    )
    if root is None or not isinstance(coerced, VariableValues):
        return None
    walks: OrderedDict[tuple[int, str | None, int], _Walk] | None = getattr(
        schema, WALKS_ON_SCHEMA, None
    )
    if walks is None:
        walks = OrderedDict()
        setattr(schema, WALKS_ON_SCHEMA, walks)
    key = (id(document), operation_name, page_size)
    walk = walks.get(key)
    if walk is not None:
        walks.move_to_end(key)
        sizer = _Counter(schema, {}, coerced, page_size)
        sizes = tuple(sizer._size(*visited) for visited in walk.sized)
        found = walk.counts.get(sizes)
        if found is not None:
            return found
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    counter = _Counter(schema, fragments, coerced, page_size, sized=[])
    total = counter.count(operation.selection_set, root, 1, page=1)
    if walk is None:
        walk = walks[key] = _Walk(document, [v for v, _ in counter.sized or ()], {})
        if len(walks) > KEPT_WALKS:
            walks.popitem(last=False)
    if len(walk.counts) < KEPT_COUNTS:
        walk.counts[tuple(size for _, size in counter.sized or ())] = total
    return total


def query_exports(
    schema: GraphQLSchema, document: DocumentNode, operation_name: str | None = None
) -> int:
    """How many export fields the operation selects (aliases and fragments count;
    so do `@skip`/`@include`d ones: the worst case, as for nodes)."""
    operation = get_operation_ast(document, operation_name)
    root = schema.query_type
    if operation is None or operation.operation is not OperationType.QUERY or root is None:
        return 0
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    counter = _Counter(schema, fragments, VariableValues({}, {}), UNPAGED_LIST)
    return sum(
        1
        for field, parent in counter._fields(operation.selection_set, root)
        if parent is root and field.name.value in EXPORT_FIELDS
    )


@dataclass
class _Counter:
    schema: GraphQLSchema
    fragments: Mapping[str, FragmentDefinitionNode]
    variables: VariableValues
    page_size: int
    # When a list: each sized field visited (its ``_size`` arguments), in
    # order, with its size (``_Walk``).
    sized: list[tuple[tuple[FieldNode, GraphQLNamedType, str, Any], int]] | None = None

    def count(
        self, selections: SelectionSetNode | None, parent: GraphQLNamedType, items: int, page: int
    ) -> int:
        """Nodes under ``selections`` of ``items`` objects of type ``parent``;
        ``page`` is the page size when ``parent`` is a connection."""
        total = 0
        for field, field_parent in self._fields(selections, parent):
            total += self._field(field, field_parent, items, page)
        return total

    def _field(self, node: FieldNode, parent: GraphQLNamedType, items: int, page: int) -> int:
        name = node.name.value
        if name.startswith("__") or not isinstance(
            parent, GraphQLObjectType | GraphQLInterfaceType
        ):
            return 0
        definition = parent.fields.get(name)
        if definition is None:
            return 0
        named = get_named_type(definition.type)
        if not is_composite_type(named) or named.name in VALUE_TYPES:
            return 0
        if _is_connection(parent) and name in ("edges", "nodes"):
            return self.count(node.selection_set, named, items * page, 1)
        if (_is_edge(parent) and name == "node") or named.name == "PageInfo":
            return self.count(node.selection_set, named, items, 1)
        if _is_connection(named):
            size = self._size(node, parent, name, definition)
            return items * size + self.count(node.selection_set, named, items, size)
        if is_list_type(get_nullable_type(definition.type)):
            size = self._size(node, parent, name, definition)
            return items * size + self.count(node.selection_set, named, items * size, 1)
        return items + self.count(node.selection_set, named, items, 1)

    def _size(self, node: FieldNode, parent: GraphQLNamedType, name: str, definition: Any) -> int:
        """The largest page a list field can return, from its arguments."""
        size = self._page_size(node, parent, name, definition)
        if self.sized is not None:
            self.sized.append(((node, parent, name, definition), size))
        return size

    def _page_size(
        self, node: FieldNode, parent: GraphQLNamedType, name: str, definition: Any
    ) -> int:
        try:
            arguments = get_argument_values(definition, node, self.variables)
        except GraphQLError:
            return 0  # the field fails before its resolver runs
        sizes = [arguments[k] for k in ("first", "last") if isinstance(arguments.get(k), int)]
        if sizes:
            return max(0, *sizes)
        return PAGE_CAPS.get((parent.name, name), self.page_size)

    def _fields(
        self, selections: SelectionSetNode | None, parent: GraphQLNamedType
    ) -> Iterator[tuple[FieldNode, GraphQLNamedType]]:
        """Every field selected, through fragments, with the type it is selected on."""
        for selection in selections.selections if selections else ():
            if isinstance(selection, FieldNode):
                yield selection, parent
                continue
            if isinstance(selection, FragmentSpreadNode):
                fragment = self.fragments.get(selection.name.value)
                if fragment is None:
                    continue
                condition: NamedTypeNode | None = fragment.type_condition
                inner = fragment.selection_set
            elif isinstance(selection, InlineFragmentNode):
                condition, inner = selection.type_condition, selection.selection_set
            else:
                continue
            narrowed = self.schema.get_type(condition.name.value) if condition else None
            yield from self._fields(inner, narrowed or parent)


def _is_connection(named: GraphQLNamedType) -> bool:
    return (
        isinstance(named, GraphQLObjectType)
        and named.name.endswith("Connection")
        and "edges" in named.fields
    )


def _is_edge(named: GraphQLNamedType) -> bool:
    return (
        isinstance(named, GraphQLObjectType)
        and named.name.endswith("Edge")
        and "node" in named.fields
    )


class QueryCost(SchemaExtension):
    """Counts each operation once it is valid and refuses it above the budget.

    A GET has the budget of a POST. GET is there for caching (urql sends every
    query so), not for safety from cost: a smaller budget refused the web UI's
    own sidebar query (10,200) sent by GET, and bounded nothing, since a page
    that may send one GET may send a thousand. What a GET may not do is write
    (no mutation, no subscription: ``api/graphql/view.py``).
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.nodes: int | None = None
        self.limit = budget.nodes
        # A subscription's cost goes with its first answer only (module docstring).
        self.once = False
        self.reported = False

    def on_execute(self) -> Iterator[None]:
        # Validation has passed (a document that does not validate never gets
        # here); raising now refuses the operation before any resolver runs, on
        # every path (HTTP, SSE, websocket; queries, mutations, subscriptions).
        context = self.execution_context
        if context.graphql_document is not None:
            operation = get_operation_ast(context.graphql_document, context.operation_name)
            self.once = operation is not None and operation.operation is OperationType.SUBSCRIPTION
            self.nodes = query_nodes(
                context.schema._schema,
                context.graphql_document,
                context.operation_name,
                context.variables,
                page_size=self.budget.page_size,
            )
        if context.graphql_document is not None:
            exports = query_exports(
                context.schema._schema, context.graphql_document, context.operation_name
            )
            if exports > EXPORTS_PER_OPERATION:
                raise GraphQLError(
                    f"This operation asks for {exports} exports; the limit is "
                    f"{EXPORTS_PER_OPERATION} per operation: send each exportSpace or "
                    "exportSession as its own request.",
                    extensions={
                        "code": TOO_MANY_EXPORTS,
                        "exports": {"count": exports, "limit": EXPORTS_PER_OPERATION},
                    },
                )
        if self.nodes is not None and self.nodes > self.limit:
            advice = "ask for smaller pages (`first`/`last`) or fewer nested lists."
            raise GraphQLError(
                f"This query could return up to {self.nodes:,} objects; the limit is "
                f"{self.limit:,}: {advice}",
                extensions={"code": TOO_COSTLY, "cost": self._cost()},
            )
        yield

    def get_results(self) -> dict[str, Any]:
        if self.nodes is None or self.reported:
            return {}
        self.reported = self.once
        return {"cost": self._cost()}

    def _cost(self) -> dict[str, int | None]:
        return {"nodes": self.nodes, "limit": self.limit}
