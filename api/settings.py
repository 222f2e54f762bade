"""Run-time settings: flags, then environment, then defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from api.domain.types import MemoryScope

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROVIDERS_FILE = REPOSITORY_ROOT / "providers.yaml"
# A readable pace for the offline echo (a word every 60 ms: a reply takes 1 to 3 s).
DEFAULT_OFFLINE_STREAM_DELAY_MS = 60


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
    # Tokens kept free for the model's answer.
    answer_reserve_tokens: int = 1024
    default_memory_scope: MemoryScope = MemoryScope.LATEST_1
    provider_timeout_seconds: float = 60.0
    max_query_depth: int = 15
    max_aliases: int = 30
    max_query_tokens: int = 2000
    max_page_size: int = 100
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    title_sessions: bool = True
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
    ) -> Settings:
        from api.store.database import normalize_url, sqlite_url

        env = os.environ if env is None else env
        url = database_url or env.get("SMRITI_DATABASE_URL")
        providers = providers_file or env.get("SMRITI_PROVIDERS_FILE")
        provider_path = Path(providers) if providers else None
        if provider_path is None and DEFAULT_PROVIDERS_FILE.exists():
            provider_path = DEFAULT_PROVIDERS_FILE
        return cls(
            database_url=normalize_url(url) if url else sqlite_url(default_database_path()),
            providers_file=provider_path,
            max_content_bytes=int(env.get("SMRITI_MAX_CONTENT_BYTES", 1024 * 1024)),
            max_window_turns=int(env.get("SMRITI_MAX_WINDOW_TURNS", 50)),
            offline_stream_delay_ms=int(
                env.get("SMRITI_OFFLINE_STREAM_DELAY_MS", DEFAULT_OFFLINE_STREAM_DELAY_MS)
            ),
            provider_timeout_seconds=float(env.get("SMRITI_PROVIDER_TIMEOUT", 60)),
            allowed_origins=tuple(
                o.strip() for o in env.get("SMRITI_ALLOWED_ORIGINS", "").split(",") if o.strip()
            ),
        )
