"""Headers every HTTP response carries: no MIME sniffing, no framing, and a
Content-Security-Policy that lets a page load only this server's own files.

A response that sets its own policy (the GraphiQL page, whose inline script is
allowed by its hash) keeps it; every other response gets the web UI's.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The web UI is plain files from this server: no inline script or style, no
# frames, images only as data: URLs (the favicon); fetch only back to itself.
WEBUI_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class SecurityHeaders:
    def __init__(self, app: ASGIApp, *, policy: str = WEBUI_POLICY) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", self.policy)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                # For browsers that predate frame-ancestors.
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("Referrer-Policy", "same-origin")
            await send(message)

        await self.app(scope, receive, send_with_headers)
