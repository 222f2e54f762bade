"""Reading a checkpoint's content from Markdown: what an agent writes with the
export's headings, and the export itself read back to the same content."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain.checkpoint_markdown import parse_checkpoint_markdown
from api.domain.documents import checkpoint_markdown
from api.domain.types import CheckpointContent
from api.domain.validation import validate_checkpoint_content
from api.errors import ErrorCode, InputError
from tests.domain.builders import checkpoint

AGENT = """# Ship the importer

## Objective
Import ChatGPT exports <without> [losing] ~anything.

## Summary
We read the export.

```python
## a comment, not a heading
if a < b: pass
```

## Decisions
- Use SQLite first
- Stream the file,
  never load it whole
1. Numbered items count too

## Open questions
* Which encoding?

## Entities
+ ChatGPT
"""


def test_an_agents_markdown_is_read_field_by_field() -> None:
    assert parse_checkpoint_markdown(AGENT) == CheckpointContent(
        title="Ship the importer",
        objective="Import ChatGPT exports <without> [losing] ~anything.",
        summary="We read the export.\n\n```python\n## a comment, not a heading\n"
        "if a < b: pass\n```",
        decisions=(
            "Use SQLite first",
            "Stream the file, never load it whole",
            "Numbered items count too",
        ),
        tasks=(),
        open_questions=("Which encoding?",),
        entities=("ChatGPT",),
    )


def test_the_exports_labels_and_headings_in_any_case_are_the_same_fields() -> None:
    text = "# T\n**Objective:** win\n### tasks\n- a\n**Summary:**\n\nsome\ntext\n## ENTITIES:\n- e"
    assert parse_checkpoint_markdown(text) == CheckpointContent(
        title="T", objective="win", summary="some\ntext", tasks=("a",), entities=("e",)
    )


def test_a_title_heading_may_stand_for_the_h1() -> None:
    assert parse_checkpoint_markdown("## Title\nThe plan,\n  in full\n## Tasks\n- x") == (
        CheckpointContent(title="The plan, in full", tasks=("x",))
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Start with the title as a heading: `# Title`."),
        ("## Tasks\n- a", "Start with the title as a heading: `# Title`."),
        ("Just prose", "Line 1: start with the title as a heading: `# Title`."),
        (
            "# T\n\n## Risks\n- a",
            "Unknown heading `Risks`: the headings are Title, Objective, Summary, "
            "Decisions, Tasks, Open questions, Entities.",
        ),
        (
            "# T\n**Notes:** x",
            "Unknown heading `Notes`: the headings are Title, Objective, Summary, "
            "Decisions, Tasks, Open questions, Entities.",
        ),
        (
            "# T\nloose text",
            "Line 2: put text under a heading (Objective, Summary, Decisions, Tasks, "
            "Open questions, Entities).",
        ),
        ("# T\n## Tasks\n- a\n## tasks\n- b", "The heading `Tasks` appears twice."),
        ("# T\n## Title\nU", "The heading `Title` appears twice."),
        (
            "# T\n## Decisions\nnot an item",
            "Under `Decisions`, write each item on a line of its own starting with `- `.",
        ),
    ],
)
def test_what_cannot_be_read_is_an_input_error_naming_it(text: str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_checkpoint_markdown(text)
    assert (raised.value.code, raised.value.message, raised.value.field) == (
        ErrorCode.INVALID,
        message,
        "markdown",
    )


# Text a user might write, without what the export cannot tell apart from its own
# markup on the way back: a heading or label opening a line (#, **), a bullet, a
# backslash (a user's own escape is kept, so reads back unescaped), `&` (`&lt;`),
# and fences (rewritten as code).
_CHARS = st.characters(
    codec="utf-8",
    categories=("L", "N", "Zs", "P", "S"),
    exclude_characters="#*\\&`|\u2028\u2029\x85",
)
_LINE = st.text(_CHARS, min_size=1, max_size=40).map(str.strip).filter(bool)
_PROSE = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)
_ITEMS = st.lists(_LINE.map(lambda s: s.lstrip("-+0123456789.) ").strip()).filter(bool), max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    title=_LINE,
    objective=st.one_of(st.just(""), _LINE, _PROSE),
    summary=st.one_of(st.just(""), _PROSE),
    decisions=_ITEMS,
    tasks=_ITEMS,
    open_questions=_ITEMS,
    entities=_ITEMS,
)
def test_the_export_of_a_checkpoint_reads_back_to_its_content(
    title: str,
    objective: str,
    summary: str,
    decisions: list[str],
    tasks: list[str],
    open_questions: list[str],
    entities: list[str],
) -> None:
    content = validate_checkpoint_content(
        title=title,
        objective=objective,
        summary=summary,
        decisions=decisions,
        tasks=tasks,
        open_questions=open_questions,
        entities=entities,
    )
    parent = checkpoint(1)
    exported = checkpoint_markdown(
        checkpoint(2, parent=parent, body=content), parent_hash=parent.hash
    )
    read = parse_checkpoint_markdown(exported)
    assert validate_checkpoint_content(**read.columns()) == content


def test_an_exported_checkpoint_with_every_field_reads_back() -> None:
    content = CheckpointContent(
        title="Plan <b> [x]",
        objective="One line ~ <b>",
        summary="Two\nlines",
        decisions=("d1", "d2 [link](javascript:x)"),
        tasks=("t",),
        open_questions=("q?",),
        entities=("e",),
    )
    exported = checkpoint_markdown(checkpoint(1, body=content))
    assert exported.startswith(f"### Checkpoint `{checkpoint(1, body=content).short_hash}`")
    assert parse_checkpoint_markdown(exported) == content
