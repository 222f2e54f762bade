"""Chat settings: instructions and model parameters of a session or a space.

A session carries settings of its own; a space carries defaults for its
sessions. What a message is sent with — the *effective* settings — is
resolved field by field (``effective``): the session's value, else its
space's, else none. A session may so set a temperature while its space gives
the instructions.

    instructions        a system prompt of the user's (docs/architecture.md#the-prompt-layout:
                        first in the system message)
    temperature         0 to 2
    top_p               greater than 0, at most 1
    max_output_tokens   1 to the model's output limit
    stop                at most 4 strings of at most 100 characters (OpenAI's limits)

Only ``instructions`` reach the prompt; the rest are ``ModelParameters``, sent
beside the messages. Values are checked by ``validate`` (typed errors with
the field at fault) before they are saved.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from ..errors import ErrorCode, InputError
from .types import SETTINGS_NAMES, ChatSettings, ModelParameters
from .validation import SUMMARY_MAX_CHARS, is_text

__all__ = ["ChatSettings", "ModelParameters", "effective", "inherited", "validate"]

# As long as a checkpoint's summary: a page of guidance, not a document.
INSTRUCTIONS_MAX_CHARS = SUMMARY_MAX_CHARS
TEMPERATURE_MAX = 2.0
STOP_MAX_ITEMS = 4
STOP_MAX_CHARS = 100
# A space's default maxOutputTokens is checked against no model (its sessions
# may use any): only this sanity bound; each message sends at most what its
# model writes (``within_output_limit``).
ANY_MODEL_OUTPUT_LIMIT = 1_000_000


def effective(own: ChatSettings, space_defaults: ChatSettings | None) -> ChatSettings:
    """Field by field: the session's value, else the space's default, else None."""
    if space_defaults is None:
        return own
    return ChatSettings(
        **{
            f.name: value
            if (value := getattr(own, f.name)) is not None
            else getattr(space_defaults, f.name)
            for f in fields(ChatSettings)
        }
    )


def inherited(own: ChatSettings, space_defaults: ChatSettings | None) -> tuple[str, ...]:
    """GraphQL names of the fields whose effective value comes from the space."""
    if space_defaults is None:
        return ()
    return tuple(
        SETTINGS_NAMES[f.name]
        for f in fields(ChatSettings)
        if getattr(own, f.name) is None and getattr(space_defaults, f.name) is not None
    )


def within_output_limit(settings: ChatSettings, output_limit: int) -> ChatSettings:
    """``settings`` with max_output_tokens at most ``output_limit``.

    A space's default was checked against no model, and a session's model may
    change after its limit was checked: at send time the value the model
    accepts is sent (and recorded on the reply), rather than a refusal.
    """
    if settings.max_output_tokens is None or settings.max_output_tokens <= output_limit:
        return settings
    return replace(settings, max_output_tokens=output_limit)


def validate(settings: ChatSettings, *, output_limit: int, field: str = "settings") -> ChatSettings:
    """``settings`` as they are saved, or InputError naming the field at fault.

    Instructions are stripped (blank: not set); an empty stop list is not set.
    ``output_limit``: the most tokens the model may write (a space's defaults
    have no model: the caller gives the largest any model allows).
    """
    instructions = settings.instructions
    if instructions is not None:
        instructions = instructions.strip() or None
    if instructions is not None:
        if len(instructions) > INSTRUCTIONS_MAX_CHARS:
            raise InputError(
                f"Instructions are at most {INSTRUCTIONS_MAX_CHARS:,} characters; "
                f"these are {len(instructions):,}.",
                code=ErrorCode.OUT_OF_RANGE,
                field=f"{field}.instructions",
            )
        if not is_text(instructions):
            raise InputError(
                "The instructions contain characters that are not valid text.",
                field=f"{field}.instructions",
            )
    temperature = settings.temperature
    if temperature is not None and not (
        math.isfinite(temperature) and 0 <= temperature <= TEMPERATURE_MAX
    ):
        raise InputError(
            f"temperature is from 0 to {TEMPERATURE_MAX:g}; {temperature:g} is out of range.",
            code=ErrorCode.OUT_OF_RANGE,
            field=f"{field}.temperature",
        )
    top_p = settings.top_p
    if top_p is not None and not (math.isfinite(top_p) and 0 < top_p <= 1):
        raise InputError(
            f"topP is greater than 0 and at most 1; {top_p:g} is out of range.",
            code=ErrorCode.OUT_OF_RANGE,
            field=f"{field}.topP",
        )
    tokens = settings.max_output_tokens
    if tokens is not None and not 1 <= tokens <= output_limit:
        raise InputError(
            f"maxOutputTokens is from 1 to {output_limit:,} (the model's output limit); "
            f"{tokens:,} is out of range.",
            code=ErrorCode.OUT_OF_RANGE,
            field=f"{field}.maxOutputTokens",
        )
    return replace(
        settings,
        instructions=instructions,
        stop=_validate_stop(settings.stop, field=f"{field}.stop"),
    )


def _validate_stop(stop: tuple[str, ...] | None, *, field: str) -> tuple[str, ...] | None:
    if not stop:
        return None
    if len(stop) > STOP_MAX_ITEMS:
        raise InputError(
            f"stop holds at most {STOP_MAX_ITEMS} strings; it has {len(stop)}.",
            code=ErrorCode.OUT_OF_RANGE,
            field=field,
        )
    for position, item in enumerate(stop):
        if not item:
            raise InputError(f"stop[{position}] is empty.", field=field)
        if len(item) > STOP_MAX_CHARS or not is_text(item):
            raise InputError(
                f"stop[{position}] is longer than {STOP_MAX_CHARS} characters."
                if len(item) > STOP_MAX_CHARS
                else f"stop[{position}] contains characters that are not valid text.",
                code=ErrorCode.OUT_OF_RANGE if len(item) > STOP_MAX_CHARS else None,
                field=field,
            )
    return tuple(stop)
