"""Small value types shared by several node types."""

from __future__ import annotations

import strawberry

from ...domain import types as domain


@strawberry.type(description="Tokens and cost of one model call, when the provider reports them.")
class Usage:
    prompt_tokens: int | None = strawberry.field(description="Tokens in the prompt.")
    completion_tokens: int | None = strawberry.field(description="Tokens in the reply.")
    cost: float | None = strawberry.field(description="Cost in US dollars, when known.")

    @classmethod
    def from_domain(cls, usage: domain.Usage) -> Usage:
        return cls(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost=usage.cost,
        )


@strawberry.type(description="An inclusive range of sequence numbers in one session.")
class TurnRange:
    first: int = strawberry.field(description="The first sequence number.")
    last: int = strawberry.field(description="The last sequence number.")

    @classmethod
    def from_domain(cls, value: domain.TurnRange | None) -> TurnRange | None:
        return cls(first=value.first, last=value.last) if value else None


@strawberry.input(description="An inclusive range of sequence numbers in one session.")
class TurnRangeInput:
    first: int = strawberry.field(description="The first sequence number (≥ 1).")
    last: int = strawberry.field(description="The last sequence number (≥ first).")
