"""Reading LiteLLM's streamed answer: through its wrapper, or beneath it.

``litellm.acompletion(stream=True)`` hands back a ``CustomStreamWrapper``.
``wrapped`` reads it, for every route. For the ``openai`` route (OpenAI, and
every server configured as ``litellm_provider: openai``) the wrapper's
``completion_stream`` is the OpenAI SDK's own ``AsyncStream`` of
``ChatCompletionChunk``: the SSE already parsed, each chunk a typed object.
The wrapper rebuilds each of those chunks as a ``ModelResponseStream``, keeps
it to assemble the whole answer for its callbacks, and runs its hooks: about
0.25 ms of CPU a piece (``python -m bench.litellm_stream``: 0.43 ms a piece
through the wrapper, 0.17 ms beneath it, 0.14 ms for a bare loop).

``beneath`` finds that SDK stream and ``raw`` reads it itself, for a stream
that goes the usual way: pieces, a finish reason, the usage chunk
(``choices: []``, asked for with ``include_usage``), the end. Any other
ending is the wrapper's: the chunks read so far, then the ending (an
exception, an end with no finish reason or no usage, a finish reason LiteLLM
turns into an error) are fed to the wrapper as its ``completion_stream`` and
read through it (``wrapped``), so it raises or reports what it would have had
it read the stream from the start. The two paths give the same pieces, usage,
finish and errors by construction, and what only a broken stream needs
(LiteLLM's exception mapping, its usage estimate for a server that reports
none) costs a whole stream nothing.

What the wrapper does per chunk that the raw path does not, and why Smriti
does without: assembling the answer for LiteLLM's callbacks (Smriti registers
none); ``reasoning_content``, ``provider_specific_fields``, logprobs and tool
calls (Smriti keeps ``delta.content`` only and asks for no tools);
``post_call_rules`` and ``LITELLM_MAX_STREAMING_DURATION_SECONDS`` (unset;
the read timeout still applies to every read, in the SDK's HTTP client).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from . import loader
from .finish import unmapped

# The finish reasons LiteLLM's wrapper raises on (1.110: "abort" as an
# InternalServerError, "error" as an exception of its own): its to end.
_FAILING_REASONS = frozenset({"abort", "error"})


@dataclass
class Ending:
    """What a stream says besides its pieces, noted as it is read."""

    usage: Any = None  # the usage report (an object or a dict)
    priced: Any = None  # the chunk LiteLLM priced (``_hidden_params``): the wrapper's
    reason: Any = None  # the last finish reason, in LiteLLM's words (the wrapper's)
    native: str | None = None  # the provider's own word, read beneath the wrapper
    words: list[str] = field(default_factory=list)  # reasons LiteLLM turned into "stop"


async def wrapped(response: Any, ending: Ending) -> AsyncGenerator[str, None]:
    """The text pieces of LiteLLM's stream ``response``, through its wrapper.

    Notes the usage and finish in ``ending``; raises what the wrapper raises.
    Closes the stream when done, failed or abandoned (run it under
    ``contextlib.aclosing``).
    """
    try:
        while True:
            # A stalled stream ends here too: the HTTP client's read timeout
            # (per read) raises, which LiteLLM reports mid-stream as an HTTP
            # 408 and classify() as a timeout.
            with unmapped() as found:
                try:
                    chunk = await response.__anext__()
                except StopAsyncIteration:
                    return
            ending.words += found
            usage = getattr(chunk, "usage", None)
            if usage:
                ending.usage, ending.priced = usage, chunk
            for choice in getattr(chunk, "choices", None) or []:
                ending.reason = getattr(choice, "finish_reason", None) or ending.reason
                delta = getattr(getattr(choice, "delta", None), "content", None)
                if delta:
                    yield delta
            if ending.usage and ending.reason is not None:
                # Everything Smriti reads has arrived: LiteLLM hands the usage
                # (which it totals and prices at the end) after the finish
                # reason, as the stream's last chunk. Asking for the next one
                # would only make LiteLLM assemble the whole answer a second
                # time and log it for callbacks Smriti never registers: ~10 ms
                # of CPU a stream (bench/litellm_stream.py).
                return
    finally:
        # Release the HTTP connection when the consumer stops early.
        close = getattr(response, "aclose", None)
        if close is not None:
            await close()


def beneath(response: Any) -> Any:
    """The OpenAI SDK stream under LiteLLM's wrapper ``response``, or None when
    the route streams anything else (Anthropic's, Ollama's, …)."""
    if getattr(response, "custom_llm_provider", None) != "openai":
        return None
    stream = getattr(response, "completion_stream", None)
    return stream if isinstance(stream, loader.openai_stream_class()) else None


async def raw(response: Any, stream: Any, ending: Ending) -> AsyncGenerator[str, None]:
    """The text pieces of ``stream``, the SDK's stream beneath the wrapper ``response``.

    Notes the usage and the provider's finish reason in ``ending``; an unusual
    ending is the wrapper's (the module's docstring). Closes the stream when
    done, failed or abandoned (run it under ``contextlib.aclosing``).
    """
    seen: list[Any] = []  # the wrapper ends an unusual stream from every chunk
    reason: str | None = None
    usage: Any = None
    failure: Exception | None = None
    try:
        # To the end ([DONE]), as the wrapper reads it: the SDK then returns the
        # connection to the pool rather than dropping it.
        while True:
            try:
                chunk = await stream.__anext__()
            except StopAsyncIteration:
                break
            except Exception as exc:
                failure = exc
                break
            seen.append(chunk)
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                if choice.finish_reason:
                    reason = choice.finish_reason
                    if reason in _FAILING_REASONS:
                        break  # the wrapper raises before this chunk's text
                delta = choice.delta
                text = delta.content if delta is not None else None
                if text:
                    yield text
            if reason in _FAILING_REASONS:
                break
        if failure is None and usage and reason and reason not in _FAILING_REASONS:
            ending.usage, ending.native = usage, reason
            return
        response.completion_stream = _replay(seen, failure)
        async for _ in wrapped(response, ending):
            pass  # its pieces are those already read
    finally:
        # The wrapper's close (shielded from cancellation) closes the SDK stream
        # and its HTTP response: given back first if a replay took its place.
        response.completion_stream = stream
        await response.aclose()


async def _replay(chunks: list[Any], failure: Exception | None) -> AsyncIterator[Any]:
    """The SDK stream as the wrapper would have read it: these chunks, then the failure."""
    for chunk in chunks:
        yield chunk
    if failure is not None:
        raise failure
