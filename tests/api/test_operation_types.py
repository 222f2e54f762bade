"""The operation type of a request decides its transport; it is remembered by
digest, per document and operation name, and the memory is bounded."""

from __future__ import annotations

import pytest
from strawberry.types.graphql import OperationType

from api.graphql import view

DOCUMENT = "query A { spaces { edges { node { id } } } } subscription B { x }"


def test_each_operation_of_a_document_keeps_its_own_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(view, "_operation_types", view.OrderedDict())
    for _ in range(2):  # computed, then remembered
        assert view.operation_type(DOCUMENT, "A", 1000) is OperationType.QUERY
        assert view.operation_type(DOCUMENT, "B", 1000) is OperationType.SUBSCRIPTION
        # Two operations and no name: the first one's (Strawberry then answers
        # that the name is missing).
        assert view.operation_type(DOCUMENT, None, 1000) is OperationType.QUERY
        assert view.operation_type("subscription None { x }", None, 1000) is (
            OperationType.SUBSCRIPTION
        )
        assert view.operation_type("query { x", None, 1000) is None
    assert len(view._operation_types) == 5


def test_a_token_limit_is_part_of_what_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view, "_operation_types", view.OrderedDict())
    assert view.operation_type(DOCUMENT, "A", 1000) is OperationType.QUERY
    assert view.operation_type(DOCUMENT, "A", 5) is None  # too many tokens


def test_only_the_latest_documents_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view, "_operation_types", view.OrderedDict())
    monkeypatch.setattr(view, "OPERATION_TYPES_KEPT", 3)
    for n in range(5):
        assert view.operation_type(f"mutation M{n} {{ x }}", None, 1000) is (OperationType.MUTATION)
    assert len(view._operation_types) == 3
    assert all(len(key) == 32 for key in view._operation_types)
