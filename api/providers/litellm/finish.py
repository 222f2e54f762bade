"""Why an answer ended, in Smriti's words: LiteLLM's finish reasons → ``Finish``.

LiteLLM reports every provider's reason in OpenAI's words (Anthropic's
``max_tokens`` and Ollama's ``done_reason: "length"`` arrive as ``length``)::

    LiteLLM          Smriti
    stop             STOP
    length           LENGTH            (the token limit: the answer is cut off)
    content_filter   CONTENT_FILTER
    tool_calls       TOOL_CALLS        (and the older function_call)
    anything else    OTHER, with the provider's word
    none at all      OTHER, with no word

A reason LiteLLM does not know it turns into ``stop`` (1.110: ``map_finish_reason``),
keeping the provider's word only on a whole OpenAI-format answer
(``native_finish_reason``). Saving such a reply as STOP would drop what the
provider said, so ``Unmapped`` catches the warning LiteLLM logs as it does so
and the answer is recorded as OTHER with that word. The catch reads LiteLLM's
own log text ("Unmapped finish_reason '…', defaulting to 'stop'"), the one place
the word survives in every format, streamed or not;
tests/providers/test_finish_reasons.py pins it through the three wire formats,
so a LiteLLM release that changes the text fails there instead of quietly
turning OTHER into STOP. (With LiteLLM's logger set above WARNING, by
``LITELLM_LOG=ERROR`` say, the record is never made and the word is lost.)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ...domain.types import Finish, FinishReason

_KNOWN = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
}

_UNMAPPED = re.compile(r"Unmapped finish_reason '(.*)', defaulting to 'stop'", re.DOTALL)
# The words LiteLLM turned into "stop" during the current call (its task's context).
_unmapped: ContextVar[list[str] | None] = ContextVar("smriti_unmapped_finish", default=None)


def finish(reported: Any, native: Any = None, unmapped: list[str] | None = None) -> Finish:
    """The Finish for LiteLLM's ``finish_reason`` (``reported``), the provider's own
    word when LiteLLM kept it (``native``), and the words it turned into "stop"
    during the call (``unmapped``, from ``Unmapped``)."""
    if isinstance(native, str) and native and native not in _KNOWN:
        return Finish.other(native)
    if reported == "stop" and unmapped:
        return Finish.other(unmapped[-1])
    if isinstance(reported, str) and reported:
        known = _KNOWN.get(reported)
        return Finish(known) if known is not None else Finish.other(reported)
    return Finish.other(None)


def provider_finish(word: Any, litellm: Any) -> Finish:
    """The Finish for the provider's own ``word``, read beneath LiteLLM's stream
    wrapper (``streams.raw``): put in LiteLLM's words first, as the wrapper does
    (``map_finish_reason``: Hugging Face's ``eos`` is a stop), so both paths
    record the same Finish; a word LiteLLM does not know is OTHER with the word."""
    if not isinstance(word, str) or not word:
        return Finish.other(None)
    known = _KNOWN.get(word)
    if known is not None:  # OpenAI's own words, which LiteLLM keeps as they are
        return Finish(known)
    with unmapped() as words:
        mapped = litellm.litellm_core_utils.core_helpers.map_finish_reason(word)
    return finish(mapped, None, words)


def native_reason(choice: Any) -> Any:
    """The provider's own word LiteLLM kept on a whole answer's choice, if any."""
    fields = getattr(choice, "provider_specific_fields", None)
    return fields.get("native_finish_reason") if isinstance(fields, dict) else None


class _Catch(logging.Filter):
    """Records, for the call in progress, the reasons LiteLLM says it did not know."""

    def filter(self, record: logging.LogRecord) -> bool:
        words = _unmapped.get()
        if words is not None:
            found = _UNMAPPED.fullmatch(record.getMessage())
            if found:
                words.append(found.group(1))
        return True  # LiteLLM's warning goes on as before


_catch = _Catch()


@contextmanager
def unmapped() -> Iterator[list[str]]:
    """Collect the reasons LiteLLM turns into "stop" while the block runs, in this
    task (a stream: around each ``__anext__``, where LiteLLM parses the chunk)."""
    logger = logging.getLogger("LiteLLM")
    if _catch not in logger.filters:
        logger.addFilter(_catch)
    words: list[str] = []
    token = _unmapped.set(words)
    try:
        yield words
    finally:
        _unmapped.reset(token)
