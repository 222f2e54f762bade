"""Comparing two checkpoints."""

from __future__ import annotations

import strawberry

from ...domain.compare import Comparison as DomainComparison
from ...domain.compare import FieldComparison as DomainField
from ...domain.types import CONTENT_LIST_FIELDS
from .fields import list_fields
from .types import Checkpoint


@strawberry.type(
    description="One list field of two checkpoints, matched ignoring case, punctuation and spacing."
)
class FieldComparison:
    only_a: list[str] = strawberry.field(description="Items only in a.")
    only_b: list[str] = strawberry.field(description="Items only in b.")
    shared: list[str] = strawberry.field(description="Items in both (as a spells them).")

    @classmethod
    def from_domain(cls, value: DomainField) -> FieldComparison:
        return cls(only_a=list(value.only_a), only_b=list(value.only_b), shared=list(value.shared))


@strawberry.type(description="What two checkpoints share and where they differ.")
@list_fields(
    after="b",
    make=lambda f: (
        f.attr,
        FieldComparison,
        strawberry.field(description=f"{f.label} compared."),
    ),
)
class Comparison:
    a: Checkpoint = strawberry.field(description="The first checkpoint.")
    b: Checkpoint = strawberry.field(description="The second checkpoint.")
    # Here: each list field compared (``list_fields``).
    common_ancestor: Checkpoint | None = strawberry.field(
        description="The nearest checkpoint both descend from (or are)."
    )

    @classmethod
    def from_domain(cls, value: DomainComparison) -> Comparison:
        return cls(
            a=Checkpoint.from_domain(value.a),
            b=Checkpoint.from_domain(value.b),
            **{
                f.attr: FieldComparison.from_domain(getattr(value, f.attr))
                for f in CONTENT_LIST_FIELDS
            },
            common_ancestor=(
                Checkpoint.from_domain(value.common_ancestor) if value.common_ancestor else None
            ),
        )
