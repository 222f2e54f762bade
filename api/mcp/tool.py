"""A tool as one declaration: its name and words for a model, its arguments
and its answer as models (api/mcp/schema.py: the schemas are derived from
them, the arguments checked by them), and the use case it runs.

Each tool takes the actor first and calls api/services, never the store; it
answers a JSON object (the structured result) and a short text rendering of
it. A mistake raises the typed errors of api/errors.py, which the server turns
into tool errors with GraphQL's codes and words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..domain.accounts import Actor
from ..errors import SmritiError
from ..services.base import Services
from .schema import Answer, Arguments, input_schema, output_schema

Result = tuple[dict[str, Any], str]
A = TypeVar("A", bound=Arguments)
Run = Callable[[Services, Actor, A], Awaitable[Result]]


class ToolFailure(Exception):
    """A typed error after something was written: the tool error carries
    ``done`` beside GraphQL's code and words (send_message's kept user turn)."""

    def __init__(self, error: SmritiError, done: dict[str, Any]) -> None:
        super().__init__(error.message)
        self.error = error
        self.done = done


@dataclass(frozen=True)
class Tool(Generic[A]):
    name: str
    title: str
    description: str
    arguments: type[A]
    answer: type[Answer]
    run: Run[A]
    writes: bool = False  # refused for a read-only token, as GraphQL's mutations are
    input_schema: dict[str, Any] = field(init=False, repr=False)
    output_schema: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_schema", input_schema(self.arguments))
        object.__setattr__(self, "output_schema", output_schema(self.answer))

    async def call(self, services: Services, actor: Actor, given: dict[str, Any]) -> Result:
        """Check the arguments (an InputError naming the field), then run."""
        return await self.run(services, actor, self.arguments.parse(given))


def tool(
    name: str,
    *,
    title: str,
    description: str,
    arguments: type[A],
    answer: type[Answer],
    writes: bool = False,
) -> Callable[[Run[A]], Tool[A]]:
    """Declare a tool around its run: ``@tool("list_spaces", …)``."""

    def declare(run: Run[A]) -> Tool[A]:
        return Tool(name, title, description, arguments, answer, run, writes)

    return declare
