"""Input checks: what is refused, with which code and field, and what is stored."""

from __future__ import annotations

import pytest

from api.domain.types import CheckpointContent
from api.domain.validation import (
    validate_branch_name,
    validate_checkpoint_content,
    validate_content,
    validate_name,
    validate_title,
)
from api.errors import ErrorCode, InputError


def refused(call: object, *args: object, **kwargs: object) -> InputError:
    with pytest.raises(InputError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value


# --- message content -------------------------------------------------------------


@pytest.mark.parametrize("content", ["hi", "  hi  \n", "\u00e9" * 5, "a\tb"])
def test_content_is_returned_unchanged(content: str) -> None:
    assert validate_content(content, max_bytes=10) == content


@pytest.mark.parametrize("content", ["", " ", "\n\t  \r\n", "\u3000"])
def test_blank_content_is_empty(content: str) -> None:
    error = refused(validate_content, content, max_bytes=10)
    assert (error.code, error.field) == (ErrorCode.EMPTY_CONTENT, "content")


def test_content_size_is_counted_in_utf8_bytes() -> None:
    assert validate_content("\u00e9" * 5, max_bytes=10) == "\u00e9" * 5  # 10 bytes
    error = refused(validate_content, "\u00e9" * 5 + "x", max_bytes=10)
    assert (error.code, error.field) == (ErrorCode.CONTENT_TOO_LARGE, "content")
    assert error.message == "The message is 11 bytes; the limit is 10 bytes."


@pytest.mark.parametrize("content", ["a\x00b", "a\ud800b"])
def test_content_that_is_not_text_is_invalid(content: str) -> None:
    error = refused(validate_content, content, max_bytes=100)
    assert (error.code, error.field) == (ErrorCode.INVALID, "content")


# --- branch names ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["nz", "trip/nz-2", "v1.2_final", "0", "a" * 100, "main2"])
def test_branch_name_accepted(name: str) -> None:
    assert validate_branch_name(name) == name


@pytest.mark.parametrize("name", ["main", "Main", "MAIN"])
def test_main_is_reserved(name: str) -> None:
    error = refused(validate_branch_name, name)
    assert (error.code, error.field) == (ErrorCode.BRANCH_RESERVED, "branchName")


@pytest.mark.parametrize(
    "name", ["", "-x", ".x", "/x", "a b", "a" * 101, "caf\u00e9", "x\n", "a:b", "a~1"]
)
def test_branch_name_refused(name: str) -> None:
    error = refused(validate_branch_name, name)
    assert (error.code, error.field) == (ErrorCode.INVALID, "branchName")


# --- titles and names ------------------------------------------------------------


@pytest.mark.parametrize(("check", "field"), [(validate_title, "title"), (validate_name, "name")])
def test_labels_are_stripped_non_empty_and_bounded(check: object, field: str) -> None:
    assert check("  Trip  ") == "Trip"  # type: ignore[operator]
    assert check("x" * 200) == "x" * 200  # type: ignore[operator]
    for bad in ["", "   ", "x" * 201, "a\x00"]:
        error = refused(check, bad)
        assert (error.code, error.field) == (ErrorCode.INVALID, field)


def test_label_field_can_be_named_by_the_caller() -> None:
    assert refused(validate_title, " ", field="input.title").field == "input.title"


# --- checkpoint content (createCheckpoint) ---------------------------------------


def test_omitted_fields_are_empty() -> None:
    assert validate_checkpoint_content(title=" Trip ") == CheckpointContent(title="Trip")


def test_fields_are_stripped_and_repeats_dropped() -> None:
    content = validate_checkpoint_content(
        title="Trip",
        objective=" Plan ",
        summary="\nDone.\n",
        decisions=["A", " A ", "B"],
        tasks=("T",),
        open_questions=["Q?"],
        entities=["Perth"],
    )
    assert content == CheckpointContent(
        title="Trip",
        objective="Plan",
        summary="Done.",
        decisions=("A", "B"),
        tasks=("T",),
        open_questions=("Q?",),
        entities=("Perth",),
    )


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"title": "  "}, "title", "A checkpoint needs a title."),
        ({"title": "x" * 201}, "title", "A title is at most 200 characters."),
        ({"decisions": ["ok", " "]}, "decisions", "decisions[1] is empty."),
        ({"tasks": [f"t{n}" for n in range(51)]}, "tasks", "at most 50 items"),
        ({"entities": ["e" * 1001]}, "entities", "longer than 1000 characters"),
        ({"open_questions": "Why?"}, "openQuestions", "must be a list of strings, not a string"),
        ({"decisions": [None]}, "decisions", "decisions[0] must be a string, not null"),
        ({"summary": "a\x00"}, "summary", "not valid text"),
    ],
)
def test_checkpoint_content_refused(fields: dict[str, object], field: str, says: str) -> None:
    arguments: dict[str, object] = {"title": "Trip", **fields}
    error = refused(validate_checkpoint_content, **arguments)
    assert (error.code, error.field) == (ErrorCode.INVALID, field)
    assert says in error.message


def test_checkpoint_content_at_the_limits_is_kept() -> None:
    content = validate_checkpoint_content(
        title="x" * 200, tasks=[f"t{n}" for n in range(50)], entities=["e" * 1000]
    )
    assert (len(content.title), len(content.tasks), content.entities) == (200, 50, ("e" * 1000,))
