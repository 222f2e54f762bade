"""The transport fixture: each MCP test that takes it runs over stdio and over
streamable HTTP."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)
