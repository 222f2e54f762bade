"""Run-time settings: flags, then environment, then defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from .bundled import PROVIDERS_FILE
from .database_url import normalize_url, sqlite_url
from .domain.sign_in import SignInLimits
from .domain.types import MemoryScope
from .errors import ConfigError

# The bundled providers.yaml (api/bundled.py): OpenAI, Anthropic, OpenRouter, Ollama
# and the offline models; SMRITI_PROVIDERS_FILE or --providers names another.
DEFAULT_PROVIDERS_FILE = PROVIDERS_FILE
# A readable pace for the offline echo (a word every 60 ms: a reply takes 1 to 3 s).
DEFAULT_OFFLINE_STREAM_DELAY_MS = 60
# The largest `first`/`last` of Session.turns (SMRITI_MAX_TURN_PAGE_SIZE).
MAX_TURN_PAGE_SIZE = 1000

# Every variable Settings.from_environment reads, as `smriti serve --help` lists
# them (tests/test_cli.py checks that the two lists are the same).
ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("SMRITI_DATABASE_URL", "--database (default: a SQLite file in the user data directory)"),
    ("SMRITI_PROVIDERS_FILE", "--providers (default: the bundled providers.yaml)"),
    ("SMRITI_WORKERS", "--workers"),
    ("SMRITI_AUTH", "--auth: accounts or auto"),
    ("SMRITI_FORWARDED_ALLOW_IPS", "--forwarded-allow-ips"),
    ("SMRITI_ALLOWED_HOSTS", "more names the Host header may carry, comma-separated"),
    ("SMRITI_ALLOWED_ORIGINS", "origins whose pages may open the websocket, comma-separated"),
    ("SMRITI_PRELOAD_PROVIDERS", "1 (default): load LiteLLM at start, in the background; 0: later"),
    ("SMRITI_PROVIDER_TIMEOUT", "seconds a model call waits for its answer or next piece (60)"),
    ("SMRITI_ANSWER_RESERVE_TOKENS", "tokens kept free for the answer, sent as max_tokens (1024)"),
    ("SMRITI_MAX_WINDOW_TURNS", "most turns in a context window (50)"),
    ("SMRITI_MAX_CONTENT_BYTES", "largest message, in bytes (1048576)"),
    ("SMRITI_MAX_BODY_BYTES", "largest request body, in bytes (6 x the largest message + 64 KiB)"),
    ("SMRITI_MAX_QUERY_NODES", "most objects a query may return, worst case (50000)"),
    ("SMRITI_MAX_TURN_PAGE_SIZE", "largest first/last of Session.turns (1000)"),
    ("SMRITI_OFFLINE_STREAM_DELAY_MS", "milliseconds between the offline echo's words (60)"),
    ("SMRITI_SESSION_IDLE_SECONDS", "a browser session ends after this long unused (604800)"),
)


def default_database_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("smriti", appauthor=False)) / "smriti.sqlite3"


@dataclass(frozen=True)
class Settings:
    database_url: str
    providers_file: Path | None
    max_content_bytes: int = 1024 * 1024
    # The window never holds more turns than this, whatever the token budget.
    max_window_turns: int = 50
    # Tokens kept free in the window for the model's answer, and the max_tokens
    # every model call is sent: one number, so the answer fits what was kept.
    answer_reserve_tokens: int = 1024
    default_memory_scope: MemoryScope = MemoryScope.LATEST_1
    provider_timeout_seconds: float = 60.0
    max_query_depth: int = 15
    max_aliases: int = 30
    max_query_tokens: int = 2000
    max_page_size: int = 100
    # A session's turns come in larger pages: reading a long session page by
    # page paid ~4 ms of fixed cost per request (docs/benchmarks.md, whole reads).
    max_turn_page_size: int = MAX_TURN_PAGE_SIZE
    # No list in a request's variables may be longer (every list field takes 50 at most).
    max_input_list_items: int = 1000
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    title_sessions: bool = True
    # Load the providers' libraries (LiteLLM: ~3 s of CPU, ~155 MB) in the background
    # at start, so the first message does not wait; off, they load at the first call.
    preload_providers: bool = True
    # Worst-case objects a query may return (its `first`/`last` multiplied out),
    # by GET or POST alike (api/graphql/core/cost.py says why).
    max_query_nodes: int = 50_000
    # None: room for the largest message (max_content_bytes) at its worst JSON
    # escaping (a control character is 6 bytes as \u0000) plus the rest of the request.
    max_body_bytes: int | None = None
    # `smriti serve --host` is a loopback address: only loopback names (plus
    # allowed_hosts) may be in the Host header, against DNS rebinding.
    bound_to_loopback: bool = True
    allowed_hosts: tuple[str, ...] = field(default_factory=tuple)
    # `smriti serve` processes (SMRITI_WORKERS); None: api.workers.default_workers.
    workers: int | None = None
    # "accounts": every request signs in, even before an account exists. None
    # (the default): accounts as soon as one exists, or when not bound to loopback.
    auth: str | None = None
    # A browser session ends after this long without a request.
    session_idle_seconds: int = 7 * 24 * 3600
    # The proxies whose X-Forwarded-For / X-Forwarded-Proto are believed
    # (`smriti serve --forwarded-allow-ips`, SMRITI_FORWARDED_ALLOW_IPS): addresses,
    # networks, or "*". Empty (the default): none, so a client cannot name its own
    # address (the sign-in limits count by it) or make the cookie Secure over HTTP.
    forwarded_allow_ips: tuple[str, ...] = field(default_factory=tuple)
    # Failed sign-ins allowed per account and per address within the window.
    sign_in_failures: int = 10
    sign_in_window_seconds: int = 15 * 60

    @property
    def sign_in_limits(self) -> SignInLimits:
        return SignInLimits(
            limit=self.sign_in_failures, window=timedelta(seconds=self.sign_in_window_seconds)
        )

    @property
    def body_limit(self) -> int:
        """The largest request body read, in bytes."""
        if self.max_body_bytes is not None:
            return self.max_body_bytes
        return 6 * self.max_content_bytes + 64 * 1024

    # Pause between the offline echo's streamed words, so a reply can be
    # watched (and stopped) without a real provider. 0 (instant) unless the
    # environment says otherwise: `smriti serve` reads SMRITI_OFFLINE_STREAM_DELAY_MS.
    offline_stream_delay_ms: int = 0

    @classmethod
    def from_environment(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        database_url: str | None = None,
        providers_file: str | None = None,
        host: str = "127.0.0.1",
        auth: str | None = None,
        forwarded_allow_ips: str | None = None,
    ) -> Settings:
        env = os.environ if env is None else env
        url = database_url or env.get("SMRITI_DATABASE_URL")
        providers = providers_file or env.get("SMRITI_PROVIDERS_FILE")
        provider_path = Path(providers) if providers else None
        if provider_path is None:
            provider_path = DEFAULT_PROVIDERS_FILE
        return cls(
            database_url=normalize_url(url) if url else sqlite_url(default_database_path()),
            providers_file=provider_path,
            max_content_bytes=_whole(env, "SMRITI_MAX_CONTENT_BYTES", 1024 * 1024, 1),
            max_window_turns=_whole(env, "SMRITI_MAX_WINDOW_TURNS", 50, 1),
            answer_reserve_tokens=_whole(env, "SMRITI_ANSWER_RESERVE_TOKENS", 1024, 1),
            offline_stream_delay_ms=_whole(
                env, "SMRITI_OFFLINE_STREAM_DELAY_MS", DEFAULT_OFFLINE_STREAM_DELAY_MS, 0
            ),
            provider_timeout_seconds=_seconds(env, "SMRITI_PROVIDER_TIMEOUT", 60.0),
            allowed_origins=_names(env.get("SMRITI_ALLOWED_ORIGINS", "")),
            max_turn_page_size=_whole(env, "SMRITI_MAX_TURN_PAGE_SIZE", MAX_TURN_PAGE_SIZE, 1),
            max_query_nodes=_whole(env, "SMRITI_MAX_QUERY_NODES", 50_000, 1),
            max_body_bytes=_whole(env, "SMRITI_MAX_BODY_BYTES", 0, 1024)
            if env.get("SMRITI_MAX_BODY_BYTES", "").strip()
            else None,
            bound_to_loopback=is_loopback(host),
            allowed_hosts=_names(env.get("SMRITI_ALLOWED_HOSTS", "")),
            workers=_whole(env, "SMRITI_WORKERS", 1, 1)
            if env.get("SMRITI_WORKERS", "").strip()
            else None,
            auth=_auth(auth or env.get("SMRITI_AUTH", "")),
            forwarded_allow_ips=_proxies(
                forwarded_allow_ips
                if forwarded_allow_ips is not None
                else env.get("SMRITI_FORWARDED_ALLOW_IPS", "")
            ),
            session_idle_seconds=_whole(env, "SMRITI_SESSION_IDLE_SECONDS", 7 * 24 * 3600, 60),
            preload_providers=_flag(env, "SMRITI_PRELOAD_PROVIDERS", True),
        )


def _whole(env: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    """A whole-number setting; anything else stops start-up with one clear line."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw[:40]!r}.") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, not {value}.")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """On or off: 1/0, true/false, yes/no, on/off (any case); anything else stops start-up."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    value = raw.lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0 (on or off), not {raw[:40]!r}.")


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {raw[:40]!r}.") from None
    if not 0 < value < float("inf"):
        raise ConfigError(f"{name} must be a number of seconds above 0, not {raw[:40]!r}.")
    return value


def _auth(raw: str) -> str | None:
    value = raw.strip().lower()
    if value in ("", "auto"):
        return None
    if value != "accounts":
        raise ConfigError(f"SMRITI_AUTH must be 'accounts' or 'auto', not {raw[:40]!r}.")
    return value


def _proxies(listed: str) -> tuple[str, ...]:
    """Trusted proxies: each an address, a network (10.0.0.0/8), or "*" alone.

    Checked here because uvicorn takes a malformed entry as a literal that
    never matches, and the operator would never learn why.
    """
    import ipaddress

    proxies = _names(listed)
    if proxies == ("*",):
        return proxies
    for proxy in proxies:
        try:
            if "/" in proxy:
                ipaddress.ip_network(proxy)
            else:
                ipaddress.ip_address(proxy)
        except ValueError:
            raise ConfigError(
                f"--forwarded-allow-ips (SMRITI_FORWARDED_ALLOW_IPS) takes addresses, "
                f'networks like 10.0.0.0/8, or "*" alone, not {proxy[:40]!r}.'
            ) from None
    return proxies


def _names(listed: str) -> tuple[str, ...]:
    """A comma-separated setting."""
    return tuple(name.strip() for name in listed.split(",") if name.strip())


def is_loopback(host: str) -> bool:
    """Whether `--host` binds to this machine only ("localhost", 127.0.0.0/8, ::1)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
