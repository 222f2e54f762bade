"""The search sanitiser's engine syntax and the snippet window."""

from __future__ import annotations

from api.domain.search_query import Snippet, parse, snippet, to_fts5, to_tsquery


def test_terms_become_quoted_engine_syntax() -> None:
    query = parse('Fox NEAR(x "red  dog" e-mail chec* OR \'s')
    assert to_fts5(query) == '"fox" "near x" "red dog" "e mail" "chec" * "or" "s"'
    assert to_tsquery(query) == (
        "'fox' & ('near' <-> 'x') & ('red' <-> 'dog') & ('e' <-> 'mail') & 'chec':* & 'or' & 's'"
    )


def test_a_long_text_is_cut_around_the_first_match_at_word_boundaries() -> None:
    text = "alpha " * 20 + "Café crème " + "omega " * 40
    # 60 characters before the match, 200 in all, moved back off the cut word.
    assert snippet(text, parse("cafe")) == Snippet(
        text="alpha " * 10 + "Café crème " + "omega " * 21,
        marks=((60, 64),),
        cut_before=True,
        cut_after=True,
    )


def test_a_short_text_is_whole() -> None:
    assert snippet("naïve ideas", parse("naive idea*")) == Snippet(
        text="naïve ideas", marks=((0, 5), (6, 11)), cut_before=False, cut_after=False
    )
