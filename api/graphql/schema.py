"""The schema: each domain package's Query and Mutation parts merged, limits attached.

One package per domain (spaces, sessions, chat, checkpoints, merging, members,
accounts, providers, search, transfer), each with its types, queries and
mutations; what they share is in ``core``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.types import ExecutionContext

from ..errors import SmritiError
from ..settings import Settings
from .accounts.mutations import AccountMutation
from .accounts.queries import ViewerQuery
from .accounts.users import UserAdminMutation, UsersMutation, UsersQuery
from .chat.branching import BranchMutation
from .chat.continuation import ContinueMutation
from .chat.mutations import ChatMutation
from .chat.queries import ChatQuery
from .chat.subscriptions import Subscription
from .chat.turns import Turn
from .checkpoints.mutations import CheckpointMutation
from .checkpoints.queries import CheckpointQuery
from .checkpoints.types import Checkpoint
from .core.cost import TOO_COSTLY, Budget, QueryCost
from .core.execution import direct_resolvers
from .core.field_errors import missing_is_null, typed_errors
from .core.input_bounds import InputListBound
from .core.subscription_events import PlainEventsExecutor, PlainStreamResults
from .members.mutations import MemberMutation
from .merging.mutations import MergeMutation
from .merging.queries import MergeQuery
from .node import NodeQuery
from .providers.mutations import ModelAccessMutation
from .providers.queries import ProviderQuery
from .search.queries import SearchQuery
from .sessions.mutations import SessionMutation
from .sessions.presets import PresetMutation
from .sessions.queries import SessionQuery
from .sessions.types import Session
from .spaces.mutations import SpaceMutation
from .spaces.queries import SpaceQuery
from .spaces.types import Space
from .transfer.exports import ExportQuery
from .transfer.mutations import ImportMutation
from .transfer.verify import VerifyQuery


@strawberry.type(
    description="Every change goes through one of these; each takes one `input` "
    "and returns a payload with the result and `errors`."
)
class Mutation(
    SpaceMutation,
    SessionMutation,
    PresetMutation,
    ChatMutation,
    ContinueMutation,
    BranchMutation,
    CheckpointMutation,
    MergeMutation,
    ImportMutation,
    AccountMutation,
    MemberMutation,
    ModelAccessMutation,
    UsersMutation,
    UserAdminMutation,
):
    pass


typed_errors(Mutation)


@strawberry.type(description="Everything you can read.")
class Query(
    SearchQuery,
    NodeQuery,
    SpaceQuery,
    SessionQuery,
    CheckpointQuery,
    ProviderQuery,
    ChatQuery,
    MergeQuery,
    VerifyQuery,
    ExportQuery,
    ViewerQuery,
    UsersQuery,
):
    pass


missing_is_null(Query)


class ErrorCodes(SchemaExtension):
    """Top-level errors that are ours carry their code and field, like payload errors."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        for error in (result.errors if result else None) or []:
            original = error.original_error
            if isinstance(original, SmritiError):
                error.extensions = {
                    **(error.extensions or {}),
                    "code": original.code.value,
                    "field": original.field,
                }


class SmritiSchema(PlainStreamResults, strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Expected failures (bad ids, bad arguments, a request graphql-core
        # refuses, a query over its cost budget) are answers, not incidents:
        # only bugs are logged.
        unexpected = [
            e for e in errors if _is_internal(e) and (e.extensions or {}).get("code") != TOO_COSTLY
        ]
        if unexpected:
            super().process_errors(unexpected, execution_context)


def _is_internal(error: GraphQLError) -> bool:
    """A bug: masked as "Unexpected error." and logged.

    Everything else is the client's to read: syntax and validation errors
    (no original error), our typed errors, and graphql-core's own coercion
    errors, which carry the GraphQLError that says what is wrong ("Variable
    '$n' has invalid value: Int cannot represent non-integer value: 'ten'").
    """
    original = error.original_error
    return original is not None and not isinstance(original, SmritiError | GraphQLError)


def build_schema(settings: Settings | None = None) -> strawberry.Schema:
    limits = settings or Settings(database_url="", providers_file=None)
    # The depth and alias limits are validation rules. Built once, the same rule
    # classes serve every request, so ValidationCache can recognise a document it
    # has already validated (fresh rule classes per request would never hit).
    rules = [
        *QueryDepthLimiter(max_depth=limits.max_query_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=limits.max_aliases).validation_rules,
    ]
    budget = Budget(limits.max_query_nodes, limits.max_page_size)
    extensions: list[Any] = [
        lambda: AddValidationRules(rules),
        lambda: MaxTokensLimiter(max_token_count=limits.max_query_tokens),
        lambda: MaskErrors(should_mask_error=_is_internal),
        # Clients send the same few documents over and over: parse and validate
        # each once.
        lambda: ParserCache(maxsize=256),
        lambda: ValidationCache(maxsize=256),
        ErrorCodes,
        lambda: InputListBound(max_items=limits.max_input_list_items),
        # After validation (ValidationCache), before anything runs.
        lambda: QueryCost(budget),
    ]
    schema = SmritiSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=[Space, Session, Turn, Checkpoint],
        extensions=extensions,
        # Plain leaf fields (most of what a long read returns) without
        # graphql-core's per-field machinery: api/graphql/core/execution.py;
        # plain subscription events (a streamed reply's pieces) without an
        # execution each: core/subscription_events.py.
        execution_context_class=PlainEventsExecutor,
    )
    direct_resolvers(schema)
    return schema


def export_schema() -> str:
    return build_schema().as_str() + "\n"
