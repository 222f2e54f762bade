"""Instructions and model parameters as GraphQL reads and writes them.

One output type (a session's own, a space's defaults, what a session
effectively uses, what a reply was asked with) and one input, which replaces
the settings it is given for whole: a field left out or null is not set (a
session then takes its space's), and ``{}`` clears them all.
"""

from __future__ import annotations

import strawberry

from ...domain import types as domain
from ...domain.chat_settings import (
    ANY_MODEL_OUTPUT_LIMIT,
    INSTRUCTIONS_MAX_CHARS,
    STOP_MAX_CHARS,
    STOP_MAX_ITEMS,
    TEMPERATURE_MAX,
)


@strawberry.type(
    name="ChatSettings",
    description="Instructions (a system prompt of the user's) and model parameters; "
    "a null field is not set (the provider's default, or for a session its space's).",
)
class ChatSettings:
    instructions: str | None = strawberry.field(
        description="Sent first in the system message, before any checkpoint block."
    )
    temperature: float | None = strawberry.field(description="Sampling temperature, 0 to 2.")
    top_p: float | None = strawberry.field(description="Nucleus sampling, above 0 and at most 1.")
    max_output_tokens: int | None = strawberry.field(
        description="The most tokens the answer may have (within the model's output limit)."
    )
    stop: list[str] | None = strawberry.field(
        description="Up to 4 strings at which the model stops writing."
    )

    @classmethod
    def from_domain(cls, settings: domain.ChatSettings) -> ChatSettings:
        return cls(
            instructions=settings.instructions,
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_output_tokens=settings.max_output_tokens,
            stop=list(settings.stop) if settings.stop is not None else None,
        )


@strawberry.input(
    name="ChatSettingsInput",
    description="Settings that replace the current ones whole: a field left out or null "
    "is not set; `{}` clears them all.",
)
class ChatSettingsInput:
    instructions: str | None = strawberry.field(
        default=None,
        description=f"A system prompt of your own (at most {INSTRUCTIONS_MAX_CHARS:,} "
        "characters; blank: none).",
    )
    temperature: float | None = strawberry.field(
        default=None, description=f"0 to {TEMPERATURE_MAX:g} (OUT_OF_RANGE otherwise)."
    )
    top_p: float | None = strawberry.field(
        default=None, description="Greater than 0, at most 1 (OUT_OF_RANGE otherwise)."
    )
    max_output_tokens: int | None = strawberry.field(
        default=None,
        description="1 to the model's output limit (OUT_OF_RANGE beyond it); a space's "
        f"default up to {ANY_MODEL_OUTPUT_LIMIT:,}, and each message sends at most what "
        "its model writes.",
    )
    stop: list[str] | None = strawberry.field(
        default=None,
        description=f"At most {STOP_MAX_ITEMS} strings of at most {STOP_MAX_CHARS} characters.",
    )

    def to_domain(self) -> domain.ChatSettings:
        return domain.ChatSettings(
            instructions=self.instructions,
            temperature=self.temperature,
            top_p=self.top_p,
            max_output_tokens=self.max_output_tokens,
            stop=tuple(self.stop) if self.stop is not None else None,
        )
