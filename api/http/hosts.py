"""Which names the server answers to (against DNS rebinding).

A page on any site can point its own domain name at 127.0.0.1 and then read the
answers of a server bound there: the browser believes it talks to that domain.
Only the Host header tells, so a server bound to loopback answers only requests
that name it localhost, 127.0.0.1 or [::1] (any port), or a name the user
allowed (SMRITI_ALLOWED_HOSTS, "*" for any). Starlette's TrustedHostMiddleware
refuses the rest with 400 before any route runs, websocket handshakes included.
"""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware

from ..errors import ConfigError
from ..settings import Settings

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def trusted_hosts(settings: Settings) -> list[Middleware]:
    """The host check, when there is one: bound to loopback, or names were listed."""
    if not settings.bound_to_loopback and not settings.allowed_hosts:
        return []
    for name in settings.allowed_hosts:
        if "*" in name[1:] or (name.startswith("*") and name != "*" and name[:2] != "*."):
            raise ConfigError(
                f"SMRITI_ALLOWED_HOSTS: {name!r}: a wildcard must be '*' or like '*.example.com'."
            )
    allowed = [*LOOPBACK_NAMES, *settings.allowed_hosts]
    return [Middleware(TrustedHostMiddleware, allowed_hosts=allowed, www_redirect=False)]
