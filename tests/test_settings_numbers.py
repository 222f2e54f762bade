"""Numeric settings from the environment are checked at start-up, with one clear line."""

from __future__ import annotations

import pytest

from api.errors import ConfigError
from api.settings import Settings


def settings(**env: str) -> Settings:
    return Settings.from_environment(env, database_url="sqlite://:memory:")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "SMRITI_MAX_WINDOW_TURNS",
            "ten",
            "SMRITI_MAX_WINDOW_TURNS must be a whole number, not 'ten'.",
        ),
        ("SMRITI_MAX_WINDOW_TURNS", "0", "SMRITI_MAX_WINDOW_TURNS must be at least 1, not 0."),
        ("SMRITI_MAX_CONTENT_BYTES", "-5", "SMRITI_MAX_CONTENT_BYTES must be at least 1, not -5."),
        (
            "SMRITI_ANSWER_RESERVE_TOKENS",
            "1.5",
            "SMRITI_ANSWER_RESERVE_TOKENS must be a whole number, not '1.5'.",
        ),
        (
            "SMRITI_OFFLINE_STREAM_DELAY_MS",
            "-1",
            "SMRITI_OFFLINE_STREAM_DELAY_MS must be at least 0, not -1.",
        ),
        ("SMRITI_MAX_QUERY_NODES", "0", "SMRITI_MAX_QUERY_NODES must be at least 1, not 0."),
        ("SMRITI_MAX_BODY_BYTES", "10", "SMRITI_MAX_BODY_BYTES must be at least 1024, not 10."),
        (
            "SMRITI_PROVIDER_TIMEOUT",
            "soon",
            "SMRITI_PROVIDER_TIMEOUT must be a number of seconds, not 'soon'.",
        ),
        (
            "SMRITI_PROVIDER_TIMEOUT",
            "0",
            "SMRITI_PROVIDER_TIMEOUT must be a number of seconds above 0, not '0'.",
        ),
        (
            "SMRITI_PROVIDER_TIMEOUT",
            "nan",
            "SMRITI_PROVIDER_TIMEOUT must be a number of seconds above 0, not 'nan'.",
        ),
        (
            "SMRITI_PROVIDER_TIMEOUT",
            "inf",
            "SMRITI_PROVIDER_TIMEOUT must be a number of seconds above 0, not 'inf'.",
        ),
    ],
)
def test_a_bad_number_stops_start_up_with_its_name(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        settings(**{name: value})
    assert raised.value.message == message


def test_good_numbers_and_blanks() -> None:
    chosen = settings(
        SMRITI_MAX_WINDOW_TURNS=" 7 ",
        SMRITI_MAX_QUERY_NODES="20_000",
        SMRITI_OFFLINE_STREAM_DELAY_MS="0",
        SMRITI_PROVIDER_TIMEOUT="2.5",
        SMRITI_MAX_BODY_BYTES="",
    )
    assert (
        chosen.max_window_turns,
        chosen.max_query_nodes,
        chosen.offline_stream_delay_ms,
        chosen.provider_timeout_seconds,
        chosen.max_body_bytes,
    ) == (7, 20_000, 0, 2.5, None)
