"""What a user types into the search box, turned into something each engine can run.

User text is never handed to an engine as query syntax: a stray quote or
``NEAR(`` must not become a syntax error, and ``OR``/``NOT`` are words here.
The user's syntax is small and the same on both engines:

- words, in any order, all required;
- ``"a phrase"``: the words next to each other, in order (an unclosed quote
  runs to the end of the query);
- ``word*``: any word starting with ``word`` (``"a phr*"``: on a phrase's last word).

A word is a run of letters and digits, as both engines' tokenisers see it
(FTS5 ``unicode61``, PostgreSQL's default parser), so ``e-mail`` is the
phrase ``"e mail"`` and punctuation never reaches the engine. Each word is
then quoted for the engine, so keywords and operators lose their meaning.
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from dataclasses import dataclass

from .validation import FieldProblem


class Kind(enum.IntEnum):
    """The kinds of object search finds, as the index (migration 0004) numbers them."""

    TURN = 0
    CHECKPOINT = 1
    SESSION = 2
    SPACE = 3


QUERY_MAX_CHARS = 500
QUERY_MAX_TERMS = 20


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    """Letters, digits and combining marks: the vowel signs of Devanagari and other
    scripts are marks, not letters, and belong inside their word (as both engines
    see it). Built once, on first use (it scans the code points of the BMP and SMP)."""
    marks = "".join(
        re.escape(chr(c)) for c in range(0x20000) if unicodedata.category(chr(c)).startswith("M")
    )
    return re.compile(rf"(?:[^\W_]|[{marks}])+")


_CHUNK = re.compile(r'"([^"]*)("|$)|([^\s"]+)')

# Snippet shape: how much text around the first match, and where to mark.
SNIPPET_BEFORE_CHARS = 60
SNIPPET_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Term:
    """One required term: a word, or a phrase of words; ``prefix`` applies to its last word."""

    words: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    terms: tuple[Term, ...]


def parse(text: str, *, field: str = "query") -> SearchQuery:
    """The terms of ``text``; FieldProblem when it is too long or has no word at all."""
    if len(text) > QUERY_MAX_CHARS:
        raise FieldProblem(field, f"A search is at most {QUERY_MAX_CHARS} characters.")
    terms: list[Term] = []
    for match in _CHUNK.finditer(text):
        phrase, _closing, bare = match.groups()
        chunk = phrase if bare is None else bare
        words = tuple(word.casefold() for word in _word_pattern().findall(chunk))
        if not words:
            continue
        prefix = chunk.rstrip().endswith("*")
        terms.append(Term(words=words, prefix=prefix))
    if not terms:
        raise FieldProblem(field, "A search needs at least one word (letters or digits).")
    if len(terms) > QUERY_MAX_TERMS:
        raise FieldProblem(field, f"A search has at most {QUERY_MAX_TERMS} words or phrases.")
    return SearchQuery(terms=tuple(terms))


def to_fts5(query: SearchQuery) -> str:
    """An FTS5 MATCH expression: every term a quoted string (implicit AND)."""
    parts = []
    for term in query.terms:
        quoted = '"' + " ".join(term.words).replace('"', '""') + '"'
        parts.append(quoted + " *" if term.prefix else quoted)
    return " ".join(parts)


def to_tsquery(query: SearchQuery) -> str:
    """A PostgreSQL ``to_tsquery`` text: quoted lexemes, ``<->`` within a phrase, ``&`` between."""
    parts = []
    for term in query.terms:
        lexemes = ["'" + word.replace("'", "''") + "'" for word in term.words]
        if term.prefix:
            lexemes[-1] += ":*"
        parts.append("(" + " <-> ".join(lexemes) + ")" if len(lexemes) > 1 else lexemes[0])
    return " & ".join(parts)


def fold(word: str) -> str:
    """``word`` compared as FTS5's ``remove_diacritics 2`` compares it: case and accents dropped."""
    if word.isascii():
        return word.lower()  # the same, for the words most text is made of
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True, slots=True)
class Snippet:
    """The part of a text around its first match: ``marks`` are (start, end) offsets
    into ``text`` of each matching word; ``cut_before``/``cut_after`` say where the
    original text goes on."""

    text: str
    marks: tuple[tuple[int, int], ...]
    cut_before: bool
    cut_after: bool


def snippet(text: str, query: SearchQuery) -> Snippet:
    """The words of ``text`` that match ``query``, in a window around the first one.
    Done here rather than by the engines so both databases give the same snippet;
    accents are ignored when matching, like FTS5 does."""
    exact = {fold(w) for term in query.terms for w in term.words}
    prefixes = tuple(fold(term.words[-1]) for term in query.terms if term.prefix)
    marks: list[tuple[int, int]] = []
    for m in _word_pattern().finditer(text):
        if marks and m.start() >= marks[0][0] + SNIPPET_MAX_CHARS:
            break  # past any snippet the first mark can start
        word = fold(m.group())
        if word in exact or (bool(prefixes) and word.startswith(prefixes)):
            marks.append(m.span())
    start = 0
    if marks and marks[0][0] > SNIPPET_BEFORE_CHARS:
        start = _word_start(text, marks[0][0] - SNIPPET_BEFORE_CHARS)
    end = min(len(text), start + SNIPPET_MAX_CHARS)
    if end < len(text):
        end = _word_end(text, end)
    return Snippet(
        text=text[start:end],
        marks=tuple((s - start, e - start) for s, e in marks if s >= start and e <= end),
        cut_before=start > 0,
        cut_after=end < len(text),
    )


def _word_start(text: str, index: int) -> int:
    """``index`` moved forward past a word it falls inside."""
    while 0 < index < len(text) and text[index - 1].isalnum() and text[index].isalnum():
        index += 1
    return index


def _word_end(text: str, index: int) -> int:
    """``index`` moved back before a word it would cut."""
    while 0 < index < len(text) and text[index - 1].isalnum() and text[index].isalnum():
        index -= 1
    return index
