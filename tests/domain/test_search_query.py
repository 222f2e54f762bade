"""The search sanitiser's engine syntax and the snippet window."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain import search_query
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


def _fold_slowly(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@given(st.text())
def test_fold_takes_a_short_cut_only_where_it_gives_the_same_word(word: str) -> None:
    assert search_query.fold(word) == _fold_slowly(word)


def _snippet_reading_everything(text: str, query: search_query.SearchQuery) -> object:
    """The snippet as it was computed before it stopped reading past its window."""
    exact = {_fold_slowly(w) for term in query.terms for w in term.words}
    prefixes = tuple(_fold_slowly(term.words[-1]) for term in query.terms if term.prefix)
    marks = [
        m.span()
        for m in search_query._word_pattern().finditer(text)
        if (w := _fold_slowly(m.group())) in exact or (bool(prefixes) and w.startswith(prefixes))
    ]
    start = 0
    if marks and marks[0][0] > search_query.SNIPPET_BEFORE_CHARS:
        start = search_query._word_start(text, marks[0][0] - search_query.SNIPPET_BEFORE_CHARS)
    end = min(len(text), start + search_query.SNIPPET_MAX_CHARS)
    if end < len(text):
        end = search_query._word_end(text, end)
    return search_query.Snippet(
        text=text[start:end],
        marks=tuple((s - start, e - start) for s, e in marks if s >= start and e <= end),
        cut_before=start > 0,
        cut_after=end < len(text),
    )


_WORDS = st.sampled_from(["heron", "Héron", "HERON", "her", "lake", "ß", "strasse", "x"])


@settings(max_examples=300)
@given(
    st.lists(st.one_of(_WORDS, st.text(max_size=12)), max_size=120),
    st.sampled_from(["heron", "her*", "lake heron", '"lake heron"', "strasse", "x*"]),
)
def test_a_snippet_stops_reading_after_its_window_and_is_unchanged(
    words: list[str], typed: str
) -> None:
    text = " ".join(words)
    query = search_query.parse(typed)
    assert search_query.snippet(text, query) == _snippet_reading_everything(text, query)
