"""Markdown and notebook renderers, and the whole-space verification walk."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import nbformat
import pytest

from api.domain import documents, export_format
from api.domain.types import CheckpointContent, Space
from api.domain.verification import BreakReason, verify_lineage
from tests.domain.builders import T0, checkpoint, lineage, session, turn


def test_checkpoints_sit_after_the_turn_they_were_saved_at() -> None:
    turns = [turn(1), turn(2), turn(3), turn(4)]
    first = checkpoint(7, base_sequence=2)
    early = checkpoint(8, base_sequence=0)
    late = checkpoint(9, base_sequence=4)
    items = documents.in_order(list(reversed(turns)), [late, first, early])
    assert items == [early, turns[0], turns[1], first, turns[2], turns[3], late]


def test_session_markdown_is_exact() -> None:
    saved = checkpoint(
        7,
        base_sequence=2,
        body=CheckpointContent(
            title="Plan", summary="We fly.", decisions=("Book it",), tasks=("Pack", "Go")
        ),
    )
    text = documents.session_markdown(
        session(last=2), documents.in_order([turn(1), turn(2)], [saved])
    )
    # Dates as people write them (the JSON export keeps exact timestamps).
    assert text == (
        "# A session\n\n"
        "Branch main · model offline/echo · started 1 May 2024, 12:00 UTC\n"
        "\n### 1. You · 1 May 2024, 12:00 UTC\n\nturn 1\n"
        "\n### 2. Model (offline/echo) · 1 May 2024, 12:00 UTC\n\nturn 2\n"
        f"\n### Checkpoint `{saved.hash[:7]}` · Plan\n\n"
        "- Branch: main\n"
        "- Saved: 1 May 2024, 12:07 UTC by user\n"
        f"- Hash: `{saved.hash}`\n\n"
        "**Summary:** We fly.\n\n"
        "**Decisions:**\n\n- Book it\n\n"
        "**Tasks:**\n\n- Pack\n- Go\n"
    )


@pytest.mark.parametrize(
    ("moment", "written"),
    [
        (datetime(2024, 5, 1, 12, 0, 59, tzinfo=UTC), "1 May 2024, 12:00 UTC"),
        (datetime(2024, 12, 31, 23, 5), "31 December 2024, 23:05 UTC"),  # naive: UTC
        (
            datetime(2025, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            "31 December 2024, 20:00 UTC",
        ),
    ],
)
def test_dates_read_as_people_write_them(moment: datetime, written: str) -> None:
    assert documents.readable_date(moment) == written


def test_a_reply_meant_as_lines_keeps_its_lines() -> None:
    poem = turn(2, content="Roses are red,\nviolets are blue.\n\n- a list\n- stays")
    assert documents.turn_markdown(poem).endswith(
        "\n\nRoses are red,\\\nviolets are blue.\n\n- a list\n- stays\n"
    )


def test_lineage_markdown_names_parents_and_heads() -> None:
    chain = lineage(2)
    space = Space(id=10, name="Trips", description="", owner_id=1, created_at=T0, updated_at=T0)
    text = documents.lineage_markdown(
        space, chain, [documents.LineageBranch("main", chain[1].hash)]
    )
    assert text.startswith(
        f"# Trips\n\n## Branches\n\n- main: head `{chain[1].hash[:7]}`\n\n## Checkpoints\n"
    )
    assert f"- Parent: `{chain[0].hash[:7]}`" in text
    assert text.count("- Parent:") == 1


def test_the_notebook_is_valid_nbformat_4() -> None:
    saved = checkpoint(7, base_sequence=1)
    notebook = documents.session_notebook(
        session(), documents.in_order([turn(1), turn(2)], [saved])
    )
    parsed = nbformat.reads(json.dumps(notebook), as_version=4)
    nbformat.validate(parsed)
    assert [c.id for c in parsed.cells] == ["session-1", "turn-1", "checkpoint-7", "turn-2"]
    assert {c.cell_type for c in parsed.cells} == {"markdown"}
    assert parsed.cells[1].source == "### 1. You · 1 May 2024, 12:00 UTC\n\nturn 1\n"
    # The metadata keeps the exact moment.
    assert parsed.cells[1].metadata["smriti"]["createdAt"] == "2024-05-01T12:00:01.000000Z"
    assert parsed.cells[2].metadata["smriti"] == {"checkpoint": saved.hash, "branch": "main"}


def test_verification_walks_every_branch_of_the_tree() -> None:
    root, child = lineage(2)
    side = checkpoint(3, parent=root, branch_name="alt")
    assert verify_lineage([root, child, side]).ok
    forged = checkpoint(3, parent=root, branch_name="alt", hash="0" * 64)
    result = verify_lineage([root, child, forged])
    assert (result.checked, result.broken and result.broken.reason) == (
        3,
        BreakReason.HASH_MISMATCH,
    )
    assert result.broken is not None and result.broken.expected_hash == side.hash
    orphan = checkpoint(4, parent=side)
    assert verify_lineage([root, orphan]).broken.reason is BreakReason.MISSING_PARENT  # type: ignore[union-attr]


def test_the_json_export_written_in_chunks_is_the_whole_document() -> None:
    chain = lineage(2)
    space = Space(id=10, name="Trips ☂", description="", owner_id=1, created_at=T0, updated_at=T0)
    sessions = [
        export_format.SessionExport(session(id=i, space_id=None), (turn(1), turn(2)))
        for i in (1, 2)
    ]
    spaces = [
        export_format.SpaceExport(
            space=space,
            hash_space_id=10,
            branches=(export_format.Branch("main", chain[1].id, T0, T0),),
            checkpoints=tuple(chain),
            sessions=tuple(sessions[:1]),
        ),
        export_format.SpaceExport(space, 11, (), (), ()),
    ]
    for export in [
        export_format.Export(spaces=(), sessions=()),
        export_format.Export(spaces=tuple(spaces), sessions=()),
        export_format.Export(spaces=(), sessions=tuple(sessions)),
        export_format.Export(spaces=tuple(spaces), sessions=tuple(sessions)),
    ]:
        writer = export_format.DocumentWriter(T0)
        chunks = [
            writer.head(),
            *(writer.space(s) for s in export.spaces),
            writer.sessions(),
            *(writer.session(s) for s in export.sessions),
            writer.tail(),
        ]
        whole = export_format.to_document(export, exported_at=T0)
        assert "".join(chunks) == json.dumps(whole, ensure_ascii=False, indent=1) + "\n"


def test_hostile_checkpoint_fields_are_written_inert() -> None:
    saved = checkpoint(
        7,
        body=CheckpointContent(
            title="<script>alert(1)</script>",
            objective="[go](javascript:alert(2))",
            summary="![p](https://evil.example/p.png)\n```\n<b>code</b>\n```",
            decisions=("<iframe src=x></iframe>",),
        ),
    )
    assert documents.checkpoint_markdown(saved) == (
        f"### Checkpoint `{saved.hash[:7]}` · &lt;script>alert(1)&lt;/script>\n\n"
        "- Branch: main\n"
        "- Saved: 1 May 2024, 12:07 UTC by user\n"
        f"- Hash: `{saved.hash}`\n\n"
        "**Objective:** \\[go\\](javascript:alert(2))\n\n"
        "**Summary:**\n\n"
        "[p](https://evil.example/p.png)\n\n```\n<b>code</b>\n```\n\n"
        "**Decisions:**\n\n- &lt;iframe src=x>&lt;/iframe>\n"
    )


def test_jupyter_opens_the_notebook_without_asking_for_a_kernel() -> None:
    notebook = documents.session_notebook(session(), [turn(1)])
    assert notebook["metadata"] == {
        "title": "A session",
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }


def test_a_download_is_named_from_its_title() -> None:
    assert documents.file_stem("Trip to Queensland", "x") == "Trip to Queensland"
    assert documents.file_stem("Plan: A/B test? <v2>", "x") == "Plan A B test v2"
    assert documents.file_stem("  tabs\tand\nlines  ", "x") == "tabs and lines"
    assert documents.file_stem("Café — naïve 日本", "x") == "Café — naïve 日本"
    assert documents.file_stem("...hidden.", "x") == "hidden"
    assert documents.file_stem("a" * 100, "x") == "a" * 80
    assert documents.file_stem("a" * 79 + " b", "x") == "a" * 79
    for nothing in ("", "   ", "///", "..", "con", "LPT1"):
        assert documents.file_stem(nothing, "smriti-session-4") == "smriti-session-4"
