"""A small GraphQL client for tests: one call, exact errors."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette


class GraphQLError(AssertionError):
    pass


def without_cost(body: dict[str, Any]) -> dict[str, Any]:
    """A response without the query cost every answer carries in ``extensions``
    (tests/api/test_query_cost.py checks that), for comparing a whole answer."""
    extensions = {k: v for k, v in body.get("extensions", {}).items() if k != "cost"}
    rest = {k: v for k, v in body.items() if k != "extensions"}
    return {**rest, "extensions": extensions} if extensions else rest


class GraphQLClient:
    def __init__(self, http: httpx.AsyncClient, app: Starlette) -> None:
        self.http = http
        self.app = app

    async def raw(self, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post("/graphql", json={"query": query, "variables": variables})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def __call__(self, query: str, **variables: Any) -> dict[str, Any]:
        """The ``data`` of a query that must not fail at the top level."""
        body = await self.raw(query, **variables)
        if body.get("errors"):
            raise GraphQLError(body["errors"])
        data: dict[str, Any] = body["data"]
        return data

    async def drain(self) -> None:
        """Wait for background work (session titling) to finish."""
        await self.app.state.services.drain()
