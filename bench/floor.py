"""The floor of the side-by-side benchmark: a bare Starlette app answering a JSON POST.

    python -m bench.floor PORT

Served by uvicorn with the same HTTP and event-loop choices as ``smriti serve``
(uvicorn's defaults), so the difference between the two is Smriti's own work.
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def answer(request: Request) -> JSONResponse:
    body = await request.json()
    query = body.get("query", "") if isinstance(body, dict) else ""
    return JSONResponse({"data": {"floor": {"received": len(query)}}})


app = Starlette(routes=[Route("/graphql", answer, methods=["POST"])])


def main(argv: list[str]) -> None:
    uvicorn.run(app, host="127.0.0.1", port=int(argv[0]), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
