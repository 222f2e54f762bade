"""What a tool call answered, as one value: its structured result, or for a tool
error GraphQL's error object (from the result's `_meta`) beside what was written
before it failed. A tool error carries no structuredContent: that is the tool's
result and must match its output schema."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from api.mcp.server import done_of, error_of


def outcome(result: types.CallToolResult) -> Any:
    if not result.is_error:
        return result.structured_content
    assert result.structured_content is None, result.structured_content
    return {"error": error_of(result), **done_of(result)}
