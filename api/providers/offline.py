"""The built-in offline provider: deterministic answers, no network, no key, no LiteLLM.

``OfflineTransport`` is the provider's transport, mounted by the registry for
the provider named ``offline`` (as httpx keeps a mock transport beside the
real one): everything above the registry sees it as any other provider. It
never imports LiteLLM, so a fresh server answers with these models at once
instead of waiting seconds for LiteLLM's import, and a server with only them
never imports it. It answers with the pure functions below; usage and token
counts are the documented estimate (4 characters a token, see ``usage``),
cost 0, and the context window is ``OFFLINE_CONTEXT_WINDOW`` tokens.

Two models:

``echo`` (chat) describes the context it received, which makes context
isolation visible. It reads the prompt layout of docs/architecture.md#the-prompt-layout: an
optional first
system message ("You are continuing a conversation.") with one block per
checkpoint headed ``Checkpoint [i] — <title> (<shortHash>)``, then the turn
window, then the new user message (always last). Its reply is four lines::

    Offline echo — mode: HEAD or MOUNTED (checkpoints received)
    Checkpoints (2): [1] Plan (a1b2c3d); [2] Schema (e4f5a6b)     ("Checkpoints (0): none")
    Earlier turns: 3 (2 from the user, 1 from the assistant)
    You asked: <the new message, whitespace collapsed, at most 200 characters>

and, only when it received them, the session's instructions (the system
message's text before "You are continuing a conversation.", collapsed, at most
200 characters) and parameters::

    Instructions: Answer as a pirate would.
    Parameters: temperature 0.3, top_p 0.9, max output tokens 200, stop "END", "##"

The reply itself ignores them: they are shown so a user (and a test) sees
what reached the model.

The messages carry checkpoints or they do not; they do not say whether the
checkpoints came from the branch head or from a mount, nor whether a session
without checkpoints has a space. So the first line names the modes that fit
what was received, in the design's words, and never contradicts the header
badge: "FRESH or HEAD (no checkpoint received)" when no checkpoint header was
found (FRESH, or HEAD on a branch with no checkpoint yet), "HEAD or MOUNTED
(checkpoints received)" otherwise.

``extractor`` (background) answers the two background requests, recognised by
their system message:

* "You write a short title for a conversation." → a plain title: the first
  sentence of the first user turn, cut to 8 words, trailing punctuation removed.
* anything else (normally "You extract a checkpoint from a conversation.") → a
  JSON object with a key for every checkpoint field (CONTENT_FIELDS), built
  from the transcript in the last user message (a list field without a
  heuristic below is empty).

The transcript format is turns separated by a blank line, each turn a header
line ``[USER #3]`` or ``[ASSISTANT #4]`` followed by its content lines. Text
without any header is read as a single user turn. Assistant turns that are the
echo model's own replies (their first line starts with "Offline echo —") are
skipped: they only describe the context, and are not part of the conversation.
The heuristics are deliberately simple and only ever copy text from the
transcript:

* title — as for the title request (8 words of the first user sentence);
* objective — the first sentence of the first user turn;
* summary — the first sentence of every turn, joined by spaces, cut to 600
  characters (ending in "…" when cut);
* decisions — sentences (any role) containing "we decided", "decided to",
  "let's go with", "we'll go with", "we will", "chose", "choose to" or
  "decision:" (case-insensitive, whole words), excluding questions and
  sentences that start with "if", "unless" or "whether" (hypotheticals);
* tasks — sentences starting with "TODO", "[ ]" (a "- [ ]" checkbox line),
  "task:", "need to" or "remember to"; the TODO / checkbox / task: marker is
  removed, the rest is kept as written;
* openQuestions — sentences of user turns that end with "?";
* entities — names, in order of first appearance, at most 20. A name is a run
  of capitalised words of two or more letters (no apostrophes) separated by
  single spaces ("New Zealand", "Kings Park"). The first word of a sentence is
  capitalised anyway, so a run that starts a sentence loses its first word
  ("Now", "Compare Rust" → "Rust") unless that word or the whole run also
  appears capitalised inside a sentence somewhere in the transcript ("New
  Zealand first." after "fly to New Zealand").

A sentence is a piece of a line ending in ".", "!" or "?" followed by
whitespace (or the end of the line); a leading list marker ("- ", "* ", "• ",
"1. ", "1) ") is not part of it. Whitespace inside a sentence is collapsed.
Lists are de-duplicated case-insensitively, keeping the first occurrence.
An empty transcript gives the title "Untitled conversation" and empty fields.
"""

from __future__ import annotations

import json
import math
import re
from asyncio import sleep
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..domain.prompt import PREAMBLE
from ..domain.types import CONTENT_FIELDS, ChatMessage, ModelParameters, Usage
from ..errors import ErrorCode, ProviderError
from .types import FINISHED, Completion, ModelRef, StreamChunk

OFFLINE_PROVIDER = "offline"
# The offline models' names as LiteLLM would see them ("smriti_offline/echo"),
# in ModelRef.litellm_model. A name of our own, so a provider LiteLLM might add
# one day cannot be mistaken for it; nothing routes by it (the registry mounts
# this transport by the provider's name).
OFFLINE_LITELLM_PROVIDER = "smriti_offline"
OFFLINE_CONTEXT_WINDOW = 32768
ECHO_MODEL = "echo"
EXTRACTOR_MODEL = "extractor"
OFFLINE_MODELS = (ECHO_MODEL, EXTRACTOR_MODEL)

TITLE_REQUEST_PREFIX = "You write a short title for a conversation."
EXTRACT_REQUEST_PREFIX = "You extract a checkpoint from a conversation."
DRAFT_KEYS = tuple(f.name for f in CONTENT_FIELDS)

QUESTION_LIMIT = 200
SUMMARY_LIMIT = 600
TITLE_WORDS = 8
ENTITY_LIMIT = 20
UNTITLED = "Untitled conversation"

_CHECKPOINT_HEADER = re.compile(r"^Checkpoint \[(\d+)\] \u2014 (.*) \(([^()]*)\)\s*$")
_TURN_HEADER = re.compile(r"^\[(USER|ASSISTANT) #\d+\]\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LIST_MARKER = re.compile(r"^(?:[-*\u2022]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['\u2019.\-][A-Za-z0-9]+)*")
_TASK_MARKER = re.compile(r"^(?:\[ \]|TODO\b:?|task:)\s*", re.IGNORECASE)
_TASK_PHRASE = re.compile(r"^(?:need to|remember to)\b", re.IGNORECASE)
_DECISION_PHRASE = re.compile(
    r"\b(?:we decided|decided to|let's go with|we'll go with|we will|chose|choose to)\b"
    r"|\bdecision:",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(r"^(?:if|unless|whether)\b", re.IGNORECASE)
_TRAILING_PUNCTUATION = ".,;:!?\u2026-\u2014\u2013 "
ECHO_PREFIX = "Offline echo \u2014"


# --- the transport ----------------------------------------------------------


class OfflineTransport:
    """The offline models behind the registry's ``Transport`` interface.

    ``stream_delay``: seconds between streamed pieces (Settings'
    ``offline_stream_delay_ms``), so a reply can be watched as it streams.
    """

    def __init__(self, *, stream_delay: float = 0.0) -> None:
        self.stream_delay = stream_delay

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> Completion:
        """The model's whole answer and its estimated usage, at cost 0. It always
        finishes (STOP): the offline models have no token limit to stop at."""
        text = _answer(ref, messages, parameters)
        prompt, completion = usage(messages, text)
        return Completion(
            text=text, usage=Usage(prompt, completion, 0.0), model=ref.name, finish=FINISHED
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        ref: ModelRef,
        *,
        api_key: str | None,
        parameters: ModelParameters | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """The answer in word pieces, ``stream_delay`` apart, then the usage chunk."""
        text = _answer(ref, messages, parameters)
        for index, piece in enumerate(p for p in stream_chunks(text) if p):
            if index and self.stream_delay > 0:
                await sleep(self.stream_delay)
            yield StreamChunk(delta=piece)
        prompt, completion = usage(messages, text)
        yield StreamChunk(delta="", usage=Usage(prompt, completion, 0.0), finish=FINISHED)

    def count_tokens(self, text: str, ref: ModelRef) -> int:
        """The estimate ``usage`` uses: 4 characters a token (no tokenizer, no LiteLLM)."""
        return math.ceil(len(text) / 4)

    def context_window(self, ref: ModelRef) -> int:
        return OFFLINE_CONTEXT_WINDOW

    def output_limit(self, ref: ModelRef) -> int:
        """The offline models write short answers; any limit within the window is kept."""
        return OFFLINE_CONTEXT_WINDOW


def _answer(
    ref: ModelRef, messages: Sequence[ChatMessage], parameters: ModelParameters | None
) -> str:
    try:
        text = answer(ref.model, messages)
        if ref.model == ECHO_MODEL:
            text += "".join(f"\n{line}" for line in _received(messages, parameters))
        return text
    except ValueError:
        raise ProviderError(
            f"{ref.name}: the offline provider has no such model", code=ErrorCode.UNKNOWN_MODEL
        ) from None


# --- the models -------------------------------------------------------------


def answer(model: str, messages: Sequence[ChatMessage]) -> str:
    """The reply of offline ``model`` ("echo" or "extractor") to ``messages``."""
    if model == EXTRACTOR_MODEL:
        return extract_draft(messages)
    if model == ECHO_MODEL:
        return echo_reply(messages)
    raise ValueError(f"the offline provider has no model {model!r}")


def usage(messages: Sequence[ChatMessage], text: str) -> tuple[int, int]:
    """(prompt, completion) tokens of an offline answer: the usual estimate.

    The offline models are not billed and have no tokenizer of their own: 4
    characters a token, plus 4 tokens of framing per message, because
    tokenizing a 200-turn prompt on every message would cost more than
    everything else sendMessage does.
    """
    chars = sum(len(m.content) for m in messages)
    return math.ceil(chars / 4) + 4 * len(messages), math.ceil(len(text) / 4)


# --- echo -----------------------------------------------------------------


def echo_reply(messages: Sequence[ChatMessage]) -> str:
    """Describe the context received: mode, checkpoints, earlier turns, question."""
    has_system = bool(messages) and messages[0].role == "system"
    rest = list(messages[1:] if has_system else messages)
    checkpoints = _checkpoint_headers(_text(messages[0])) if has_system else []
    question = _collapse(_text(rest[-1])) if rest else ""
    earlier = rest[:-1]
    from_user = sum(1 for m in earlier if m.role == "user")
    from_assistant = sum(1 for m in earlier if m.role == "assistant")

    listed = "; ".join(
        f"[{index}] {title} ({short_hash})" for index, title, short_hash in checkpoints
    )
    mode = (
        "HEAD or MOUNTED (checkpoints received)"
        if checkpoints
        else "FRESH or HEAD (no checkpoint received)"
    )
    return "\n".join(
        [
            f"{ECHO_PREFIX} mode: {mode}",
            f"Checkpoints ({len(checkpoints)}): {listed or 'none'}",
            f"Earlier turns: {len(earlier)} "
            f"({from_user} from the user, {from_assistant} from the assistant)",
            f"You asked: {_truncate(question, QUESTION_LIMIT)}",
        ]
    )


def _received(messages: Sequence[ChatMessage], parameters: ModelParameters | None) -> list[str]:
    """The echo's lines for the instructions and parameters it received, if any."""
    lines = []
    system = _text(messages[0]) if messages and messages[0].role == "system" else ""
    instructions = _collapse(system.partition(PREAMBLE)[0])
    if instructions:
        lines.append(f"Instructions: {_truncate(instructions, QUESTION_LIMIT)}")
    given = []
    if parameters is not None:
        if parameters.temperature is not None:
            given.append(f"temperature {parameters.temperature:g}")
        if parameters.top_p is not None:
            given.append(f"top_p {parameters.top_p:g}")
        if parameters.max_output_tokens is not None:
            given.append(f"max output tokens {parameters.max_output_tokens}")
        if parameters.stop:
            given.append("stop " + ", ".join(json.dumps(s) for s in parameters.stop))
    if given:
        lines.append(f"Parameters: {', '.join(given)}")
    return lines


def _checkpoint_headers(system: str) -> list[tuple[str, str, str]]:
    found = []
    for line in system.splitlines():
        match = _CHECKPOINT_HEADER.match(line.strip())
        if match:
            found.append((match.group(1), match.group(2).strip(), match.group(3)))
    return found


# --- extractor ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str  # "USER" | "ASSISTANT"
    text: str


def extract_draft(messages: Sequence[ChatMessage]) -> str:
    """Answer a background request: a plain title, or a checkpoint draft as JSON."""
    system = next((_text(m) for m in messages if m.role == "system"), "")
    transcript = next((_text(m) for m in reversed(messages) if m.role == "user"), "")
    turns = [t for t in _parse_transcript(transcript) if not _is_echo(t)]
    title = _title(turns)
    if system.lstrip().startswith(TITLE_REQUEST_PREFIX):
        return title
    return json.dumps(_draft(turns, title), ensure_ascii=False)


def _is_echo(turn: _Turn) -> bool:
    return turn.role == "ASSISTANT" and turn.text.startswith(ECHO_PREFIX)


def _parse_transcript(text: str) -> list[_Turn]:
    """Split the transcript into turns at ``[USER #n]`` / ``[ASSISTANT #n]`` header lines."""
    turns: list[_Turn] = []
    role: str | None = None
    lines: list[str] = []
    preamble: list[str] = []

    def flush() -> None:
        if role is not None:
            turns.append(_Turn(role, "\n".join(lines).strip()))

    for line in text.splitlines():
        header = _TURN_HEADER.match(line.strip())
        if header:
            flush()
            role, lines = header.group(1), []
        elif role is None:
            preamble.append(line)
        else:
            lines.append(line)
    flush()
    if role is None and "\n".join(preamble).strip():
        return [_Turn("USER", "\n".join(preamble).strip())]
    return turns


def _draft(turns: list[_Turn], title: str) -> dict[str, object]:
    first_user = next((t for t in turns if t.role == "USER"), None)
    firsts = [s[0] for s in (_sentences(t.text) for t in turns) if s]
    decisions: list[str] = []
    tasks: list[str] = []
    questions: list[str] = []
    for turn in turns:
        for sentence in _sentences(turn.text):
            if _is_decision(sentence):
                decisions.append(sentence)
            task = _task(sentence)
            if task:
                tasks.append(task)
            if turn.role == "USER" and sentence.endswith("?"):
                questions.append(sentence)
    entities = _entities([s for turn in turns for s in _sentences(turn.text)])
    objective_sentences = _sentences(first_user.text) if first_user else []
    found: dict[str, object] = {
        "title": title,
        "objective": objective_sentences[0] if objective_sentences else "",
        "summary": _truncate(" ".join(firsts), SUMMARY_LIMIT),
        "decisions": _dedupe(decisions),
        "tasks": _dedupe(tasks),
        "openQuestions": _dedupe(questions),
        "entities": _dedupe(entities)[:ENTITY_LIMIT],
    }
    # Every field of the registry, in its order: one without a heuristic
    # above is drafted empty.
    return {name: found.get(name, []) for name in DRAFT_KEYS}


def _title(turns: list[_Turn]) -> str:
    first_user = next((t for t in turns if t.role == "USER"), None)
    sentences = _sentences(first_user.text) if first_user else []
    if not sentences:
        return UNTITLED
    words = sentences[0].split()[:TITLE_WORDS]
    return " ".join(words).rstrip(_TRAILING_PUNCTUATION) or UNTITLED


def _sentences(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        line = _LIST_MARKER.sub("", line.strip(), count=1)
        for piece in _SENTENCE_END.split(line):
            piece = _collapse(piece)
            if piece:
                found.append(piece)
    return found


def _is_decision(sentence: str) -> bool:
    normalised = sentence.replace("\u2019", "'")
    return (
        bool(_DECISION_PHRASE.search(normalised))
        and not sentence.endswith("?")
        and not _HYPOTHETICAL.match(sentence)
    )


def _task(sentence: str) -> str | None:
    marker = _TASK_MARKER.match(sentence)
    if marker:
        rest = sentence[marker.end() :].strip()
        return rest or None
    if _TASK_PHRASE.match(sentence):
        return sentence
    return None


def _entities(sentences: list[str]) -> list[str]:
    """The names in ``sentences``, in order (see the module doc)."""
    runs = [run for sentence in sentences for run in _capitalised_runs(sentence)]
    inside = [words for words, first in runs if not first]
    known_names = {" ".join(words) for words in inside}
    known_words = {word for words in inside for word in words}
    names = []
    for words, first in runs:
        name = " ".join(words)
        if first and name not in known_names and words[0] not in known_words:
            # A capitalised first word is how sentences start, not a name.
            name = " ".join(words[1:])
        if name:
            names.append(name)
    return names


def _capitalised_runs(sentence: str) -> Iterator[tuple[list[str], bool]]:
    """Runs of capitalised words joined by single spaces, each with whether it
    starts the sentence."""
    run: list[str] = []
    starts = False
    previous_end: int | None = None
    for index, match in enumerate(_WORD.finditer(sentence)):
        word = match.group(0)
        joined = previous_end is not None and sentence[previous_end : match.start()] == " "
        if run and not (joined and _is_name_word(word)):
            yield run, starts
            run = []
        if _is_name_word(word):
            if not run:
                starts = index == 0
            run.append(word)
        previous_end = match.end()
    if run:
        yield run, starts


def _is_name_word(word: str) -> bool:
    return (
        word[0].isupper()
        and "'" not in word
        and "\u2019" not in word
        and sum(ch.isalpha() for ch in word) >= 2
    )


# --- streaming ------------------------------------------------------------


def stream_chunks(text: str) -> list[str]:
    """Split a reply into word-sized chunks, each with its leading whitespace.

    ``"".join(stream_chunks(text)) == text`` for every text.
    """
    return re.findall(r"\s*\S+|\s+", text)


# --- helpers --------------------------------------------------------------


def _text(message: ChatMessage) -> str:
    # Callers pass whatever a transport received; be lenient rather than fail.
    return message.content if isinstance(message.content, str) else ""


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _truncate(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its start plus "…" (``limit`` in all)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for item in items:
        key = item.casefold()
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept
