"""Settings read from the environment."""

from __future__ import annotations

import pytest

from api.errors import ConfigError
from api.settings import DEFAULT_OFFLINE_STREAM_DELAY_MS, Settings

URL = "sqlite:///tmp/smriti-settings-test.sqlite3"


def test_the_offline_echo_streams_at_a_readable_pace_unless_told_otherwise() -> None:
    assert DEFAULT_OFFLINE_STREAM_DELAY_MS == 60
    default = Settings.from_environment({}, database_url=URL)
    instant = Settings.from_environment({"SMRITI_OFFLINE_STREAM_DELAY_MS": "0"}, database_url=URL)
    slow = Settings.from_environment({"SMRITI_OFFLINE_STREAM_DELAY_MS": "250"}, database_url=URL)

    assert (default.offline_stream_delay_ms, instant.offline_stream_delay_ms) == (60, 0)
    assert slow.offline_stream_delay_ms == 250
    # Settings built in code (the tests' apps) stream at once.
    assert Settings(database_url=URL, providers_file=None).offline_stream_delay_ms == 0


def test_the_providers_preload_at_start_unless_turned_off() -> None:
    def preload(value: str | None) -> bool:
        env = {} if value is None else {"SMRITI_PRELOAD_PROVIDERS": value}
        return Settings.from_environment(env, database_url=URL).preload_providers

    assert [preload(v) for v in (None, "", "1", "on", "TRUE", "0", "no", "Off")] == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    with pytest.raises(ConfigError) as refused:
        preload("maybe")
    assert str(refused.value) == "SMRITI_PRELOAD_PROVIDERS must be 1 or 0 (on or off), not 'maybe'."
