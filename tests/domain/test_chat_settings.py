"""Chat settings: resolution field by field, bounds, and the prompt's system message."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain.chat_settings import (
    effective,
    inherited,
    validate,
    within_output_limit,
)
from api.domain.context import Budget, ContextFacts, ResolvedContext, resolve
from api.domain.prompt import PREAMBLE, render_checkpoint_block
from api.domain.types import NO_SETTINGS, ChatMessage, ChatSettings, Mount, Session, Turn
from api.errors import ErrorCode, InputError
from tests.domain.builders import lineage, newest_first, session, turn

CHAIN = list(reversed(lineage(2)))  # tip first
ROOMY = Budget(tokens=10_000, max_turns=100)

maybe_text = st.none() | st.text(min_size=1, max_size=20)
maybe_float = st.none() | st.floats(min_value=0, max_value=2)
maybe_int = st.none() | st.integers(min_value=1, max_value=5000)
maybe_stop = st.none() | st.lists(st.text(min_size=1, max_size=5), max_size=4).map(tuple)
any_settings = st.builds(
    ChatSettings,
    instructions=maybe_text,
    temperature=maybe_float,
    top_p=maybe_float,
    max_output_tokens=maybe_int,
    stop=maybe_stop,
)


@given(own=any_settings, defaults=any_settings)
def test_each_field_is_the_sessions_else_the_spaces(
    own: ChatSettings, defaults: ChatSettings
) -> None:
    found = effective(own, defaults)

    for f in fields(ChatSettings):
        mine = getattr(own, f.name)
        assert getattr(found, f.name) == (mine if mine is not None else getattr(defaults, f.name))
    assert effective(own, None) == own


def test_inherited_names_the_fields_the_space_gives() -> None:
    own = ChatSettings(temperature=0.2)
    defaults = ChatSettings(instructions="Be brief.", temperature=1.0, stop=("X",))

    assert inherited(own, defaults) == ("instructions", "stop")
    assert inherited(own, None) == ()


@given(settings_=any_settings)
def test_stored_form_round_trips(settings_: ChatSettings) -> None:
    assert ChatSettings.from_json(settings_.to_json()) == settings_
    assert (settings_.to_json() is None) == settings_.empty


def test_stored_form_uses_graphql_names_and_leaves_out_what_is_not_set() -> None:
    assert ChatSettings(top_p=0.5, max_output_tokens=10, stop=("a",)).to_json() == {
        "topP": 0.5,
        "maxOutputTokens": 10,
        "stop": ["a"],
    }
    assert NO_SETTINGS.to_json() is None


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (ChatSettings(temperature=2.000001), "settings.temperature"),
        (ChatSettings(temperature=-1e-9), "settings.temperature"),
        (ChatSettings(temperature=math.nan), "settings.temperature"),
        (ChatSettings(top_p=0.0), "settings.topP"),
        (ChatSettings(top_p=1.01), "settings.topP"),
        (ChatSettings(max_output_tokens=0), "settings.maxOutputTokens"),
        (ChatSettings(max_output_tokens=4097), "settings.maxOutputTokens"),
        (ChatSettings(stop=("a", "b", "c", "d", "e")), "settings.stop"),
        (ChatSettings(stop=("x" * 101,)), "settings.stop"),
        (ChatSettings(instructions="x" * 20_001), "settings.instructions"),
    ],
)
def test_values_out_of_bounds_are_refused_with_their_field(bad: ChatSettings, field: str) -> None:
    with pytest.raises(InputError) as refused:
        validate(bad, output_limit=4096)

    assert (refused.value.code, refused.value.field) == (ErrorCode.OUT_OF_RANGE, field)


def test_the_bounds_themselves_are_allowed() -> None:
    edge = ChatSettings(
        instructions=" " + "x" * 20_000 + "\n",
        temperature=2.0,
        top_p=1.0,
        max_output_tokens=4096,
        stop=("a", "b", "c", "x" * 100),
    )

    assert validate(edge, output_limit=4096) == ChatSettings(
        instructions="x" * 20_000,
        temperature=2.0,
        top_p=1.0,
        max_output_tokens=4096,
        stop=("a", "b", "c", "x" * 100),
    )
    assert validate(ChatSettings(temperature=0.0), output_limit=1).temperature == 0.0


def test_blank_instructions_and_an_empty_stop_list_are_not_set() -> None:
    assert validate(ChatSettings(instructions=" \n ", stop=()), output_limit=10) == NO_SETTINGS


def test_max_output_tokens_is_sent_within_the_models_limit() -> None:
    assert within_output_limit(ChatSettings(max_output_tokens=9000), 8192).max_output_tokens == 8192
    assert within_output_limit(ChatSettings(max_output_tokens=100), 8192).max_output_tokens == 100
    assert within_output_limit(NO_SETTINGS, 8192) == NO_SETTINGS


# --- the system message -------------------------------------------------------


def words(text: str) -> int:
    return len(text.split())


def resolved(current: Session, history: list[Turn], instructions: str | None) -> ResolvedContext:
    facts = ContextFacts(
        checkpoint=CHAIN[0],
        head=CHAIN[0],
        chain=tuple(CHAIN),
        written_before_head=0,
        recent=tuple(newest_first(history)),
    )
    return resolve(
        current,
        None,
        facts,
        budget=ROOMY,
        count_tokens=words,
        new_message="next",
        settings=ChatSettings(instructions=instructions, temperature=0.5),
    )


FRESH = session(space_id=None, last=2)
HEAD = session(last=2)
MOUNTED = session(last=2, mount=Mount(checkpoint_id=CHAIN[0].id, base_sequence=0))


def test_fresh_the_instructions_alone_are_the_system_message() -> None:
    context = resolved(FRESH, [turn(1), turn(2)], "Be brief.")

    assert context.messages[0] == ChatMessage("system", "Be brief.")
    assert [m.role for m in context.messages] == ["system", "user", "assistant", "user"]
    assert context.settings == ChatSettings(instructions="Be brief.", temperature=0.5)


@pytest.mark.parametrize("current", [HEAD, MOUNTED], ids=["HEAD", "MOUNTED"])
def test_with_checkpoints_the_instructions_come_first_then_the_block(current: Session) -> None:
    context = resolved(current, [turn(1), turn(2)], "Be brief.")

    block = render_checkpoint_block([CHAIN[0]])
    assert block is not None and block.startswith(PREAMBLE)
    assert context.messages[0] == ChatMessage("system", f"Be brief.\n\n{block}")


@pytest.mark.parametrize("current", [FRESH, HEAD, MOUNTED], ids=["FRESH", "HEAD", "MOUNTED"])
def test_without_instructions_the_layout_is_as_before(current: Session) -> None:
    context = resolved(current, [turn(1), turn(2)], None)

    block = render_checkpoint_block([CHAIN[0]])
    if current is FRESH:
        assert context.messages[0].role == "user"
    else:
        assert context.messages[0] == ChatMessage("system", block or "")


@settings(max_examples=60, deadline=None)
@given(
    current=st.sampled_from([FRESH, HEAD, MOUNTED]),
    instructions=st.lists(st.sampled_from(["Be", "brief", "and", "kind."]), min_size=1).map(
        " ".join
    ),
    count=st.integers(min_value=0, max_value=6),
)
def test_the_token_estimate_counts_the_instructions(
    current: Session, instructions: str, count: int
) -> None:
    history = [turn(n) for n in range(1, count + 1)]
    # The same mode, with these turns.
    current = session(space_id=current.space_id, last=count, mount=current.mount)
    plain = resolved(current, history, None)
    instructed = resolved(current, history, instructions)

    assert instructed.plan.turns == plain.plan.turns
    assert instructed.plan.token_estimate == plain.plan.token_estimate + words(instructions)


def test_instructions_take_room_from_the_turns() -> None:
    history = [turn(n) for n in range(1, 7)]  # 10 tokens each
    facts = ContextFacts(None, None, (), 0, tuple(newest_first(history)))
    tight = Budget(tokens=words("next") + 4 * 10 + 5, max_turns=100)

    def window(instructions: str | None) -> list[int]:
        context = resolve(
            session(space_id=None, last=6),
            None,
            facts,
            budget=tight,
            count_tokens=words,
            new_message="next",
            settings=ChatSettings(instructions=instructions),
        )
        return [t.sequence_number for t in context.plan.turns]

    assert window(None) == [3, 4, 5, 6]
    assert window("one two three four five six") == [5, 6]
