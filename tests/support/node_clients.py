"""What the Node.js client tests share: the errors npm and node report when the
machine is offline (then a test that needs the registry is skipped, not failed)."""

from __future__ import annotations

OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")
