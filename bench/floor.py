"""The floors of the side-by-side benchmark: bare Starlette apps answering a JSON POST.

    python -m bench.floor PORT                 # the floor: reads the body, answers JSON
    python -m bench.floor PORT --litellm URL   # the same plus one litellm.acompletion
    python -m bench.floor PORT --litellm-stream URL   # one streamed litellm.acompletion, as SSE
    python -m bench.floor PORT --litellm-raw URL      # the same, read beneath LiteLLM's wrapper

Served by uvicorn with the same HTTP and event-loop choices as ``smriti serve``
(uvicorn's defaults), so the difference between the floor and Smriti is Smriti's
own work. The second app makes, for every request, the one call Smriti's send
makes through LiteLLM (the same arguments, as ``api/providers/litellm/transport.py``
sets them, to the OpenAI-compatible stub at URL) and loads the tokenizer Smriti
counts that model's tokens with: what any server answering through LiteLLM the
way Smriti does cannot go below, in time per request and in memory.

The third (``--litellm-stream``, the floor of ``bench/concurrent_streams.py``)
makes the streamed call Smriti's ``messageStream`` makes (``stream=True`` and
``stream_options``, as the transport's ``stream``, which also stops reading once
the finish reason and LiteLLM's usage chunk are in) and forwards each piece to
its client as it arrives, in the SSE framing Smriti's subscription uses
(``event: next`` with ``data: {"data": {"messageStream": {"delta": ...}}}``,
then ``event: complete``). A POST that does not ask for ``text/event-stream``
gets a trivial JSON answer (the benchmark's probe).

The fourth (``--litellm-raw``) makes the same call and reads the same stream
the way Smriti's transport reads an OpenAI-compatible route's
(``api/providers/litellm/streams.py``): beneath LiteLLM's ``CustomStreamWrapper``,
the OpenAI SDK's chunks (its ``completion_stream``) to the end. The issue's
floor is the third; this one says what Smriti costs over a bare app reading
what Smriti reads.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

# The model the benchmark's providers.yaml points at the stub (bench/side_by_side.py).
STUB_LITELLM_MODEL = "openai/model"
SYSTEM = "You are a helpful assistant. Saved checkpoints: none."


async def answer(request: Request) -> JSONResponse:
    body = await request.json()
    query = body.get("query", "") if isinstance(body, dict) else ""
    return JSONResponse({"data": {"floor": {"received": len(query)}}})


def with_litellm(api_base: str) -> Any:
    """The floor plus one LiteLLM call a request; returns the Starlette app."""
    # As the adapter configures it before importing (see api/providers/litellm/loader.py).
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
    import litellm  # here: the plain floor must not pay for its import

    litellm.suppress_debug_info = True
    litellm.token_counter(model=STUB_LITELLM_MODEL, text="warm up")  # as Smriti's warm-up

    async def answer_through_litellm(request: Request) -> JSONResponse:
        body = await request.json()
        content = body.get("variables", {}).get("input", {}).get("content", "")
        response = await litellm.acompletion(
            model=STUB_LITELLM_MODEL,
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": str(content)},
            ],
            api_base=api_base,
            api_key="smriti-no-key",
            timeout=60.0,
            max_tokens=1024,
            num_retries=0,
            max_retries=0,
        )
        text = response.choices[0].message.content or ""
        return JSONResponse({"data": {"floor": {"content": text}}})

    return Starlette(routes=[Route("/graphql", answer_through_litellm, methods=["POST"])])


def streaming_with_litellm(api_base: str, *, beneath: bool = False) -> Any:
    """A bare app forwarding one streamed LiteLLM call per request as SSE; with
    ``beneath``, read from the OpenAI SDK's stream under LiteLLM's wrapper."""
    litellm = _import_litellm()

    async def pieces(content: str) -> Any:
        response = await litellm.acompletion(
            model=STUB_LITELLM_MODEL,
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": content},
            ],
            api_base=api_base,
            api_key="smriti-no-key",
            timeout=60.0,
            max_tokens=1024,
            num_retries=0,
            max_retries=0,
            stream=True,
            stream_options={"include_usage": True},
        )
        if beneath:
            try:
                async for raw in response.completion_stream:
                    for choice in raw.choices:
                        delta = choice.delta.content if choice.delta else None
                        if delta:
                            event = {"data": {"messageStream": {"delta": delta}}}
                            yield f"event: next\ndata: {json.dumps(event)}\n\n"
            finally:
                await response.aclose()
            yield "event: complete\ndata:\n\n"
            return
        finished = False
        try:
            async for chunk in response:
                for choice in chunk.choices or []:
                    finished = finished or choice.finish_reason is not None
                    delta = choice.delta.content if choice.delta else None
                    if delta:
                        event = {"data": {"messageStream": {"delta": delta}}}
                        yield f"event: next\ndata: {json.dumps(event)}\n\n"
                if finished and getattr(chunk, "usage", None):
                    # As the transport: LiteLLM's usage chunk is its last; asking
                    # for more only makes LiteLLM assemble the answer again to log it.
                    break
        finally:
            await response.aclose()
        yield "event: complete\ndata:\n\n"

    async def stream(request: Request) -> Response:
        body = await request.json()
        if "text/event-stream" not in request.headers.get("accept", ""):
            return JSONResponse({"data": {"viewer": {"name": "floor"}}})
        content = body.get("variables", {}).get("input", {}).get("content", "")
        return StreamingResponse(pieces(str(content)), media_type="text/event-stream")

    return Starlette(routes=[Route("/graphql", stream, methods=["POST"])])


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
    import litellm

    litellm.suppress_debug_info = True
    litellm.token_counter(model=STUB_LITELLM_MODEL, text="warm up")  # as Smriti's warm-up
    return litellm


app = Starlette(routes=[Route("/graphql", answer, methods=["POST"])])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor")
    parser.add_argument("port", type=int)
    parser.add_argument("--litellm", metavar="URL", help="the stub's base URL")
    parser.add_argument("--litellm-stream", metavar="URL", help="the dripping stub's base URL")
    parser.add_argument("--litellm-raw", metavar="URL", help="the same, beneath LiteLLM's wrapper")
    args = parser.parse_args(argv)
    if args.litellm_raw:
        served = streaming_with_litellm(args.litellm_raw, beneath=True)
    elif args.litellm_stream:
        served = streaming_with_litellm(args.litellm_stream)
    else:
        served = with_litellm(args.litellm) if args.litellm else app
    uvicorn.run(served, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
