"""A session's tags: normalised, compared without case, bounded (api/domain/tags.py)."""

from __future__ import annotations

import pytest

from api.domain.tags import tag_key, validate_tags
from api.errors import ErrorCode, InputError

# FOOD and WORK in fullwidth letters (NFKC makes them ASCII).
FULLWIDTH_FOOD = "\uff26\uff2f\uff2f\uff24"
FULLWIDTH_WORK = "\uff37\uff2f\uff32\uff2b"
# Ten characters that NFKC writes as 180 (ﷺ is an 18-character phrase).
LONG_ONCE_NORMALISED = "\ufdfa" * 10


def test_tags_are_trimmed_collapsed_and_kept_in_their_first_spelling() -> None:
    assert validate_tags(["  Road\t trip ", "road trip", "Food", FULLWIDTH_FOOD, "Straße"]) == (
        ("Road trip", "road trip"),
        ("Food", "food"),
        ("Straße", "strasse"),
    )


def test_keys_ignore_case_width_and_spacing() -> None:
    assert tag_key(f" {FULLWIDTH_WORK}  Notes ") == tag_key("work notes") == "work notes"
    assert tag_key("STRASSE") == tag_key("straße")


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ([""], "A tag cannot be empty."),
        (["ok", "\n \t"], "A tag cannot be empty."),
        (
            ["a\x00b"],
            "A tag contains characters that are not valid text (control characters, "
            "NUL or a lone surrogate).",
        ),
        (
            ["\ud800"],
            "A tag contains characters that are not valid text (control characters, "
            "NUL or a lone surrogate).",
        ),
        (["é" * 41], f'The tag "{"é" * 40}…" is 41 characters; the limit is 40.'),
        ([LONG_ONCE_NORMALISED], f'The tag "{LONG_ONCE_NORMALISED}" is too long once normalised.'),
        ([str(i) for i in range(21)], "A session has at most 20 tags; 21 were given."),
    ],
)
def test_bad_tags_are_input_errors_on_the_tags_field(tags: list[str], message: str) -> None:
    with pytest.raises(InputError) as raised:
        validate_tags(tags)
    assert (raised.value.code, raised.value.message, raised.value.field) == (
        ErrorCode.INVALID,
        message,
        "tags",
    )


def test_twenty_distinct_tags_of_forty_characters_pass() -> None:
    tags = [f"{i:02d}" + "x" * 38 for i in range(20)]
    assert [tag for tag, _ in validate_tags([*tags, tags[0].upper()])] == tags
