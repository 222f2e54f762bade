"""The pieces of bench/concurrent_streams.py: the dripping provider as LiteLLM reads
it, and the benchmark's SSE reader on Smriti's framing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from api.domain.types import ChatMessage, FinishReason
from api.providers import ProviderRegistry, parse_config
from bench.concurrent_streams import (
    FLOOR,
    FLOOR_RAW,
    SMRITI,
    Args,
    Result,
    Run,
    Stream,
    pieces_in,
    probe_phases,
    read_events,
    verdict,
)
from bench.drip import Drip, expected_text, piece_text


@pytest.fixture
async def drip_url() -> AsyncIterator[str]:
    server = await asyncio.start_server(Drip(pieces=5, drip=0.01).handle, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


async def test_the_dripping_provider_reaches_smriti_as_exactly_its_pieces(drip_url: str) -> None:
    config = parse_config(
        f'providers:\n  drip: {{litellm_provider: openai, api_base: "{drip_url}", models: [m]}}\n'
    )
    registry = ProviderRegistry(config, env={})
    chunks = [c async for c in registry.stream([ChatMessage("user", "hi")], "drip/m")]
    assert [c.delta for c in chunks] == [piece_text(i) for i in range(5)] + [""]
    assert chunks[-1].finish is not None and chunks[-1].finish.reason is FinishReason.STOP
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5
    assert expected_text(5) == "w0.w1.w2.w3.w4."


def _chunked(*blocks: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(b), b) for b in blocks) + b"0\r\n\r\n"


async def test_the_reader_counts_smriti_events_framed_with_crlf() -> None:
    reader = asyncio.StreamReader()
    event = b'event: next\r\ndata: {"data":{"messageStream":{"__typename":"%s"%s}}}\r\n\r\n'
    reader.feed_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        + _chunked(
            event % (b"StreamUserTurn", b""),
            event % (b"StreamDelta", b',"delta":"w0."'),
            event % (b"StreamDelta", b',"delta":"w1."'),
            event % (b"StreamAssistantTurn", b""),
            b"event: complete\r\ndata: \r\n\r\n",
        )
    )
    reader.feed_eof()
    stream = Stream()
    await read_events(reader, stream)
    assert (stream.pieces, stream.failure, stream.ended is not None) == (["w0.", "w1."], None, True)


async def test_a_stream_cut_short_is_a_failure() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        + _chunked(b'event: next\ndata: {"data":{"messageStream":{"delta":"w0."}}}\n\n')
    )
    reader.feed_eof()
    stream = Stream()
    await read_events(reader, stream)
    assert (stream.pieces, stream.ended) == (["w0."], None)
    assert stream.failure == "the stream ended before it was complete"


def _run(system: str, streams: int, *, on_time: int, cpu: float, stored: bool = True) -> Run:
    run = Run(system, streams, (0.0, 0.0), on_time=on_time, complete=on_time)
    run.stored = (on_time if stored else 0) if system == SMRITI else None
    run.pieces_delivered, run.cpu_seconds = streams * 10, streams * 10 * cpu / 1000
    run.probe_ms = {"p99": 40.0 + streams / 10}
    return run


def test_the_verdict_compares_the_largest_rungs_kept_up_with() -> None:
    args = Args(["sqlite"], [100, 200, 300], pieces=10, drip=0.2)
    runs = [
        _run(FLOOR, 100, on_time=100, cpu=1.0),
        _run(SMRITI, 100, on_time=100, cpu=1.2),
        _run(FLOOR, 200, on_time=200, cpu=1.0),
        _run(SMRITI, 200, on_time=200, cpu=1.6, stored=False),  # received, not stored
        _run(FLOOR, 300, on_time=299, cpu=1.0),
        _run(SMRITI, 300, on_time=10, cpu=3.0),
        *(_run(FLOOR_RAW, n, on_time=n, cpu=0.8) for n in (100, 200, 300)),
    ]
    checks, beside, summary = verdict(Result("sqlite", "SQLite", runs), args)
    assert (summary["floor_kept_up"], summary["smriti_kept_up"]) == (200, 100)
    assert summary["ratio"] == 0.5
    # CPU over the one rung both kept up with (100), not the overloaded ones.
    assert summary["cpu_ratio"] == pytest.approx(1.2)
    assert summary["probe_at_largest"] == {"p99": 50.0}
    assert [passed for passed, _ in checks] == [False, True, True]
    # The raw floor is printed beside, never judged.
    assert (summary["raw_floor_kept_up"], summary["raw_ratio"]) == (300, 100 / 300)
    assert summary["raw_cpu_ratio"] == pytest.approx(1.5)
    assert len(beside) == 2


def test_pieces_are_counted_in_the_text_whatever_the_events() -> None:
    # Smriti joins pieces waiting together into one StreamDelta.
    assert pieces_in("".join(["w0.w1.", "w2."])) == 3
    assert pieces_in(expected_text(100)) == 100


def test_the_probes_are_told_apart_by_phase_with_the_slowest_placed_in_time() -> None:
    # Two streams started at 100 s: first pieces by 101 s, last pieces from 120 s.
    streams = [
        Stream(started=100.0, first_piece=100.5, last_piece=120.0),
        Stream(started=100.0, first_piece=101.0, last_piece=121.0),
    ]
    samples = [
        (100.2, 300.0),  # sent during the starts
        (101.0, 5.0),  # sent as the last stream got its first piece: still the start
        (110.0, 800.0),  # steady
        (119.5, 600.0),  # sent before the first end, answered after it: the end
        (120.5, 7.0),
    ]
    phases, worst = probe_phases(samples, streams, began=100.0)
    assert {phase: values["n"] for phase, values in phases.items()} == {
        "start": 2,
        "steady": 1,
        "end": 2,
    }
    assert phases["steady"]["max"] == 800.0
    assert worst[:3] == [(10.0, 800.0), (19.5, 600.0), (0.2, 300.0)]
