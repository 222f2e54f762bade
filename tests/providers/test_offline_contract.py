"""The offline extractor understands the domain's prompts, and the domain accepts its answers.

The prompts are built by api.domain.extraction; if either side changes its
format, these tests say so before "Draft with AI" breaks on a fresh install.
"""

from __future__ import annotations

from datetime import UTC, datetime

from api.domain.extraction import (
    build_extraction_messages,
    build_title_messages,
    parse_draft,
    parse_title,
)
from api.domain.types import CheckpointContent, Role, Turn
from api.providers.offline import extract_draft

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def turn(sequence: int, role: Role, content: str) -> Turn:
    return Turn(
        id=sequence,
        session_id=1,
        role=role,
        content=content,
        sequence_number=sequence,
        provider="offline",
        model="echo",
        token_count=10,
        created_at=T0,
    )


TURNS = [
    turn(1, Role.USER, "Plan our Japan trip for April. Is a rail pass worth it?"),
    turn(2, Role.ASSISTANT, "Yes for Tokyo to Kyoto. Let's go with the 7-day JR Pass."),
    turn(3, Role.SYSTEM, "a system note the model never sees"),
    turn(4, Role.USER, "TODO: book the ryokan in Kyoto"),
]


def test_offline_draft_parses_as_a_checkpoint() -> None:
    draft = parse_draft(extract_draft(build_extraction_messages(TURNS)))

    assert draft == CheckpointContent(
        title="Plan our Japan trip for April",
        objective="Plan our Japan trip for April.",
        summary="Plan our Japan trip for April. Yes for Tokyo to Kyoto. TODO: book the ryokan in Kyoto",
        decisions=("Let's go with the 7-day JR Pass.",),
        tasks=("book the ryokan in Kyoto",),
        open_questions=("Is a rail pass worth it?",),
        entities=("Japan", "April", "Tokyo", "Kyoto", "JR Pass"),
    )


def test_offline_title_parses_as_a_session_title() -> None:
    title = parse_title(extract_draft(build_title_messages(TURNS)))

    assert title == "Plan our Japan trip for April"
