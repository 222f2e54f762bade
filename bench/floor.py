"""The floors of the side-by-side benchmark: bare Starlette apps answering a JSON POST.

    python -m bench.floor PORT                 # the floor: reads the body, answers JSON
    python -m bench.floor PORT --litellm URL   # the same plus one litellm.acompletion

Served by uvicorn with the same HTTP and event-loop choices as ``smriti serve``
(uvicorn's defaults), so the difference between the floor and Smriti is Smriti's
own work. The second app makes, for every request, the one call Smriti's send
makes through LiteLLM (the same arguments, as ``api/providers/litellm/transport.py``
sets them, to the OpenAI-compatible stub at URL) and loads the tokenizer Smriti
counts that model's tokens with: what any server answering through LiteLLM the
way Smriti does cannot go below, in time per request and in memory.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
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


app = Starlette(routes=[Route("/graphql", answer, methods=["POST"])])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor")
    parser.add_argument("port", type=int)
    parser.add_argument("--litellm", metavar="URL", help="the stub's base URL")
    args = parser.parse_args(argv)
    served = with_litellm(args.litellm) if args.litellm else app
    uvicorn.run(served, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
